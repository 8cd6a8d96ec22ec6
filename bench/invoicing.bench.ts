/**
 * npm run bench:invoicing — creates and finalizes N invoices (2 lines each: GST, ledger entry,
 * gapless number, events) through the service layer, and writes the same rows with hand-written
 * SQL through the same pool as the baseline, in two shapes:
 *   batched  the way Kosh issues invoices in volume: issueInvoices, 50 per transaction, 2 in
 *            flight (the billing run). These are `invoices_per_s`, `baseline_per_s` and `ratio`.
 *   single   one invoice per transaction (createDraftInvoice + finalizeInvoiceWithCredit, as the
 *            API does), 8 in flight: `single_*`. One entity's gapless counter row is locked from
 *            the number's taking to COMMIT, so these transactions queue on it.
 * The baseline pipelines its statements (only the number is awaited), the best raw SQL can do.
 * An untimed warm-up and ANALYZE come first. PostgreSQL when DATABASE_URL is set (a fresh database,
 * dropped afterwards), else the embedded database. Last line: one JSON object.
 *   --n 2000          invoices per phase
 *   --concurrency 8   single transactions in flight
 *   --batch 50        invoices per batched transaction
 *   --batch-concurrency 2  batched transactions in flight
 */
import { pino } from 'pino';
import { sql } from 'kysely';
import { createKosh } from '../src/app.js';
import { loadConfig } from '../src/platform/config.js';
import { newId } from '../src/platform/ids.js';
import { openTestDatabase } from '../test/support/database.js';
import { registerTenant } from '../src/flows/tenants/register-tenant.js';
import { createCustomer } from '../src/modules/customers/index.js';
import { createDraftInvoice, issueInvoices } from '../src/modules/invoices/index.js';
import { finalizeInvoiceWithCredit } from '../src/flows/invoices/finalize-invoice.js';
import { gstinCheckCharacter } from '../src/modules/tax/index.js';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

const N = arg('n', 2000);
const CONCURRENCY = arg('concurrency', 8);
const BATCH = arg('batch', 50);
const BATCH_CONCURRENCY = arg('batch-concurrency', 2);

async function runPool(total: number, concurrency: number, work: (i: number) => Promise<void>): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) await work(next++);
    }),
  );
  return (performance.now() - started) / 1000;
}

async function main() {
  const database = await openTestDatabase();
  const poolSize = database.kind === 'postgres' ? CONCURRENCY + 2 : 1;
  const kosh = await createKosh({
    config: loadConfig({ LOG_LEVEL: 'silent', KOSH_DB_POOL_SIZE: String(poolSize) }),
    database,
    logger: pino({ level: 'silent' }),
  });
  const db = database.db;
  const now = new Date();
  const base = '29AAACA1234A1Z';
  const { tenant } = await registerTenant(
    db,
    now,
    {
      name: 'Bench',
      email: 'bench@kosh.test',
      base_currency: 'INR',
      data_region: 'in',
      country_code: 'IN',
      gstin: base + gstinCheckCharacter(base),
      invoice_prefix: 'BENCH-',
    },
    'test',
  );
  const customers: Awaited<ReturnType<typeof createCustomer>>[] = [];
  await db.transaction().execute(async (tx) => {
    for (let i = 0; i < 50; i++) {
      customers.push(
        await createCustomer({ tx, tenantId: tenant.id, now }, {
          email: `c${i}@bench.test`,
          name: `Customer ${i}`,
          metadata: {},
          billing_address: { state_code: i % 2 ? '29' : '27', country: 'IN' },
        } as never),
      );
    }
  });

  const entity = await db.selectFrom('legal_entities').select(['id', 'tb_ledger_id']).where('tenant_id', '=', tenant.id).executeTakeFirstOrThrow();
  const lines = [
    { description: 'Seat licence', quantity: 3, unit_amount: 49_900 },
    { description: 'Support', quantity: 1, unit_amount: 9_999 },
  ];
  const input = (i: number) => ({ customer: customers[i % customers.length]!, currency: 'INR', lines });

  /** Through the service layer: createDraftInvoice + finalizeInvoiceWithCredit, as the API does. */
  const serviceOne = (i: number) =>
    db.transaction().execute(async (tx) => {
      const ctx = { tx, tenantId: tenant.id, now: new Date() };
      const draft = await createDraftInvoice(ctx, input(i));
      await finalizeInvoiceWithCredit(ctx, draft.id);
    });
  /** Through the service layer's batch path (issueInvoices), as the billing run does. */
  const serviceBatch = (first: number, count: number) =>
    db.transaction().execute(async (tx) => {
      const ctx = { tx, tenantId: tenant.id, now: new Date() };
      await issueInvoices(
        ctx,
        Array.from({ length: count }, (_, j) => input(first + j)),
      );
    });
  /**
   * The baseline: the same rows (invoice with number, 2 lines, counter bump, entry + 3 lines,
   * 2 events with a payload of the invoice's size) in hand-written SQL, multi-row statements,
   * pipelined on the pool's client: the number is awaited, everything else goes with the COMMIT.
   */
  const rawBatch = async (first: number, count: number) => {
    const client = await database.pool.connect();
    try {
      const stamp = new Date();
      let failure: unknown;
      const send = (text: string, values?: unknown[]) => void client.query(text, values).catch((error: unknown) => (failure ??= error));
      send('BEGIN');
      const seq = await client.query<{ last_value: number }>(
        `INSERT INTO document_counters (tenant_id, entity_id, kind, last_value) VALUES ($1, $2, 'invoice', $3)
         ON CONFLICT (tenant_id, entity_id, kind) DO UPDATE SET last_value = document_counters.last_value + $3 RETURNING last_value`,
        [tenant.id, entity.id, count],
      );
      const firstNumber = seq.rows[0]!.last_value - count + 1;
      const invoices: unknown[][] = [],
        invoiceLines: unknown[][] = [],
        entries: unknown[][] = [],
        entryLines: unknown[][] = [],
        events: unknown[][] = [];
      for (let j = 0; j < count; j++) {
        const id = newId();
        const customer = customers[(first + j) % customers.length]!;
        const number = `BASE-${String(firstNumber + j).padStart(6, '0')}`;
        invoices.push([tenant.id, id, entity.id, customer.id, number, 'open', 'INR', 159699, 28746, 0, 0, 28746, 188445, 188445, stamp, stamp, stamp]);
        invoiceLines.push([tenant.id, newId(), id, 1, 'Seat licence', 3, 49900, 149700, '998314', 1800, 0, 0, 26946, 26946, 176646]);
        invoiceLines.push([tenant.id, newId(), id, 2, 'Support', 1, 9999, 9999, '998314', 1800, 0, 0, 1800, 1800, 11799]);
        const entry = newId();
        entries.push([tenant.id, entry, entity.tb_ledger_id, entity.id, 'baseline', 'invoice', id, 'INR', `Invoice ${number}`, stamp]);
        entryLines.push(
          [tenant.id, newId(), entry, 1100, 188445, 0, id],
          [tenant.id, newId(), entry, 4000, 0, 159699, id],
          [tenant.id, newId(), entry, 2120, 0, 28746, id],
        );
        const payload = JSON.stringify({ object: 'invoice', id, number, customer, lines: invoiceLines.slice(-2), total: 188445, stamp });
        events.push(
          [tenant.id, newId(), 'baseline.created', 'baseline', id, payload, stamp],
          [tenant.id, newId(), 'baseline.finalized', 'baseline', id, payload, stamp],
        );
      }
      const insert = (table: string, columns: string, rows: unknown[][]) => {
        const width = rows[0]!.length;
        const tuples = rows.map((_, r) => `(${Array.from({ length: width }, (_, c) => `$${r * width + c + 1}`).join(', ')})`);
        send(`INSERT INTO ${table} (${columns}) VALUES ${tuples.join(', ')}`, rows.flat());
      };
      insert(
        'invoices',
        'tenant_id, id, entity_id, customer_id, number, status, currency, subtotal, tax_amount, cgst_amount, sgst_amount, igst_amount, total, amount_due, issued_at, created_at, updated_at',
        invoices,
      );
      insert(
        'invoice_lines',
        'tenant_id, id, invoice_id, position, description, quantity, unit_amount, amount, hsn_code, rate_bp, cgst_amount, sgst_amount, igst_amount, tax_amount, total',
        invoiceLines,
      );
      insert('journal_entries', 'tenant_id, id, ledger_id, entity_id, kind, reference_type, reference_id, currency, description, posted_at', entries);
      insert('journal_lines', 'tenant_id, id, entry_id, account_code, debit, credit, invoice_id', entryLines);
      insert('events', 'tenant_id, id, type, object_type, object_id, payload, created_at', events);
      const committed = await client.query('COMMIT');
      if (committed.command !== 'COMMIT') throw failure ?? new Error(`baseline transaction ended in ${committed.command}`);
    } finally {
      client.release();
    }
  };

  // Warm-up, untimed: fills the tables a little and lets ANALYZE see them, as autovacuum would in
  // a running system (on never-analyzed tables the planner checks every foreign key by a scan).
  await runPool(200, CONCURRENCY, serviceOne);
  await runPool(4, 2, (b) => serviceBatch(b * BATCH, BATCH));
  await runPool(4, 2, (b) => rawBatch(b * BATCH, BATCH));
  await sql`ANALYZE`.execute(db);

  console.log(
    `${database.kind}: ${N} invoices per phase; one per transaction at concurrency ${CONCURRENCY}, batches of ${BATCH} at concurrency ${BATCH_CONCURRENCY}`,
  );
  const rate = (seconds: number) => N / seconds;
  const single = rate(await runPool(N, CONCURRENCY, serviceOne));
  console.log(`service layer, one invoice per transaction:       ${single.toFixed(0)} invoices/s`);
  const singleRaw = rate(await runPool(N, CONCURRENCY, (i) => rawBatch(i, 1)));
  console.log(`raw SQL, one invoice per transaction:             ${singleRaw.toFixed(0)} invoices/s`);
  const batches = Math.ceil(N / BATCH);
  const size = (b: number) => Math.min(BATCH, N - b * BATCH);
  const batched = rate(await runPool(batches, BATCH_CONCURRENCY, (b) => serviceBatch(b * BATCH, size(b))));
  console.log(`service layer, ${BATCH} per transaction (billing run): ${batched.toFixed(0)} invoices/s`);
  const batchedRaw = rate(await runPool(batches, BATCH_CONCURRENCY, (b) => rawBatch(b * BATCH, size(b))));
  console.log(`raw SQL, ${BATCH} per transaction:                   ${batchedRaw.toFixed(0)} invoices/s`);

  await kosh.close();
  await database.close();
  console.log(
    JSON.stringify({
      invoices_per_s: Math.round(batched),
      baseline_per_s: Math.round(batchedRaw),
      ratio: Number((batched / batchedRaw).toFixed(3)),
      single_invoices_per_s: Math.round(single),
      single_baseline_per_s: Math.round(singleRaw),
      single_ratio: Number((single / singleRaw).toFixed(3)),
    }),
  );
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
