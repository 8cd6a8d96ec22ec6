/**
 * The invariant harness: random sequences of invoicing operations — create/finalize/void invoices,
 * partial and full payments with and without TDS, credit notes issued/applied/voided/expired —
 * across two legal entities and several customers, through the public API. After every step the
 * books must tie out:
 *   1. every journal entry balances;
 *   2. for each invoice, receivables in the ledger equal its amount_due (0 for drafts and voids);
 *   3. cash and TDS receivable in the ledger equal the payments recorded;
 *   4. for each credit note, customer credit in the ledger equals its balance;
 *   5. each entity's invoice and credit-note numbers are 1..N without gaps;
 *   6. no amount that must not be negative is negative;
 *   7. an invoice's live credit notes (not void or rejected) never reverse more taxable value,
 *      CGST, SGST or IGST than the invoice charged;
 *   8. every issued B2B or export invoice, and every credit note against one, makes an IRP
 *      e-invoice document (schema 1.1) that passes the schema.
 * Runs a modest count in `npm test`; set KOSH_INVARIANT_RUNS for a longer hunt.
 */
import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKosh, type ApiResponse, type Tenant, type TestKosh } from '../support/harness.js';
import { gstinFor } from '../support/billing.js';
import { irpDocumentOf, validateIrpDocument } from '../../src/modules/einvoicing/index.js';

const RUNS = Number(process.env.KOSH_INVARIANT_RUNS ?? 4);
const STEPS = Number(process.env.KOSH_INVARIANT_STEPS ?? 18);

let t: TestKosh;
beforeAll(async () => {
  t = await startTestKosh();
});
afterAll(() => t.close());

type World = { tenant: Tenant; entities: string[]; customers: string[]; invoices: string[]; notes: string[] };

const op = fc.oneof(
  fc.record({
    kind: fc.constant('invoice' as const),
    customer: fc.nat(),
    entity: fc.nat(),
    amounts: fc.array(fc.oneof(fc.integer({ min: 1, max: 99 }), fc.integer({ min: 100, max: 5_000_000 })), { minLength: 1, maxLength: 3 }),
    finalize: fc.boolean(),
  }),
  fc.record({ kind: fc.constant('finalize' as const), invoice: fc.nat() }),
  fc.record({ kind: fc.constant('void' as const), invoice: fc.nat() }),
  fc.record({ kind: fc.constant('pay' as const), invoice: fc.nat(), share: fc.integer({ min: 1, max: 100 }), tds: fc.integer({ min: 0, max: 10 }) }),
  fc.record({ kind: fc.constant('credit' as const), customer: fc.nat(), invoice: fc.option(fc.nat(), { nil: undefined }), share: fc.integer({ min: 1, max: 100 }), expires: fc.boolean() }),
  fc.record({ kind: fc.constant('apply' as const), note: fc.nat(), invoice: fc.nat(), share: fc.integer({ min: 1, max: 100 }) }),
  // Several partial credit notes that together credit the whole invoice: their roundings must
  // still add up to the invoice's own taxable value and taxes (check 7).
  fc.record({ kind: fc.constant('credit_in_parts' as const), invoice: fc.nat(), weights: fc.array(fc.integer({ min: 1, max: 10 }), { minLength: 2, maxLength: 4 }) }),
  fc.record({ kind: fc.constant('void_credit' as const), note: fc.nat() }),
  fc.record({ kind: fc.constant('time_passes' as const), days: fc.integer({ min: 1, max: 60 }) }),
);
type Op = typeof op extends fc.Arbitrary<infer T> ? T : never;

const pick = <T>(list: T[], i: number): T | undefined => (list.length ? list[i % list.length] : undefined);
const part = (amount: number, share: number) => Math.max(1, Math.floor((amount * share) / 100));

async function newWorld(): Promise<World> {
  const tenant = await t.registerTenant({ gstin: gstinFor('29') });
  const second = await tenant.api('POST', '/v1/entities', {
    name: 'West',
    invoice_prefix: 'MH-',
    gstin: gstinFor('27', 'CCCCC3333C1Z'),
    address: { line1: '5 Marine Drive', city: 'Mumbai', postal_code: '400002' },
  });
  const entities = [(await tenant.api('GET', '/v1/entities')).body.data[0].id, second.body.data.id];
  await tenant.api('PATCH', `/v1/entities/${entities[0]}`, { address: { line1: '1 MG Road', city: 'Bengaluru', postal_code: '560001' } });
  const customers: string[] = [];
  for (const [i, body] of [
    { gstin: gstinFor('29', 'BBBBB2222B1Z'), billing_address: { line1: '9 Church Street', city: 'Bengaluru', postal_code: '560001', state_code: '29', country: 'IN' } },
    { billing_address: { state_code: '27', country: 'IN' } },
    { billing_address: { line1: '1 Congress Ave', city: 'Austin', country: 'US' } },
  ].entries()) {
    customers.push((await tenant.api('POST', '/v1/customers', { email: `c${i}@model.test`, ...body })).body.data.id);
  }
  return { tenant, entities, customers, invoices: [], notes: [] };
}

async function step(w: World, o: Op): Promise<ApiResponse | undefined> {
  const api = w.tenant.api;
  switch (o.kind) {
    case 'invoice': {
      const customer = pick(w.customers, o.customer)!;
      const res = await api('POST', '/v1/invoices', {
        customer_id: customer,
        entity_id: pick(w.entities, o.entity),
        currency: customer === w.customers[2] ? 'USD' : 'INR',
        lines: o.amounts.map((unit_amount) => ({ description: 'x', unit_amount })),
        auto_finalize: o.finalize,
      });
      if (res.status === 201) w.invoices.push(res.body.data.id);
      return res;
    }
    case 'finalize':
    case 'void': {
      const id = pick(w.invoices, o.invoice);
      return id ? api('POST', `/v1/invoices/${id}/${o.kind}`) : undefined;
    }
    case 'pay': {
      const id = pick(w.invoices, o.invoice);
      if (!id) return undefined;
      const inv = (await api('GET', `/v1/invoices/${id}`)).body.data;
      const total = part(inv.amount_due, o.share);
      const tds = Math.min(Math.floor((total * o.tds) / 100), total - 1);
      return api('POST', '/v1/payments/offline', {
        customer_id: inv.customer_id,
        invoice_id: id,
        payment_type: 'bank_transfer',
        currency: inv.currency,
        amount: total - tds,
        tds_amount: tds,
      });
    }
    case 'credit': {
      const invoiceId = o.invoice === undefined ? undefined : pick(w.invoices, o.invoice);
      const inv = invoiceId ? (await api('GET', `/v1/invoices/${invoiceId}`)).body.data : undefined;
      const res = await api('POST', '/v1/credit-notes', {
        customer_id: inv?.customer_id ?? pick(w.customers, o.customer),
        invoice_id: invoiceId,
        amount: part(inv?.total || 10_000, o.share),
        ...(inv ? {} : { currency: 'INR' }),
        ...(o.expires ? { expires_at: new Date(t.clock.now().getTime() + 30 * 86_400_000).toISOString() } : {}),
      });
      if (res.status === 201) w.notes.push(res.body.data.id);
      return res;
    }
    case 'credit_in_parts': {
      const invoiceId = pick(w.invoices, o.invoice);
      if (!invoiceId) return undefined;
      const inv = (await api('GET', `/v1/invoices/${invoiceId}`)).body.data;
      const sum = o.weights.reduce((a, b) => a + b, 0);
      const amounts = o.weights.map((weight) => Math.floor((inv.total * weight) / sum));
      amounts[amounts.length - 1]! += inv.total - amounts.reduce((a, b) => a + b, 0);
      let last: ApiResponse | undefined;
      for (const amount of amounts.filter((a) => a > 0)) {
        last = await api('POST', '/v1/credit-notes', { customer_id: inv.customer_id, invoice_id: invoiceId, amount });
        if (last.status === 201) w.notes.push(last.body.data.id);
        else break; // already credited, or not creditable: refusals are fine
      }
      return last;
    }
    case 'apply': {
      const noteId = pick(w.notes, o.note);
      const invoiceId = pick(w.invoices, o.invoice);
      if (!noteId || !invoiceId) return undefined;
      const n = (await api('GET', `/v1/credit-notes/${noteId}`)).body.data;
      return api('POST', `/v1/credit-notes/${noteId}/apply`, { invoice_id: invoiceId, amount: part(Math.max(n.balance, 1), o.share) });
    }
    case 'void_credit': {
      const noteId = pick(w.notes, o.note);
      return noteId ? api('POST', `/v1/credit-notes/${noteId}/void`) : undefined;
    }
    case 'time_passes':
      t.clock.advanceDays(o.days);
      await t.kosh.worker.drain();
      return undefined;
  }
}

async function checkInvariants(tenantId: string): Promise<void> {
  const db = t.database.db;
  const unbalanced = await sql<{ entry_id: string }>`
    SELECT entry_id FROM journal_lines WHERE tenant_id = ${tenantId}
    GROUP BY entry_id HAVING sum(debit) <> sum(credit)`.execute(db);
  expect(unbalanced.rows, 'every journal entry balances').toEqual([]);

  const receivables = await sql<{ id: string; status: string; amount_due: number; ledger: number }>`
    SELECT i.id, i.status, i.amount_due,
           coalesce((SELECT sum(l.debit) - sum(l.credit) FROM journal_lines l
                     WHERE l.tenant_id = i.tenant_id AND l.invoice_id = i.id AND l.account_code = 1100), 0)::bigint AS ledger
    FROM invoices i WHERE i.tenant_id = ${tenantId}`.execute(db);
  for (const r of receivables.rows) {
    const expected = r.status === 'draft' || r.status === 'void' ? 0 : r.amount_due;
    expect(Number(r.ledger), `receivables of invoice ${r.id} (${r.status})`).toBe(expected);
    expect(r.amount_due).toBeGreaterThanOrEqual(0);
  }

  const money = await sql<{ cash: number; tds: number; paid: number; withheld: number }>`
    SELECT
      (SELECT coalesce(sum(debit) - sum(credit), 0) FROM journal_lines WHERE tenant_id = ${tenantId} AND account_code = 1000)::bigint AS cash,
      (SELECT coalesce(sum(debit) - sum(credit), 0) FROM journal_lines WHERE tenant_id = ${tenantId} AND account_code = 1200)::bigint AS tds,
      (SELECT coalesce(sum(amount), 0) FROM payments WHERE tenant_id = ${tenantId})::bigint AS paid,
      (SELECT coalesce(sum(tds_amount), 0) FROM payments WHERE tenant_id = ${tenantId})::bigint AS withheld`.execute(db);
  const m = money.rows[0]!;
  expect(Number(m.cash), 'cash equals payments recorded').toBe(Number(m.paid));
  expect(Number(m.tds), 'TDS receivable equals TDS recorded').toBe(Number(m.withheld));

  const credits = await sql<{ id: string; status: string; balance: number; ledger: number }>`
    SELECT c.id, c.status, c.balance,
           coalesce((SELECT sum(l.credit) - sum(l.debit) FROM journal_lines l
                     WHERE l.tenant_id = c.tenant_id AND l.credit_note_id = c.id AND l.account_code = 2300), 0)::bigint AS ledger
    FROM credit_notes c WHERE c.tenant_id = ${tenantId}`.execute(db);
  for (const c of credits.rows) {
    const expected = c.status === 'pending_approval' || c.status === 'rejected' ? 0 : c.balance;
    expect(Number(c.ledger), `customer credit of note ${c.id} (${c.status})`).toBe(expected);
  }

  const overCredited = await sql<{ id: string }>`
    SELECT i.id FROM invoices i
    JOIN credit_notes c ON c.tenant_id = i.tenant_id AND c.invoice_id = i.id AND c.status NOT IN ('void', 'rejected')
    WHERE i.tenant_id = ${tenantId}
    GROUP BY i.id, i.subtotal, i.cgst_amount, i.sgst_amount, i.igst_amount
    HAVING sum(c.subtotal) > i.subtotal OR sum(c.cgst_amount) > i.cgst_amount
        OR sum(c.sgst_amount) > i.sgst_amount OR sum(c.igst_amount) > i.igst_amount`.execute(db);
  expect(overCredited.rows, 'credit notes never reverse more of a component than the invoice charged').toEqual([]);

  const registrable = await sql<{ type: 'invoice' | 'credit_note'; id: string }>`
    SELECT 'invoice' AS type, id FROM invoices
    WHERE tenant_id = ${tenantId} AND number IS NOT NULL AND (customer_details->>'gstin' IS NOT NULL OR tax_type = 'export')
    UNION ALL
    SELECT 'credit_note', c.id FROM credit_notes c JOIN invoices i ON i.tenant_id = c.tenant_id AND i.id = c.invoice_id
    WHERE c.tenant_id = ${tenantId} AND c.number IS NOT NULL AND (i.customer_details->>'gstin' IS NOT NULL OR i.tax_type = 'export')`.execute(db);
  for (const doc of registrable.rows) {
    const document = await irpDocumentOf({ tx: db, tenantId, now: t.clock.now() }, doc.type, doc.id);
    expect(validateIrpDocument(document), `IRP document of ${doc.type} ${doc.id}`).toEqual([]);
  }

  for (const [table, kind] of [['invoices', 'invoice'], ['credit_notes', 'credit note']] as const) {
    const numbers = await sql<{ entity_id: string; number: string }>`
      SELECT entity_id, number FROM ${sql.table(table)} WHERE tenant_id = ${tenantId} AND number IS NOT NULL`.execute(db);
    const byEntity = new Map<string, number[]>();
    for (const n of numbers.rows) byEntity.set(n.entity_id, [...(byEntity.get(n.entity_id) ?? []), Number(n.number.replace(/^\D+/, ''))]);
    for (const [entity, seq] of byEntity) {
      expect(seq.sort((a, b) => a - b), `${kind} numbers of entity ${entity} are 1..N`).toEqual(seq.map((_, i) => i + 1));
    }
  }
}

describe('the books tie out after every operation', () => {
  it(`holds the ledger invariants over ${RUNS} random histories of ${STEPS} steps`, async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: STEPS }), async (ops) => {
        const world = await newWorld();
        for (const o of ops) {
          const res = await step(world, o);
          // Refusals are fine (paying a void invoice, over-applying credit …); a 5xx never is.
          if (res) expect(res.status, `${o.kind}: ${res.text}`).toBeLessThan(500);
          await checkInvariants(world.tenant.tenantId);
        }
      }),
      { numRuns: RUNS },
    );
  });
});
