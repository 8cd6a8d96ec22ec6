/**
 * npm run bench:collections — N charge_automatically renewals through the billing run and the test
 * gateway.
 *
 * Seeds one tenant with 1 000 customers, each with a saved test card (tok_visa) as default, and N
 * active monthly charge_automatically subscriptions whose period ends at the run's instant (bulk
 * SQL). Then, timed: the billing run renews them (invoices, GST, numbers, ledger, events, and one
 * charge job per batch, committed with it) while the worker (started, as `kosh serve` runs it)
 * takes the charge jobs: per invoice an attempt committed pending, the gateway call, the payment,
 * the clearing → receivables entry and invoice.paid committed. The clock ends when every invoice
 * is paid. Checks: every invoice paid once, one succeeded attempt and one payment each, the test
 * gateway saw N charges, every journal entry balanced.
 *
 * Charge lag: the bench samples (every 250 ms) how many renewal invoices exist and how many are
 * paid; the k-th invoice's lag is when the paid count reached k minus when the issued count did
 * (first in, first out — an approximation to one sampling interval).
 * PostgreSQL when DATABASE_URL is set (a fresh database, dropped afterwards), else the embedded one.
 * LAST line: {"charged_per_s":…, "p99_charge_lag_ms":…, "peak_rss_mb":…}
 *   --n 20000   subscriptions     --batch 200   renewals per billing-run transaction
 *   --concurrency 8   charge jobs the worker runs at once
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { sql } from 'kysely';
import pg from 'pg';
import { pino } from 'pino';
import { createKosh } from '../src/app.js';
import { runBillingRun } from '../src/flows/subscriptions/run-billing.js';
import { ManualClock } from '../src/platform/clock.js';
import { loadConfig } from '../src/platform/config.js';
import { testGatewayJournal } from '../src/modules/collections/index.js';
import { openTestDatabase } from '../test/support/database.js';
import { seedDueSubscriptions } from '../test/subscriptions/seed.js';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

const N = arg('n', 20_000);
const BATCH = arg('batch', 200);
const CONCURRENCY = arg('concurrency', 8);
const NOW = new Date('2026-04-01T00:00:00Z');
const ANCHOR = new Date('2026-03-01T00:00:00Z');

/** CPU seconds of the PostgreSQL backends serving this database (/proc; the server runs on this machine), null when unreadable. */
async function databaseCpuSeconds(db: Parameters<typeof seedDueSubscriptions>[0]): Promise<number | null> {
  try {
    const { rows } = await sql<{ pid: number }>`SELECT pid FROM pg_stat_activity WHERE datname = current_database()`.execute(db);
    const ticks = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
    let total = 0;
    for (const { pid } of rows) {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      total += (Number(fields[11]) + Number(fields[12])) / ticks;
    }
    return total;
  } catch {
    return null;
  }
}

/**
 * Statements and commits sent to the database, by who sent them: the billing run ('billing'), the
 * worker's jobs ('worker'; the charge jobs, and the secondary-ledger and other jobs the renewals
 * queue) — counted on the wire (every pg.Client query, deferred writes included), not estimated.
 */
const phase = new AsyncLocalStorage<'billing' | 'worker' | 'sampler'>();
const wire = { billing: { statements: 0, commits: 0 }, worker: { statements: 0, commits: 0 }, sampler: { statements: 0, commits: 0 } };
let countingWire = false;
{
  const query = pg.Client.prototype.query as (...args: unknown[]) => unknown;
  (pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown }).query = function (this: pg.Client, ...args: unknown[]) {
    if (countingWire) {
      const tally = wire[phase.getStore() ?? 'worker'];
      tally.statements += 1;
      if (typeof args[0] === 'string' && /^\s*commit\b/i.test(args[0])) tally.commits += 1;
    }
    return query.apply(this, args);
  };
}

async function seed(db: Parameters<typeof seedDueSubscriptions>[0], n: number, customers: number): Promise<string> {
  const { tenantId } = await seedDueSubscriptions(db, { n, anchor: ANCHOR, due: NOW, customers });
  await sql`UPDATE subscriptions SET collection_method = 'charge_automatically' WHERE tenant_id = ${tenantId}`.execute(db);
  await sql`
    INSERT INTO payment_methods (tenant_id, id, customer_id, type, brand, last4, gateway, reference, is_default, created_at, updated_at)
    SELECT tenant_id, gen_random_uuid(), id, 'card', 'visa', '4242', 'test', 'tok_visa', true, ${ANCHOR}, ${ANCHOR} FROM customers WHERE tenant_id = ${tenantId}`.execute(
    db,
  );
  await sql`ANALYZE subscriptions, customers, payment_methods`.execute(db);
  return tenantId;
}

async function counts(db: Parameters<typeof seedDueSubscriptions>[0], tenantId: string): Promise<{ issued: number; paid: number }> {
  const { rows } = await sql<{ issued: number; paid: number }>`
    SELECT count(*)::int AS issued, count(*) FILTER (WHERE status = 'paid')::int AS paid
    FROM invoices WHERE tenant_id = ${tenantId} AND billing_reason = 'subscription_cycle'`.execute(db);
  return rows[0]!;
}

async function main() {
  const database = await openTestDatabase();
  if (process.env.BENCH_SLOW_MS)
    await sql
      .raw(`ALTER DATABASE "${new URL(database.url!).pathname.slice(1)}" SET log_min_duration_statement = ${Number(process.env.BENCH_SLOW_MS)}`)
      .execute(database.db);
  const pool = database.kind === 'postgres' ? CONCURRENCY + 4 : 1;
  const clock = new ManualClock(NOW.toISOString());
  const kosh = await createKosh({
    config: loadConfig({ LOG_LEVEL: 'silent', KOSH_DB_POOL_SIZE: String(pool), KOSH_WORKER_POLL_MS: '50', KOSH_WORKER_CONCURRENCY: String(CONCURRENCY) }),
    database,
    clock,
    logger: pino({ level: 'silent' }),
  });
  const db = database.db;
  const journal = testGatewayJournal(kosh.deps.scope, 'memory:');
  try {
    // Warm-up, untimed (see bench:billing): another tenant's renewals and charges, then ANALYZE.
    const warm = await seed(db, 1_000, 100);
    await runBillingRun(db, NOW, { batchSize: BATCH });
    await kosh.worker.drain();
    if ((await counts(db, warm)).paid !== 1_000) throw new Error('warm-up did not charge every invoice');
    await sql`ANALYZE`.execute(db);
    const chargesBefore = journal.allCharges().length;

    const tenantId = await seed(db, N, 1_000);
    console.log(`storage: ${database.kind}; seeded ${N} due charge_automatically subscriptions`);

    const samples: { t: number; issued: number; paid: number }[] = [];
    const dbCpuBefore = database.kind === 'postgres' ? await databaseCpuSeconds(db) : null;
    const appCpuBefore = process.cpuUsage();
    const started = performance.now();
    countingWire = true;
    phase.run('worker', () => kosh.worker.start());
    const run = phase.run('billing', () => runBillingRun(db, NOW, { batchSize: BATCH }));
    for (;;) {
      const c = await phase.run('sampler', () => counts(db, tenantId));
      samples.push({ t: performance.now() - started, ...c });
      if (c.paid >= N) break;
      if (performance.now() - started > 900_000) throw new Error(`timed out: ${JSON.stringify(c)}`);
      await new Promise((r) => setTimeout(r, 250));
    }
    const seconds = (performance.now() - started) / 1000;
    const appCpu = process.cpuUsage(appCpuBefore);
    const dbCpuAfter = database.kind === 'postgres' ? await databaseCpuSeconds(db) : null;
    const report = await run;
    await kosh.worker.stop();
    countingWire = false;

    const when = (k: number, key: 'issued' | 'paid') => samples.find((s) => s[key] >= k)!.t;
    const lags: number[] = [];
    for (let k = 1; k <= N; k += Math.max(1, Math.floor(N / 2000))) lags.push(when(k, 'paid') - when(k, 'issued'));
    lags.sort((a, b) => a - b);
    const p99 = lags[Math.min(lags.length - 1, Math.floor(lags.length * 0.99))]!;

    // The tables grew by N invoices' rows since the last ANALYZE: fresh statistics keep the check's plan sane.
    await sql`ANALYZE payment_attempts, payments, journal_entries, journal_lines`.execute(db);
    const { rows } = await sql<{ attempts: number; payments: number; unbalanced: number }>`
      SELECT
        (SELECT count(*)::int FROM payment_attempts WHERE tenant_id = ${tenantId} AND status = 'succeeded') AS attempts,
        (SELECT count(*)::int FROM payments WHERE tenant_id = ${tenantId} AND gateway = 'test') AS payments,
        (SELECT count(*)::int FROM (SELECT e.id FROM journal_entries e JOIN journal_lines l ON l.tenant_id = e.tenant_id AND l.entry_id = e.id
          WHERE e.tenant_id = ${tenantId} GROUP BY e.id HAVING sum(l.debit) <> sum(l.credit)) u) AS unbalanced`.execute(db);
    const check = rows[0]!;
    const charges = journal.allCharges().length - chargesBefore;
    const ok = report.renewed === N && check.attempts === N && check.payments === N && check.unbalanced === 0 && charges === N;
    const peakRssMb = Math.round(process.resourceUsage().maxRSS / 1024);
    console.log(
      `renewed ${report.renewed}, charged ${check.attempts} (payments ${check.payments}, gateway charges ${charges}, unbalanced entries ${check.unbalanced}) ` +
        `in ${seconds.toFixed(2)} s: ${(N / seconds).toFixed(0)} charged/s, p99 charge lag ${p99.toFixed(0)} ms, peak RSS ${peakRssMb} MB — ${ok ? 'checks passed' : 'CHECKS FAILED'}`,
    );
    const appMs = (appCpu.user + appCpu.system) / 1000;
    const dbMs = dbCpuBefore !== null && dbCpuAfter !== null ? (dbCpuAfter - dbCpuBefore) * 1000 : null;
    // CPU per renewal+charge does not depend on what else the machine is doing, unlike the wall clock.
    console.log(
      `CPU per renewal and charge: app ${(appMs / N).toFixed(3)} ms` +
        (dbMs !== null
          ? `, PostgreSQL backends ${(dbMs / N).toFixed(3)} ms → at most ~${Math.round(1000 / ((appMs + dbMs) / N))}/s on one otherwise idle core pair`
          : ''),
    );
    if (database.kind === 'postgres')
      console.log(
        `on the wire per invoice: billing run ${(wire.billing.statements / N).toFixed(2)} statements, ${(wire.billing.commits / N).toFixed(3)} commits; ` +
          `worker (charge jobs and the jobs renewals queue) ${(wire.worker.statements / N).toFixed(2)} statements, ${(wire.worker.commits / N).toFixed(3)} commits`,
      );
    console.log(JSON.stringify({ charged_per_s: Math.round(N / seconds), p99_charge_lag_ms: Math.round(p99), peak_rss_mb: peakRssMb }));
    if (!ok) process.exitCode = 1;
  } finally {
    await kosh.close();
    await database.close();
  }
}

await main();
