/**
 * npm run bench:import — writes an import document of 1 000 plans, 100 000 customers and 100 000
 * subscriptions to a temp dir (streaming), imports it (SPEC 4.17) and runs the compare gate over it.
 * PostgreSQL when DATABASE_URL is set (a fresh database, dropped afterwards), else the embedded
 * database (a data directory in the temp dir). Last line: one JSON object. Targets: ≥ 5 000
 * records/s, peak RSS < 500 MB (rss_before_import_mb: what PGlite alone holds, on the embedded one).
 *   --scale 0.1      a tenth of the records, for a quick run
 *   --batch-size 500 records per transaction
 */
import { once } from 'node:events';
import { createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { registerTenant } from '../src/flows/tenants/register-tenant.js';
import { compareImport, jsonFileSource, runImport } from '../src/modules/importer/index.js';
import { openDatabase } from '../src/platform/db/database.js';
import { migrate } from '../src/platform/db/migrate.js';
import { openTestDatabase } from '../test/support/database.js';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

const SCALE = arg('scale', 1);
const BATCH_SIZE = arg('batch-size', 500);
const PLANS = Math.max(1, Math.round(1_000 * SCALE));
const CUSTOMERS = Math.max(1, Math.round(100_000 * SCALE));
const SUBSCRIPTIONS = Math.max(1, Math.round(100_000 * SCALE));
const STATUSES = ['active', 'active', 'active', 'active', 'trialing', 'paused', 'canceled', 'past_due', 'unpaid'];
const DAY = 86_400_000;

/** The document, written line by line with backpressure: never more than a buffer in memory. */
async function writeDocument(path: string): Promise<void> {
  const out = createWriteStream(path);
  const write = async (text: string) => {
    if (!out.write(text)) await once(out, 'drain');
  };
  const base = Date.UTC(2026, 5, 1);
  await write('{\n"plans": [\n');
  for (let i = 0; i < PLANS; i++) {
    const plan = {
      code: `plan-${i}`,
      name: `Plan ${i}`,
      interval_unit: i % 10 === 0 ? 'year' : 'month',
      interval_count: 1,
      amount: 10_000 + i * 100,
      currency: 'INR',
    };
    await write(`${i ? ',\n' : ''}${JSON.stringify(plan)}`);
  }
  await write('\n],\n"customers": [\n');
  for (let i = 0; i < CUSTOMERS; i++) {
    const customer = {
      email: `customer-${i}@bench.example`,
      name: `Customer ${i}`,
      external_id: `cus_${i}`,
      ...(i % 4 === 0 ? { billing_address: { line1: `${i} MG Road`, city: 'Bengaluru', state_code: '29', postal_code: '560001', country: 'IN' } } : {}),
    };
    await write(`${i ? ',\n' : ''}${JSON.stringify(customer)}`);
  }
  await write('\n],\n"subscriptions": [\n');
  for (let i = 0; i < SUBSCRIPTIONS; i++) {
    const end = base + (i % 28) * DAY;
    const subscription = {
      external_id: `sub_${i}`,
      customer_email: `customer-${i % CUSTOMERS}@bench.example`,
      plan_code: `plan-${i % PLANS}`,
      status: STATUSES[i % STATUSES.length],
      current_period_start: new Date(end - 30 * DAY).toISOString(),
      current_period_end: new Date(end).toISOString(),
      cancel_at_period_end: i % 50 === 0,
    };
    await write(`${i ? ',\n' : ''}${JSON.stringify(subscription)}`);
  }
  await write('\n]\n}\n');
  out.end();
  await once(out, 'finish');
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'kosh-bench-import-'));
  const path = join(dir, 'import.json');
  // Embedded: a data directory on disk, as `kosh import` uses (not the in-memory test database,
  // whose data would sit in this process's memory and be counted as the importer's).
  const database = process.env.DATABASE_URL ? await openTestDatabase() : await openDatabase({ dataDir: join(dir, 'data') });
  if (database.kind === 'pglite') await migrate(database.pool);
  try {
    const records = PLANS + CUSTOMERS + SUBSCRIPTIONS;
    let started = performance.now();
    await writeDocument(path);
    console.log(`wrote ${records} records (${(statSync(path).size / 1e6).toFixed(1)} MB) in ${((performance.now() - started) / 1000).toFixed(1)} s`);

    const { tenant } = await registerTenant(
      database.db,
      new Date(),
      { name: 'Bench', email: 'bench@kosh.test', base_currency: 'INR', data_region: 'in', country_code: 'IN', invoice_prefix: 'BENCH-' } as never,
      'test',
    );
    console.log(
      `${database.kind}: importing (batches of ${BATCH_SIZE}); load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
    // What the process holds before the import starts (PGlite's own heap, on the embedded database).
    const baselineRss = process.memoryUsage().rss;
    let lastLine = 0;
    started = performance.now();
    const report = await runImport(database.db, tenant.id, jsonFileSource(path), {
      now: () => new Date(),
      batchSize: BATCH_SIZE,
      onProgress: (p) => {
        if (performance.now() - lastLine < 5000 && !p.finished) return;
        lastLine = performance.now();
        console.log(`  ${p.section}: ${p.rows} rows${p.finished ? ' (done)' : ''}`);
      },
    });
    const importSeconds = (performance.now() - started) / 1000;
    const created = report.created.plans + report.created.customers + report.created.subscriptions;
    if (created !== records || report.failed.length) throw new Error(`import incomplete: ${JSON.stringify({ ...report, failed: report.failed.slice(0, 5) })}`);

    started = performance.now();
    const comparison = await database.db
      .transaction()
      .setIsolationLevel('repeatable read')
      .setAccessMode('read only')
      .execute((tx) => compareImport({ tx, tenantId: tenant.id, now: new Date() }, jsonFileSource(path)));
    const compareSeconds = (performance.now() - started) / 1000;
    if (!comparison.ready) throw new Error(`compare not ready: ${JSON.stringify(comparison.issues.slice(0, 5))}`);
    console.log(
      `load average after: ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );

    console.log(
      JSON.stringify({
        records,
        import_seconds: Number(importSeconds.toFixed(2)),
        records_per_s: Math.round(records / importSeconds),
        compare_seconds: Number(compareSeconds.toFixed(2)),
        peak_rss_mb: Math.round(process.resourceUsage().maxRSS / 1024),
        rss_before_import_mb: Math.round(baselineRss / 1024 / 1024),
        database: database.kind,
      }),
    );
  } finally {
    await database.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
