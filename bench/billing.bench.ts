/**
 * npm run bench:billing — the billing run over N due subscriptions.
 *
 * Seeds one tenant (Karnataka entity), 1 000 customers (half in Karnataka: CGST + SGST, half in
 * Maharashtra: IGST) and N active monthly subscriptions whose period ends at the run's instant,
 * with bulk SQL (fast). Then runs the billing run (`runBillingRun`, what the job runs) and
 * measures it: each renewal is an invoice with its GST line, a gapless number, a balanced ledger
 * entry, events (invoice.created, invoice.finalized, subscription.renewed) and the period moved.
 * PostgreSQL when DATABASE_URL is set (a fresh database, dropped afterwards), else the embedded
 * database. Checks that every subscription was invoiced exactly once and the numbers are gapless.
 * Prints the figures, then LAST one JSON line:
 *   {"subscriptions":N, "seconds":…, "invoices_per_s":…, "peak_rss_mb":…}
 *   --n 10000        subscriptions (default 10 000)
 *   --batch 200      renewals per transaction
 *   --workers 1      billing runs in parallel (they share the work through SKIP LOCKED)
 */
import { sql } from 'kysely';
import { pino } from 'pino';
import { createKosh } from '../src/app.js';
import { registerTenant } from '../src/flows/register-tenant.js';
import { runBillingRun } from '../src/flows/run-billing.js';
import { loadConfig } from '../src/platform/config.js';
import { gstinCheckCharacter } from '../src/modules/tax/index.js';
import { openTestDatabase } from '../test/support/database.js';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

const N = arg('n', 10_000);
const BATCH = arg('batch', 200);
const WORKERS = arg('workers', 1);
const CUSTOMERS = 1_000;
const NOW = new Date('2026-04-01T00:00:00Z');
const ANCHOR = new Date('2026-03-01T00:00:00Z');

async function main() {
  const database = await openTestDatabase();
  const poolSize = database.kind === 'postgres' ? WORKERS + 2 : 1;
  const kosh = await createKosh({
    config: loadConfig({ LOG_LEVEL: 'silent', KOSH_DB_POOL_SIZE: String(poolSize) }),
    database,
    logger: pino({ level: 'silent' }),
  });
  const db = database.db;
  try {
    const base = '29AAACA1234A1Z';
    const { tenant } = await registerTenant(
      db,
      ANCHOR,
      { name: 'Bench', email: 'bench@kosh.test', base_currency: 'INR', data_region: 'in', country_code: 'IN', gstin: base + gstinCheckCharacter(base), invoice_prefix: 'INV-' },
      'test',
    );
    const seedStarted = performance.now();
    await sql`
      INSERT INTO plans (tenant_id, id, name, code, interval_unit, interval_count, hsn_code, created_at, updated_at)
      VALUES (${tenant.id}, gen_random_uuid(), 'Bench monthly', 'bench-monthly', 'month', 1, '998314', ${ANCHOR}, ${ANCHOR})`.execute(db);
    await sql`
      INSERT INTO prices (tenant_id, id, plan_id, currency, amount, created_at)
      SELECT tenant_id, gen_random_uuid(), id, 'INR', 49900, ${ANCHOR} FROM plans WHERE tenant_id = ${tenant.id}`.execute(db);
    await sql`
      INSERT INTO customers (tenant_id, id, email, name, billing_address, created_at, updated_at)
      SELECT ${tenant.id}, gen_random_uuid(), 'c' || i || '@bench.test', 'Customer ' || i,
             jsonb_build_object('state_code', CASE WHEN i % 2 = 0 THEN '29' ELSE '27' END, 'country', 'IN'), ${ANCHOR}, ${ANCHOR}
      FROM generate_series(1, ${CUSTOMERS}) AS i`.execute(db);
    await sql`
      INSERT INTO subscriptions (tenant_id, id, customer_id, plan_id, currency, quantity, status, interval_unit, interval_count,
                                 billing_anchor, period_index, current_period_start, current_period_end, created_at, updated_at)
      SELECT ${tenant.id}, gen_random_uuid(), c.id, p.id, 'INR', 1 + (i % 3), 'active', 'month', 1,
             ${ANCHOR}, 0, ${ANCHOR}, ${NOW}, ${ANCHOR}, ${ANCHOR}
      FROM generate_series(1, ${N}) AS i
      JOIN (SELECT id, row_number() OVER (ORDER BY id) - 1 AS k FROM customers WHERE tenant_id = ${tenant.id}) AS c ON c.k = i % ${CUSTOMERS}
      CROSS JOIN (SELECT id FROM plans WHERE tenant_id = ${tenant.id}) AS p`.execute(db);
    await sql`ANALYZE`.execute(db);
    console.log(`storage: ${database.kind}; seeded ${N} due subscriptions in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s`);

    const started = performance.now();
    const reports = await Promise.all(Array.from({ length: WORKERS }, () => runBillingRun(db, NOW, { batchSize: BATCH })));
    const seconds = (performance.now() - started) / 1000;
    const renewed = reports.reduce((n, r) => n + r.renewed, 0);
    const failed = reports.reduce((n, r) => n + r.failed, 0);

    // Exactly once, gapless, balanced.
    const check = await sql<{ invoices: number; distinct_periods: number; min_seq: number; max_seq: number; unbalanced: number }>`
      SELECT count(*)::int AS invoices,
             count(DISTINCT (subscription_id, period_start))::int AS distinct_periods,
             min(right(number, 6)::int) AS min_seq, max(right(number, 6)::int) AS max_seq,
             (SELECT count(*)::int FROM (
                SELECT e.id FROM journal_entries e JOIN journal_lines l ON l.tenant_id = e.tenant_id AND l.entry_id = e.id
                WHERE e.tenant_id = ${tenant.id} GROUP BY e.id HAVING sum(l.debit) <> sum(l.credit)) AS u) AS unbalanced
      FROM invoices WHERE tenant_id = ${tenant.id} AND billing_reason = 'subscription_cycle'`.execute(db);
    const c = check.rows[0]!;
    const ok = renewed === N && failed === 0 && c.invoices === N && c.distinct_periods === N && c.max_seq - c.min_seq + 1 === N && c.unbalanced === 0;
    const peakRssMb = Math.round(process.resourceUsage().maxRSS / 1024);
    console.log(
      `renewed ${renewed} (failed ${failed}) in ${seconds.toFixed(2)} s with ${WORKERS} worker(s), batch ${BATCH}: ` +
        `${(renewed / seconds).toFixed(0)} renewals/s; invoices ${c.invoices}, numbers ${c.min_seq}..${c.max_seq}, unbalanced entries ${c.unbalanced}; ` +
        `peak RSS ${peakRssMb} MB — ${ok ? 'checks passed' : 'CHECKS FAILED'}`,
    );
    console.log(JSON.stringify({ subscriptions: N, seconds: Number(seconds.toFixed(2)), invoices_per_s: Math.round(renewed / seconds), peak_rss_mb: peakRssMb }));
    if (!ok) process.exitCode = 1;
  } finally {
    await kosh.close();
    await database.close();
  }
}

await main();
