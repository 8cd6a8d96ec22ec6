/**
 * npm run bench:consolidation — the billing run over N children billed to P parents (decision 0550).
 *
 * Seeds one tenant (Karnataka entity) with N customers, one due monthly subscription each (bulk
 * SQL, as bench:billing), and P parents (half in Karnataka, half in Maharashtra); child k is billed
 * to parent k mod P (bill_to 'parent'). Then runs the billing run (`runBillingRun`, what the job
 * runs) and measures it: every child's renewal becomes a line naming the child and subscription on
 * its parent's one consolidated invoice for the period (GST at the parent's place of supply, a
 * gapless number, a balanced ledger entry, events), and every subscription moves to its next period.
 * PostgreSQL when DATABASE_URL is set (a fresh database, dropped afterwards), else the embedded
 * database. Checks: P invoices, numbers 1..P, N lines each naming a child and its subscription,
 * every child's latest invoice its parent's, subtotals = Σ quantity × 499.00, 0 unbalanced entries.
 * Prints the figures, then LAST one JSON line:
 *   {"children":N, "parents":P, "seconds":…, "children_per_s":…, "invoices":…, "peak_rss_mb":…}
 *   --n 10000        children (default 10 000), one subscription each
 *   --parents 100    parents (default 100)
 *   --batch 50       renewals claimed per transaction (the siblings of its children join it)
 *   --warmup 2000    renewals of another tenant first, untimed, then ANALYZE (see bench:billing)
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { sql, type Kysely } from 'kysely';
import type { DB } from '../src/platform/db/schema.js';
import { pino } from 'pino';
import { createKosh } from '../src/app.js';
import { runBillingRun } from '../src/flows/subscriptions/run-billing.js';
import { loadConfig } from '../src/platform/config.js';
import { openTestDatabase } from '../test/support/database.js';
import { seedDueSubscriptions } from '../test/subscriptions/seed.js';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

const N = arg('n', 10_000);
const PARENTS = arg('parents', 100);
const BATCH = arg('batch', 50);
const WARMUP = arg('warmup', 2_000);
const NOW = new Date('2026-04-01T00:00:00Z');
const ANCHOR = new Date('2026-03-01T00:00:00Z');

/** CPU seconds used so far by the PostgreSQL backends serving this database (as bench:billing); null when not readable. */
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
  const kosh = await createKosh({
    config: loadConfig({ LOG_LEVEL: 'silent', KOSH_DB_POOL_SIZE: database.kind === 'postgres' ? '3' : '1' }),
    database,
    logger: pino({ level: 'silent' }),
  });
  const db = database.db;
  try {
    await seedDueSubscriptions(db, { n: WARMUP, anchor: ANCHOR, due: NOW, customers: 100 });
    await runBillingRun(db, NOW, { batchSize: BATCH });
    await sql`ANALYZE`.execute(db);

    const seedStarted = performance.now();
    const { tenantId } = await seedDueSubscriptions(db, { n: N, anchor: ANCHOR, due: NOW, customers: N });
    await sql`
      INSERT INTO customers (tenant_id, id, email, name, billing_address, created_at, updated_at)
      SELECT ${tenantId}, gen_random_uuid(), 'parent' || i || '@seed.test', 'Parent ' || i,
             jsonb_build_object('state_code', CASE WHEN i % 2 = 0 THEN '29' ELSE '27' END, 'country', 'IN'), ${ANCHOR}, ${ANCHOR}
      FROM generate_series(1, ${PARENTS}) AS i`.execute(db);
    await sql`
      WITH parents AS (SELECT id, row_number() OVER (ORDER BY id) - 1 AS k FROM customers WHERE tenant_id = ${tenantId} AND email LIKE 'parent%'),
           children AS (SELECT id, row_number() OVER (ORDER BY id) - 1 AS k FROM customers WHERE tenant_id = ${tenantId} AND email NOT LIKE 'parent%')
      UPDATE customers c SET parent_customer_id = p.id, bill_to = 'parent'
        FROM children ch JOIN parents p ON p.k = ch.k % ${PARENTS}
       WHERE c.tenant_id = ${tenantId} AND c.id = ch.id`.execute(db);
    await sql`ANALYZE customers`.execute(db);
    console.log(`storage: ${database.kind}; seeded ${N} children under ${PARENTS} parents in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s`);

    const dbCpuBefore = database.kind === 'postgres' ? await databaseCpuSeconds(db) : null;
    const appCpuBefore = process.cpuUsage();
    const started = performance.now();
    const report = await runBillingRun(db, NOW, { batchSize: BATCH });
    const seconds = (performance.now() - started) / 1000;
    const appCpu = process.cpuUsage(appCpuBefore);
    const appMs = (appCpu.user + appCpu.system) / 1000;
    const dbCpuAfter = database.kind === 'postgres' ? await databaseCpuSeconds(db) : null;
    const dbMs = dbCpuBefore !== null && dbCpuAfter !== null ? (dbCpuAfter - dbCpuBefore) * 1000 : null;
    // CPU per child does not depend on what else the machine is doing, unlike the wall clock.
    console.log(
      `CPU per child: app${database.kind === 'pglite' ? ' (with the embedded database)' : ''} ${(appMs / N).toFixed(3)} ms` +
        (dbMs !== null
          ? `, PostgreSQL backends ${(dbMs / N).toFixed(3)} ms → at most ~${Math.round(1000 / ((appMs + dbMs) / N))} children/s on one otherwise idle core pair`
          : ''),
    );
    console.log(`billing run: ${report.renewed} renewed, ${report.failed} failed in ${seconds.toFixed(2)} s; checking…`);

    const { rows } = await sql<{
      invoices: number;
      toParents: number;
      minNumber: number | null;
      maxNumber: number | null;
      lines: number;
      namedLines: number;
      latestOfParent: number;
      subtotal: number;
      expected: number;
      unbalanced: number;
    }>`
      SELECT
        (SELECT count(*)::int FROM invoices WHERE tenant_id = ${tenantId} AND billing_reason = 'subscription_cycle') AS "invoices",
        (SELECT count(*)::int FROM invoices i JOIN customers p ON p.tenant_id = i.tenant_id AND p.id = i.customer_id
          WHERE i.tenant_id = ${tenantId} AND i.billing_reason = 'subscription_cycle' AND p.parent_customer_id IS NULL AND p.email LIKE 'parent%') AS "toParents",
        (SELECT min(right(number, 6)::int) FROM invoices WHERE tenant_id = ${tenantId} AND number IS NOT NULL) AS "minNumber",
        (SELECT max(right(number, 6)::int) FROM invoices WHERE tenant_id = ${tenantId} AND number IS NOT NULL) AS "maxNumber",
        (SELECT count(*)::int FROM invoice_lines WHERE tenant_id = ${tenantId}) AS "lines",
        (SELECT count(*)::int FROM invoice_lines l JOIN subscriptions s ON s.tenant_id = l.tenant_id AND s.id = l.subscription_id AND s.customer_id = l.customer_id
          JOIN customers c ON c.tenant_id = s.tenant_id AND c.id = s.customer_id
          WHERE l.tenant_id = ${tenantId} AND l.description LIKE c.name || ': %') AS "namedLines",
        (SELECT count(*)::int FROM subscriptions s JOIN customers c ON c.tenant_id = s.tenant_id AND c.id = s.customer_id
          JOIN invoices i ON i.tenant_id = s.tenant_id AND i.id = s.latest_invoice_id
          WHERE s.tenant_id = ${tenantId} AND i.customer_id = c.parent_customer_id AND s.period_index = 1) AS "latestOfParent",
        (SELECT coalesce(sum(subtotal), 0)::bigint FROM invoices WHERE tenant_id = ${tenantId}) AS "subtotal",
        (SELECT coalesce(sum(quantity), 0)::bigint * 49900 FROM subscriptions WHERE tenant_id = ${tenantId}) AS "expected",
        (SELECT count(*)::int FROM (
           SELECT e.id FROM journal_entries e LEFT JOIN journal_lines l ON l.tenant_id = e.tenant_id AND l.entry_id = e.id
           WHERE e.tenant_id = ${tenantId} GROUP BY e.id HAVING coalesce(sum(l.debit), 0) <> coalesce(sum(l.credit), 0) OR count(l.id) < 2) AS u) AS "unbalanced"`.execute(
      db,
    );
    const c = rows[0]!;
    const ok =
      report.renewed === N &&
      report.failed === 0 &&
      c.invoices === PARENTS &&
      c.toParents === PARENTS &&
      c.minNumber === 1 &&
      c.maxNumber === PARENTS &&
      c.lines === N &&
      c.namedLines === N &&
      c.latestOfParent === N &&
      Number(c.subtotal) === Number(c.expected) &&
      c.unbalanced === 0;
    const peakRssMb = Math.round(process.resourceUsage().maxRSS / 1024);
    console.log(
      `${report.renewed} children renewed onto ${c.invoices} consolidated invoices (numbers ${c.minNumber}..${c.maxNumber}) in ${seconds.toFixed(2)} s, batch ${BATCH}: ` +
        `${(report.renewed / seconds).toFixed(0)} children/s; lines ${c.lines} (${c.namedLines} naming child and subscription), subtotal ${c.subtotal} of ${c.expected}, ` +
        `unbalanced entries ${c.unbalanced}; peak RSS ${peakRssMb} MB — ${ok ? 'checks passed' : 'CHECKS FAILED'}`,
    );
    console.log(
      JSON.stringify({
        children: N,
        parents: PARENTS,
        seconds: Number(seconds.toFixed(2)),
        children_per_s: Math.round(report.renewed / seconds),
        invoices: c.invoices,
        peak_rss_mb: peakRssMb,
      }),
    );
    if (!ok) process.exitCode = 1;
  } finally {
    await kosh.close();
    await database.close();
  }
}

await main();
