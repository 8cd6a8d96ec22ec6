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
 *   --warmup 2000    renewals of another tenant first, untimed, then ANALYZE (see below)
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { sql, type Kysely } from 'kysely';
import { pino } from 'pino';
import type { DB } from '../src/platform/db/schema.js';
import { createKosh } from '../src/app.js';
import { runBillingRun } from '../src/flows/subscriptions/run-billing.js';
import { loadConfig } from '../src/platform/config.js';
import { openTestDatabase } from '../test/support/database.js';
import { checkBilling, seedDueSubscriptions } from '../test/subscriptions/seed.js';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

const N = arg('n', 10_000);
const BATCH = arg('batch', 200);
const WORKERS = arg('workers', 1);
const CUSTOMERS = 1_000;
const WARMUP = arg('warmup', 2_000);
const NOW = new Date('2026-04-01T00:00:00Z');
const ANCHOR = new Date('2026-03-01T00:00:00Z');

/**
 * CPU seconds used so far by the PostgreSQL backends serving this database, read from /proc (the
 * server runs on this machine in the bench setup); null when that is not possible.
 */
async function databaseCpuSeconds(db: Kysely<DB>): Promise<number | null> {
  try {
    const { rows } = await sql<{ pid: number }>`SELECT pid FROM pg_stat_activity WHERE datname = current_database()`.execute(db);
    const ticks = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
    let total = 0;
    for (const { pid } of rows) {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      total += (Number(fields[11]) + Number(fields[12])) / ticks; // utime, stime
    }
    return total;
  } catch {
    return null;
  }
}

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
    // Warm-up, untimed: another tenant's run of WARMUP renewals, then ANALYZE — as autovacuum
    // would soon do on a live database. On brand-new empty tables the foreign-key checks are
    // planned as table scans and stay so until statistics exist (autovacuum's first pass comes
    // up to a minute later): the measured run would be charged for an empty database's first minute.
    await seedDueSubscriptions(db, { n: WARMUP, anchor: ANCHOR, due: NOW, customers: 100 });
    await runBillingRun(db, NOW, { batchSize: BATCH });
    await sql`ANALYZE`.execute(db);

    const seedStarted = performance.now();
    const { tenantId } = await seedDueSubscriptions(db, { n: N, anchor: ANCHOR, due: NOW, customers: CUSTOMERS });
    console.log(`storage: ${database.kind}; seeded ${N} due subscriptions in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s`);

    // The embedded database runs inside this process: its CPU is in the app's figure.
    const dbCpuBefore = database.kind === 'postgres' ? await databaseCpuSeconds(db) : null;
    const appCpuBefore = process.cpuUsage();
    const started = performance.now();
    const reports = await Promise.all(Array.from({ length: WORKERS }, () => runBillingRun(db, NOW, { batchSize: BATCH })));
    const seconds = (performance.now() - started) / 1000;
    const appCpu = process.cpuUsage(appCpuBefore);
    const appMs = (appCpu.user + appCpu.system) / 1000;
    const dbCpuAfter = database.kind === 'postgres' ? await databaseCpuSeconds(db) : null;
    const renewed = reports.reduce((n, r) => n + r.renewed, 0);
    const failed = reports.reduce((n, r) => n + r.failed, 0);

    console.log(`billing run: ${renewed} renewed, ${failed} failed in ${seconds.toFixed(2)} s; checking…`);
    // Exactly once, gapless, balanced (fresh statistics first: the check joins the new rows).
    await sql`ANALYZE`.execute(db);
    const c = await checkBilling(db, tenantId, NOW);
    const ok =
      renewed === N &&
      failed === 0 &&
      c.invoices === N &&
      c.distinctPeriods === N &&
      c.subscriptionsMoved === N &&
      c.minNumber === 1 &&
      c.maxNumber === N &&
      c.unbalancedEntries === 0;
    const peakRssMb = Math.round(process.resourceUsage().maxRSS / 1024);
    console.log(
      `renewed ${renewed} (failed ${failed}) in ${seconds.toFixed(2)} s with ${WORKERS} worker(s), batch ${BATCH}: ` +
        `${(renewed / seconds).toFixed(0)} renewals/s; invoices ${c.invoices}, numbers ${c.minNumber}..${c.maxNumber}, unbalanced entries ${c.unbalancedEntries}; ` +
        `peak RSS ${peakRssMb} MB — ${ok ? 'checks passed' : 'CHECKS FAILED'}`,
    );
    // CPU per renewal does not depend on what else the machine is doing, unlike the wall clock.
    const dbMs = dbCpuBefore !== null && dbCpuAfter !== null ? (dbCpuAfter - dbCpuBefore) * 1000 : null;
    console.log(
      `CPU per renewal: app${database.kind === 'pglite' ? ' (with the embedded database)' : ''} ${(appMs / N).toFixed(3)} ms` +
        (dbMs !== null
          ? `, PostgreSQL backends ${(dbMs / N).toFixed(3)} ms → at most ~${Math.round(1000 / ((appMs + dbMs) / N))} renewals/s on one otherwise idle core pair`
          : ''),
    );
    console.log(
      JSON.stringify({ subscriptions: N, seconds: Number(seconds.toFixed(2)), invoices_per_s: Math.round(renewed / seconds), peak_rss_mb: peakRssMb }),
    );
    if (!ok) process.exitCode = 1;
  } finally {
    await kosh.close();
    await database.close();
  }
}

await main();
