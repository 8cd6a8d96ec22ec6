/**
 * npm run bench:reconciliation — seeds (fast SQL) 100 000 finalized invoices with their journal
 * entries, a payment on every second one and a credit note on every tenth, catches the secondary
 * ledger up through the feed, then times one full reconciliation run (billing → journal →
 * secondary ledger). PostgreSQL when DATABASE_URL is set (a fresh database, dropped afterwards),
 * else the in-memory embedded database. Last line: one JSON object. Targets: ≥ 20 000 records
 * checked/s, peak RSS ≤ 300 MB.
 *   --scale 0.1   a tenth of the invoices, for a quick run
 */
import { loadavg } from 'node:os';
import { sql } from 'kysely';
import { registerTenant } from '../src/flows/tenants/register-tenant.js';
import { executeRun, recordsChecked, startRun } from '../src/modules/finance/index.js';
import { syncSecondaryLedger } from '../src/modules/ledger/index.js';
import { openTestDatabase } from '../test/support/database.js';
import { migrate } from '../src/platform/db/migrate.js';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

const INVOICES = Math.max(10, Math.round(100_000 * arg('scale', 1)));

async function main() {
  const database = await openTestDatabase();
  if (database.kind === 'pglite') await migrate(database.pool);
  const db = database.db;
  try {
    const now = new Date();
    const { tenant } = await registerTenant(
      db,
      now,
      { name: 'Bench', email: 'bench@kosh.test', base_currency: 'INR', data_region: 'in', country_code: 'IN', invoice_prefix: 'BENCH-' } as never,
      'test',
    );
    const entity = await db.selectFrom('legal_entities').select(['id', 'tb_ledger_id']).where('tenant_id', '=', tenant.id).executeTakeFirstOrThrow();
    let started = performance.now();
    const n = INVOICES;
    const T = tenant.id;
    const E = entity.id;
    const L = entity.tb_ledger_id;
    // Seeding only: triggers off (the balance checks would run per line). Ids are time-ordered as
    // Kosh's UUID v7 are: lpad(hex(i)) then a per-record tag, so rows of invoice i sit together.
    await db.transaction().execute(async (tx) => {
      await sql`SET LOCAL session_replication_role = replica`.execute(tx);
      await sql`CREATE FUNCTION pg_temp.bench_id(i bigint, tag text) RETURNS uuid LANGUAGE sql IMMUTABLE AS
        $$ SELECT (lpad(to_hex(i), 12, '0') || '7' || lpad(to_hex(ascii(substr(tag, 1, 1)) * 128 + ascii(substr(tag, 2, 1))), 4, '0') || '8' || lpad(to_hex(length(tag)), 14, '0'))::uuid $$`.execute(
        tx,
      );
      await sql`INSERT INTO customers (tenant_id, id, email, name, created_at, updated_at)
        SELECT ${T}::uuid, pg_temp.bench_id(g, 'cus'), 'c' || g || '@bench.test', 'Customer ' || g, ${now}::timestamptz, ${now}::timestamptz FROM generate_series(1, 1000) g`.execute(
        tx,
      );
      await sql`CREATE TEMP TABLE bench_inv ON COMMIT DROP AS
        SELECT g AS i, pg_temp.bench_id(g, 'inv') AS id, pg_temp.bench_id(g % 1000 + 1, 'cus') AS customer_id,
               (10000 + g % 1000)::bigint AS subtotal, ((10000 + g % 1000) * 9 / 100)::bigint AS half_tax
        FROM generate_series(1, ${n}::int) g`.execute(tx);
      await sql`INSERT INTO invoices (tenant_id, id, entity_id, customer_id, number, status, currency, subtotal, tax_amount, cgst_amount, sgst_amount, igst_amount,
                   tax_type, total, amount_paid, amount_due, issued_at, created_at, updated_at)
        SELECT ${T}::uuid, id, ${E}::uuid, customer_id, 'B-' || i, CASE WHEN i % 2 = 0 THEN 'paid' ELSE 'open' END, 'INR', subtotal, 2 * half_tax, half_tax, half_tax, 0,
               'intra_state', subtotal + 2 * half_tax, CASE WHEN i % 2 = 0 THEN subtotal + 2 * half_tax ELSE 0 END,
               CASE WHEN i % 2 = 0 THEN 0 ELSE subtotal + 2 * half_tax END, ${now}::timestamptz, ${now}::timestamptz, ${now}::timestamptz
        FROM bench_inv`.execute(tx);
      await sql`INSERT INTO payments (tenant_id, id, customer_id, invoice_id, payment_type, amount, currency, recorded_at, created_at, updated_at)
        SELECT ${T}::uuid, pg_temp.bench_id(i, 'pay'), customer_id, id, 'bank_transfer', subtotal + 2 * half_tax, 'INR', ${now}::timestamptz, ${now}::timestamptz, ${now}::timestamptz FROM bench_inv WHERE i % 2 = 0`.execute(
        tx,
      );
      await sql`INSERT INTO credit_notes (tenant_id, id, customer_id, invoice_id, entity_id, number, status, currency, amount, subtotal, tax_amount, cgst_amount, sgst_amount, igst_amount, balance, issued_at, created_at, updated_at)
        SELECT ${T}::uuid, pg_temp.bench_id(i, 'cn'), customer_id, id, ${E}::uuid, 'CN-' || i, 'issued', 'INR', subtotal + 2 * half_tax, subtotal, 2 * half_tax, half_tax, half_tax, 0, subtotal + 2 * half_tax, ${now}::timestamptz, ${now}::timestamptz, ${now}::timestamptz
        FROM bench_inv WHERE i % 10 = 1`.execute(tx);
      // Journal: finalization, payment and credit-note entries with their lines.
      await sql`INSERT INTO journal_entries (tenant_id, id, ledger_id, entity_id, kind, reference_type, reference_id, currency, posted_at)
        SELECT ${T}::uuid, pg_temp.bench_id(i, 'fin'), ${L}::int, ${E}::uuid, 'invoice.finalized', 'invoice', id, 'INR', ${now}::timestamptz FROM bench_inv
        UNION ALL SELECT ${T}::uuid, pg_temp.bench_id(i, 'pje'), ${L}::int, ${E}::uuid, 'payment.recorded', 'payment', pg_temp.bench_id(i, 'pay'), 'INR', ${now}::timestamptz FROM bench_inv WHERE i % 2 = 0
        UNION ALL SELECT ${T}::uuid, pg_temp.bench_id(i, 'cje'), ${L}::int, ${E}::uuid, 'credit_note.issued', 'credit_note', pg_temp.bench_id(i, 'cn'), 'INR', ${now}::timestamptz FROM bench_inv WHERE i % 10 = 1`.execute(
        tx,
      );
      await sql`INSERT INTO journal_lines (tenant_id, id, entry_id, account_code, debit, credit, customer_id, invoice_id, credit_note_id)
        SELECT ${T}::uuid, pg_temp.bench_id(i, 'f1'), pg_temp.bench_id(i, 'fin'), 1100, subtotal + 2 * half_tax, 0, customer_id, id, NULL::uuid FROM bench_inv
        UNION ALL SELECT ${T}::uuid, pg_temp.bench_id(i, 'f2'), pg_temp.bench_id(i, 'fin'), 4000, 0, subtotal, NULL, id, NULL FROM bench_inv
        UNION ALL SELECT ${T}::uuid, pg_temp.bench_id(i, 'f3'), pg_temp.bench_id(i, 'fin'), 2100, 0, half_tax, NULL, id, NULL FROM bench_inv
        UNION ALL SELECT ${T}::uuid, pg_temp.bench_id(i, 'f4'), pg_temp.bench_id(i, 'fin'), 2110, 0, half_tax, NULL, id, NULL FROM bench_inv
        UNION ALL SELECT ${T}::uuid, pg_temp.bench_id(i, 'p1'), pg_temp.bench_id(i, 'pje'), 1000, subtotal + 2 * half_tax, 0, customer_id, NULL, NULL FROM bench_inv WHERE i % 2 = 0
        UNION ALL SELECT ${T}::uuid, pg_temp.bench_id(i, 'p2'), pg_temp.bench_id(i, 'pje'), 1100, 0, subtotal + 2 * half_tax, customer_id, id, NULL FROM bench_inv WHERE i % 2 = 0
        UNION ALL SELECT ${T}::uuid, pg_temp.bench_id(i, 'c1'), pg_temp.bench_id(i, 'cje'), 4900, subtotal, 0, NULL, id, pg_temp.bench_id(i, 'cn') FROM bench_inv WHERE i % 10 = 1
        UNION ALL SELECT ${T}::uuid, pg_temp.bench_id(i, 'c2'), pg_temp.bench_id(i, 'cje'), 2100, half_tax, 0, NULL, id, pg_temp.bench_id(i, 'cn') FROM bench_inv WHERE i % 10 = 1
        UNION ALL SELECT ${T}::uuid, pg_temp.bench_id(i, 'c3'), pg_temp.bench_id(i, 'cje'), 2110, half_tax, 0, NULL, id, pg_temp.bench_id(i, 'cn') FROM bench_inv WHERE i % 10 = 1
        UNION ALL SELECT ${T}::uuid, pg_temp.bench_id(i, 'c4'), pg_temp.bench_id(i, 'cje'), 2300, 0, subtotal + 2 * half_tax, customer_id, NULL, pg_temp.bench_id(i, 'cn') FROM bench_inv WHERE i % 10 = 1`.execute(
        tx,
      );
      await sql`INSERT INTO tb_outbox (tenant_id, entry_id) SELECT tenant_id, id FROM journal_entries WHERE tenant_id = ${T}::uuid`.execute(tx);
    });
    await sql`ANALYZE`.execute(db);
    console.log(`${database.kind}: seeded ${n} invoices in ${((performance.now() - started) / 1000).toFixed(1)} s`);

    started = performance.now();
    const fed = await syncSecondaryLedger(db, T, new Date());
    console.log(`secondary ledger caught up: ${fed} entries in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    await sql`ANALYZE`.execute(db);

    const run = await db.transaction().execute((tx) => startRun({ tx, tenantId: T, now: new Date() }, null, null));
    console.log(
      `reconciling; load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
    started = performance.now();
    const done = await executeRun(
      db,
      T,
      run!.id,
      () => new Date(),
      async () => undefined,
    );
    const seconds = (performance.now() - started) / 1000;
    if (!done) throw new Error('the run failed');
    const records = recordsChecked(done);
    console.log(
      `checked ${records} records (invoices ${done.invoices_checked}, payments ${done.payments_checked}, credit notes ${done.credit_notes_checked}, entries ${done.journal_entries_checked}, transfers ${done.tb_transfers_checked}, accounts ${done.tb_accounts_checked}); discrepancies ${done.total_discrepancies}`,
    );
    if (Number(done.total_discrepancies) !== 0) throw new Error('the seeded books should reconcile');
    console.log(
      `load average after: ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
    console.log(
      JSON.stringify({
        records_per_s: Math.round(records / seconds),
        seconds: Number(seconds.toFixed(2)),
        peak_rss_mb: Math.round(process.resourceUsage().maxRSS / 1024),
        records,
        invoices: n,
        database: database.kind,
      }),
    );
  } finally {
    await database.close();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
