/**
 * npm run bench:invoicing — creates and finalizes N invoices (2 lines each: GST, ledger entry,
 * gapless number, events) through the service layer one per transaction, then through the batch
 * path the billing run uses (issueInvoices, 50 per transaction), then writes the same rows with
 * raw SQL one per transaction through the same pool as the baseline of `ratio`. PostgreSQL when DATABASE_URL is set (a fresh database,
 * dropped afterwards), else the embedded database. Last line: one JSON object.
 *   --n 2000          invoices per phase
 *   --concurrency 8   transactions in flight
 */
import { pino } from 'pino';
import { sql } from 'kysely';
import { createKosh } from '../src/app.js';
import { loadConfig } from '../src/platform/config.js';
import { newId } from '../src/platform/ids.js';
import { openTestDatabase } from '../test/support/database.js';
import { registerTenant } from '../src/flows/register-tenant.js';
import { createCustomer } from '../src/modules/customers/index.js';
import { createDraftInvoice, issueInvoices } from '../src/modules/invoices/index.js';
import { finalizeInvoiceWithCredit } from '../src/flows/finalize-invoice.js';
import { gstinCheckCharacter } from '../src/modules/tax/index.js';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

const N = arg('n', 2000);
const CONCURRENCY = arg('concurrency', 8);

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
  const { tenant } = await registerTenant(db, now, {
    name: 'Bench', email: 'bench@kosh.test', base_currency: 'INR', data_region: 'in', country_code: 'IN',
    gstin: base + gstinCheckCharacter(base), invoice_prefix: 'BENCH-',
  }, 'test');
  const customers: Awaited<ReturnType<typeof createCustomer>>[] = [];
  await db.transaction().execute(async (tx) => {
    for (let i = 0; i < 50; i++) {
      customers.push(await createCustomer({ tx, tenantId: tenant.id, now }, {
        email: `c${i}@bench.test`, name: `Customer ${i}`, metadata: {},
        billing_address: { state_code: i % 2 ? '29' : '27', country: 'IN' },
      } as never));
    }
  });

  console.log(`${database.kind}: ${N} invoices, concurrency ${CONCURRENCY}`);
  const serviceSeconds = await runPool(N, CONCURRENCY, async (i) => {
    await db.transaction().execute(async (tx) => {
      const ctx = { tx, tenantId: tenant.id, now: new Date() };
      const draft = await createDraftInvoice(ctx, {
        customer: customers[i % customers.length]!,
        currency: 'INR',
        lines: [
          { description: 'Seat licence', quantity: 3, unit_amount: 49_900 },
          { description: 'Support', quantity: 1, unit_amount: 9_999 },
        ],
      });
      await finalizeInvoiceWithCredit(ctx, draft.id);
    });
  });
  const invoicesPerSecond = N / serviceSeconds;
  console.log(`service layer: ${serviceSeconds.toFixed(2)} s, ${invoicesPerSecond.toFixed(0)} invoices/s`);

  // The batch path the billing run uses: the same rows, 50 invoices per transaction.
  const BATCH = 50;
  const batches = Math.ceil(N / BATCH);
  const batchedSeconds = await runPool(batches, 2, async (b) => {
    await db.transaction().execute(async (tx) => {
      const ctx = { tx, tenantId: tenant.id, now: new Date() };
      const inputs = Array.from({ length: Math.min(BATCH, N - b * BATCH) }, (_, j) => ({
        customer: customers[(b * BATCH + j) % customers.length]!,
        currency: 'INR',
        lines: [
          { description: 'Seat licence', quantity: 3, unit_amount: 49_900 },
          { description: 'Support', quantity: 1, unit_amount: 9_999 },
        ],
      }));
      await issueInvoices(ctx, inputs);
    });
  });
  const batchedPerSecond = N / batchedSeconds;
  console.log(`service layer, batched (${BATCH} per transaction, as the billing run): ${batchedSeconds.toFixed(2)} s, ${batchedPerSecond.toFixed(0)} invoices/s`);

  // Baseline: the same rows (invoice, 2 lines, counter bump, entry + 4 lines, 2 events) in raw SQL.
  const entityId = (await db.selectFrom('legal_entities').select('id').where('tenant_id', '=', tenant.id).executeTakeFirstOrThrow()).id;
  const baselineSeconds = await runPool(N, CONCURRENCY, async (i) => {
    await db.transaction().execute(async (tx) => {
      const id = newId();
      const customer = customers[i % customers.length]!;
      const stamp = new Date();
      await sql`INSERT INTO invoices (tenant_id, id, entity_id, customer_id, status, currency, subtotal, tax_amount, cgst_amount, sgst_amount, igst_amount, total, amount_due, created_at, updated_at)
                VALUES (${tenant.id}, ${id}, ${entityId}, ${customer.id}, 'draft', 'INR', 159699, 28746, 0, 0, 28746, 188445, 188445, ${stamp}, ${stamp})`.execute(tx);
      await sql`INSERT INTO invoice_lines (tenant_id, id, invoice_id, position, description, quantity, unit_amount, amount, hsn_code, rate_bp, cgst_amount, sgst_amount, igst_amount, tax_amount, total)
                VALUES (${tenant.id}, ${newId()}, ${id}, 1, 'Seat licence', 3, 49900, 149700, '998314', 1800, 0, 0, 26946, 26946, 176646),
                       (${tenant.id}, ${newId()}, ${id}, 2, 'Support', 1, 9999, 9999, '998314', 1800, 0, 0, 1800, 1800, 11799)`.execute(tx);
      const seq = await sql<{ last_value: number }>`INSERT INTO document_counters (tenant_id, entity_id, kind, last_value) VALUES (${tenant.id}, ${entityId}, 'quote', 1)
                ON CONFLICT (tenant_id, entity_id, kind) DO UPDATE SET last_value = document_counters.last_value + 1 RETURNING last_value`.execute(tx);
      await sql`UPDATE invoices SET status = 'open', number = ${`BASE-${String(seq.rows[0]!.last_value).padStart(6, '0')}`} WHERE tenant_id = ${tenant.id} AND id = ${id}`.execute(tx);
      const entry = newId();
      await sql`INSERT INTO journal_entries (tenant_id, id, ledger_id, entity_id, kind, reference_type, reference_id, currency, posted_at)
                VALUES (${tenant.id}, ${entry}, 1, ${entityId}, 'baseline', 'invoice', ${id}, 'INR', ${stamp})`.execute(tx);
      await sql`INSERT INTO journal_lines (tenant_id, id, entry_id, account_code, debit, credit, invoice_id) VALUES
                (${tenant.id}, ${newId()}, ${entry}, 1100, 188445, 0, ${id}), (${tenant.id}, ${newId()}, ${entry}, 4000, 0, 159699, ${id}),
                (${tenant.id}, ${newId()}, ${entry}, 2120, 0, 28746, ${id})`.execute(tx);
      await sql`INSERT INTO events (tenant_id, id, type, object_type, object_id, payload, created_at) VALUES
                (${tenant.id}, ${newId()}, 'baseline.created', 'baseline', ${id}, '{}', ${stamp}), (${tenant.id}, ${newId()}, 'baseline.finalized', 'baseline', ${id}, '{}', ${stamp})`.execute(tx);
    });
  });
  const baselinePerSecond = N / baselineSeconds;
  console.log(`raw SQL baseline: ${baselineSeconds.toFixed(2)} s, ${baselinePerSecond.toFixed(0)} invoices/s`);

  await kosh.close();
  await database.close();
  console.log(
    JSON.stringify({
      invoices_per_s: Math.round(invoicesPerSecond),
      baseline_per_s: Math.round(baselinePerSecond),
      ratio: Number((invoicesPerSecond / baselinePerSecond).toFixed(3)),
      batched_invoices_per_s: Math.round(batchedPerSecond),
    }),
  );
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
