import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKosh, type Tenant, type TestKosh } from '../../../test/support/harness.js';

let t: TestKosh;
let acme: Tenant;
let karnatakaCustomer: string;
let maharashtraCustomer: string;
let usCustomer: string;

// Acme's primary entity is in Karnataka (29).
const ACME_GSTIN = '29AAACA1234A1Z' + 'X'; // placeholder, replaced in beforeAll with a valid check digit

beforeAll(async () => {
  t = await startTestKosh();
  const { gstinCheckCharacter } = await import('../tax/index.js');
  const gstin = (base: string) => base + gstinCheckCharacter(base);
  acme = await t.registerTenant({ gstin: gstin(ACME_GSTIN.slice(0, 14)) });
  const c1 = await acme.http.POST('/v1/customers', { body: { email: 'ka@example.in', name: 'KA Pvt Ltd', gstin: gstin('29BBBBB2222B1Z') } });
  const c2 = await acme.http.POST('/v1/customers', {
    body: { email: 'mh@example.in', name: 'MH Pvt Ltd', billing_address: { state_code: '27', country: 'IN' } },
  });
  const c3 = await acme.http.POST('/v1/customers', { body: { email: 'us@example.com', name: 'US Inc', billing_address: { country: 'US', state_code: 'CA' } } });
  karnatakaCustomer = c1.body.data.id;
  maharashtraCustomer = c2.body.data.id;
  usCustomer = c3.body.data.id;
});
afterAll(() => t.close());

const line = (unit_amount: number, quantity = 1) => ({ description: 'Subscription', unit_amount, quantity });

describe('invoices', () => {
  describe('create and finalize', () => {
    it('splits intra-state GST into CGST and SGST, numbers the invoice and books the receivable', async () => {
      const res = await acme.http.POST('/v1/invoices', { body: { customer_id: karnatakaCustomer, currency: 'INR', lines: [line(100_000), line(333, 3)] } });
      expect(res.status).toBe(201);
      const inv = res.body.data;
      expect(inv).toMatchObject({ status: 'open', tax_type: 'intra_state', place_of_supply: '29', currency: 'INR', subtotal: 100_999 });
      // Per line: 100000 → 9000 + 9000; 999 → 89.91 → 90 + 90.
      expect(inv.cgst_amount).toBe(9090);
      expect(inv.sgst_amount).toBe(9090);
      expect(inv.igst_amount).toBe(0);
      expect(inv.total).toBe(100_999 + 18_180);
      expect(inv.amount_due).toBe(inv.total);
      expect(inv.number).toMatch(/^INV-\d{6}$/);
      expect(inv.supplier!.gstin).toMatch(/^29/);

      const journal = await acme.http.GET('/v1/invoices/{id}/journal-entries', { path: { id: inv.id } });
      expect(journal.status).toBe(200);
      expect(journal.body.data).toHaveLength(1);
      const entry = journal.body.data[0]!;
      expect(entry.kind).toBe('invoice.finalized');
      expect(entry.ledger_id).toBe(1);
      const debit = entry.lines.reduce((s: number, l: { debit: number }) => s + l.debit, 0);
      const credit = entry.lines.reduce((s: number, l: { credit: number }) => s + l.credit, 0);
      expect(debit).toBe(inv.total);
      expect(credit).toBe(inv.total);
      const one = await acme.http.GET('/v1/ledger/journal-entries/{id}', { path: { id: entry.id } });
      expect(one.body.data.id).toBe(entry.id);
    });

    it('charges IGST to another state and nothing on an export', async () => {
      const inter = await acme.http.POST('/v1/invoices', { body: { customer_id: maharashtraCustomer, currency: 'INR', lines: [line(10_000)] } });
      expect(inter.body.data).toMatchObject({ tax_type: 'inter_state', igst_amount: 1800, cgst_amount: 0, total: 11_800 });
      const exp = await acme.http.POST('/v1/invoices', { body: { customer_id: usCustomer, currency: 'USD', lines: [line(10_000)] } });
      expect(exp.body.data).toMatchObject({ tax_type: 'export', tax_amount: 0, total: 10_000 });
    });

    it('keeps a draft unnumbered until finalize, and numbers are contiguous', async () => {
      const draft = await acme.http.POST('/v1/invoices', {
        body: { customer_id: karnatakaCustomer, currency: 'INR', lines: [line(500)], auto_finalize: false },
      });
      expect(draft.body.data).toMatchObject({ status: 'draft', number: null });
      const list = await acme.http.GET('/v1/invoices', { query: { status: 'open', limit: 1000 } });
      const numbers = list.body.data.map((i) => Number(i.number!.slice(4))).sort((a: number, b: number) => a - b);
      const fin = await acme.http.POST('/v1/invoices/{id}/finalize', { path: { id: draft.body.data.id } });
      expect(fin.status).toBe(200);
      expect(Number(fin.body.data.number!.slice(4))).toBe(numbers[numbers.length - 1]! + 1);
      const again = await acme.http.POST('/v1/invoices/{id}/finalize', { path: { id: draft.body.data.id } });
      expect(again.status).toBe(409);
    });

    it('prices a plan line in the invoice currency and refuses a currency the plan lacks', async () => {
      const plan = await acme.http.POST('/v1/plans', {
        body: {
          name: 'Gold',
          code: 'gold',
          interval_unit: 'month',
          amount: 2_000,
          currency: 'INR',
          hsn_code: '998315',
        },
      });
      const ok = await acme.http.POST('/v1/invoices', {
        body: {
          customer_id: karnatakaCustomer,
          currency: 'INR',
          lines: [{ plan_id: plan.body.data.id, quantity: 2 }],
        },
      });
      expect(ok.status).toBe(201);
      expect(ok.body.data.lines[0]).toMatchObject({ description: 'Gold', unit_amount: 2_000, amount: 4_000, hsn_code: '998315', plan_id: plan.body.data.id });
      const bad = await acme.http.POST('/v1/invoices', { body: { customer_id: karnatakaCustomer, currency: 'EUR', lines: [{ plan_id: plan.body.data.id }] } });
      expect(bad.status).toBe(400);
    });

    it.each([
      ['no lines', { lines: [] }],
      ['negative unit amount', { lines: [line(-1)] }],
      ['zero quantity', { lines: [line(1, 0)] }],
      ['bad currency', { currency: 'RUPEES' }],
      ['bad customer id', { customer_id: 'nope' }],
      ['line without amount', { lines: [{ description: 'x' }] }],
    ])('refuses %s with 400', async (_label, patch) => {
      const res = await acme.http.POST('/v1/invoices', { body: { customer_id: karnatakaCustomer, currency: 'INR', lines: [line(100)], ...patch } });
      expect(res.status).toBe(400);
      expect(res.error!.code).toBe('validation_failed');
    });

    it('answers 404 for an unknown or foreign customer', async () => {
      const other = await t.registerTenant();
      const foreign = await other.http.POST('/v1/customers', { body: { email: 'x@other.test' } });
      for (const id of [foreign.body.data.id, '00000000-0000-7000-8000-000000000000']) {
        const res = await acme.http.POST('/v1/invoices', { body: { customer_id: id, currency: 'INR', lines: [line(100)] } });
        expect(res.status).toBe(404);
      }
    });
  });

  describe('void', () => {
    it('voids an open invoice, keeps its number and reverses the entry; a paid one refuses', async () => {
      const inv = (await acme.http.POST('/v1/invoices', { body: { customer_id: karnatakaCustomer, currency: 'INR', lines: [line(1_000)] } })).body.data;
      const voided = await acme.http.POST('/v1/invoices/{id}/void', { path: { id: inv.id } });
      expect(voided.body.data).toMatchObject({ status: 'void', number: inv.number });
      const entries = (await acme.http.GET('/v1/invoices/{id}/journal-entries', { path: { id: inv.id } })).body.data;
      expect(entries.map((e: { kind: string }) => e.kind)).toEqual(['invoice.finalized', 'invoice.voided']);
      expect((await acme.http.POST('/v1/invoices/{id}/void', { path: { id: inv.id } })).status).toBe(409);

      const paid = (await acme.http.POST('/v1/invoices', { body: { customer_id: karnatakaCustomer, currency: 'INR', lines: [line(1_000)] } })).body.data;
      await acme.http.POST('/v1/payments/offline', { body: { customer_id: karnatakaCustomer, invoice_id: paid.id, payment_type: 'cash', amount: paid.total } });
      const refused = await acme.http.POST('/v1/invoices/{id}/void', { path: { id: paid.id } });
      expect(refused.status).toBe(409);
      expect(refused.error!.message).toMatch(/paid|payments/);
    });
  });

  describe('the ledger', () => {
    it('refuses an unbalanced entry and any edit, in the database itself', async () => {
      const db = t.database.db;
      const { sql } = await import('kysely');
      const entry = await db.selectFrom('journal_entries').selectAll().where('tenant_id', '=', acme.tenantId).executeTakeFirstOrThrow();
      await expect(sql`UPDATE journal_lines SET debit = debit + 1 WHERE tenant_id = ${acme.tenantId} AND entry_id = ${entry.id}`.execute(db)).rejects.toThrow(
        /append-only/,
      );
      await expect(sql`DELETE FROM journal_entries WHERE tenant_id = ${acme.tenantId} AND id = ${entry.id}`.execute(db)).rejects.toThrow(/append-only/);
      await expect(
        db.transaction().execute(async (tx) => {
          const id = '01900000-0000-7000-8000-000000000001';
          await sql`INSERT INTO journal_entries (tenant_id, id, ledger_id, entity_id, kind, reference_type, reference_id, currency, posted_at)
                    VALUES (${acme.tenantId}, ${id}, 1, ${entry.entity_id}, 'test', 'test', ${id}, 'INR', now())`.execute(tx);
          await sql`INSERT INTO journal_lines (tenant_id, id, entry_id, account_code, debit) VALUES (${acme.tenantId}, ${id}, ${id}, 1000, 5)`.execute(tx);
          await sql`INSERT INTO journal_lines (tenant_id, id, entry_id, account_code, credit) VALUES (${acme.tenantId}, '01900000-0000-7000-8000-000000000002', ${id}, 4000, 4)`.execute(
            tx,
          );
        }),
      ).rejects.toThrow(/unbalanced/);
    });
  });
});
