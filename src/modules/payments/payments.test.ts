import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKosh, type Tenant, type TestKosh } from '../../../test/support/harness.js';
import { createCustomer, createInvoice, gstinFor } from '../../../test/support/billing.js';
import { onPostgresServer } from '../../../test/support/database.js';

let t: TestKosh;
let acme: Tenant;
let customer: string;

beforeAll(async () => {
  t = await startTestKosh();
  acme = await t.registerTenant({ gstin: gstinFor('29') });
  customer = await createCustomer(acme, { gstin: gstinFor('29', 'BBBBB2222B1Z') });
});
afterAll(() => t.close());

const pay = (body: Record<string, unknown>) => acme.api('POST', '/v1/payments/offline', { customer_id: customer, payment_type: 'bank_transfer', ...body });

describe('offline payments', () => {
  describe('record', () => {
    it('settles an invoice in part, then in full with TDS, booking cash and TDS receivable', async () => {
      const inv = await createInvoice(acme, customer, [100_000]); // 118 000 with GST
      const part = await pay({ invoice_id: inv.id, amount: 50_000, reference_number: 'UTR123', notes: 'first half', recorded_by: 'ops@acme' });
      expect(part.status).toBe(201);
      expect(part.body.data).toMatchObject({
        amount: 50_000,
        tds_amount: 0,
        currency: 'INR',
        status: 'succeeded',
        channel: 'offline',
        reference_number: 'UTR123',
        recorded_by: 'ops@acme',
      });
      let current = (await acme.http.GET('/v1/invoices/{id}', { path: { id: inv.id } })).body.data;
      expect(current).toMatchObject({ status: 'open', amount_paid: 50_000, amount_due: 68_000 });

      // The customer withholds 10% TDS on the taxable value and pays the rest.
      const rest = await pay({ invoice_id: inv.id, amount: 58_000, tds_amount: 10_000 });
      expect(rest.status).toBe(201);
      current = (await acme.http.GET('/v1/invoices/{id}', { path: { id: inv.id } })).body.data;
      expect(current).toMatchObject({ status: 'paid', amount_due: 0, amount_paid: 118_000, amount_tds: 10_000 });
      expect(current.paid_at).not.toBeNull();

      const entries = (await acme.http.GET('/v1/invoices/{id}/journal-entries', { path: { id: inv.id } })).body.data;
      const last = entries[entries.length - 1]!;
      expect(last.kind).toBe('payment.recorded');
      const byAccount = Object.fromEntries(
        last.lines.map((l: { account_code: number; debit: number; credit: number }) => [l.account_code, l.debit - l.credit]),
      );
      expect(byAccount).toEqual({ 1000: 58_000, 1200: 10_000, 1100: -68_000 });
    });

    it('records a payment without an invoice as a customer advance', async () => {
      // Its own customer: an advance pays the customer's next invoices (decision 0280).
      const other = await createCustomer(acme, { gstin: gstinFor('29', 'BBBBB2222B1Z') });
      const res = await acme.http.POST('/v1/payments/offline', { body: { customer_id: other, payment_type: 'cash', amount: 7_500 } });
      expect(res.status).toBe(201);
      expect(res.body.data.invoice_id).toBeNull();
      const advances = (await acme.http.GET('/v1/advances', { query: { customer_id: other } })).body.data;
      expect(advances).toMatchObject([{ payment_id: res.body.data.id, amount: 7_500, balance: 7_500 }]);
    });

    it('defaults the currency to INR and lists payments newest first', async () => {
      const list = await acme.http.GET('/v1/payments', { query: { customer_id: customer } });
      expect(list.body.total_count).toBe(2);
      expect(list.body.data[0]).toMatchObject({ amount: 58_000, currency: 'INR' });
      const one = await acme.http.GET('/v1/payments/{id}', { path: { id: list.body.data[0]!.id } });
      expect(one.body.data.id).toBe(list.body.data[0]!.id);
    });
  });

  describe('refusals', () => {
    it.each([
      ['zero amount', { amount: 0 }],
      ['negative amount', { amount: -100 }],
      ['negative TDS', { amount: 100, tds_amount: -1 }],
      ['unknown payment_type', { amount: 100, payment_type: 'upi' }],
      ['notes over 500 characters', { amount: 100, notes: 'x'.repeat(501) }],
      ['bad invoice id', { amount: 100, invoice_id: 'abc' }],
      ['TDS without an invoice', { amount: 100, tds_amount: 10 }],
    ])('answers 400 for %s', async (_label, body) => {
      const res = await pay(body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('validation_failed');
    });

    it('answers 400 when amount + TDS exceed the balance or the currency differs', async () => {
      const inv = await createInvoice(acme, customer, [1_000]); // 1 180
      expect((await pay({ invoice_id: inv.id, amount: 1_181 })).status).toBe(400);
      expect((await pay({ invoice_id: inv.id, amount: 1_000, tds_amount: 181 })).status).toBe(400);
      expect((await pay({ invoice_id: inv.id, amount: 1_180, currency: 'USD' })).status).toBe(400);
      const unchanged = (await acme.http.GET('/v1/invoices/{id}', { path: { id: inv.id } })).body.data;
      expect(unchanged.amount_due).toBe(1_180);
    });

    it('answers 409 for a void or already paid invoice', async () => {
      const inv = await createInvoice(acme, customer, [1_000]);
      await acme.http.POST('/v1/invoices/{id}/void', { path: { id: inv.id } });
      const res = await pay({ invoice_id: inv.id, amount: 100 });
      expect(res.status).toBe(409);
      expect(res.body.error.message).toContain('void');
    });

    it('answers 404 (not SPEC 4.4 500) for a customer or invoice outside the tenant', async () => {
      const other = await t.registerTenant();
      const foreignCustomer = await createCustomer(other);
      const foreignInvoice = await createInvoice(other, foreignCustomer, [100]);
      expect((await pay({ customer_id: foreignCustomer, amount: 100 })).status).toBe(404);
      expect((await pay({ invoice_id: foreignInvoice.id, amount: 100 })).status).toBe(404);
      expect((await pay({ customer_id: '00000000-0000-7000-8000-000000000000', amount: 100 })).status).toBe(404);
    });
  });

  describe('concurrency', () => {
    it.runIf(onPostgresServer)('never applies more than the balance when payments race', async () => {
      const inv = await createInvoice(acme, customer, [10_000]); // 11 800
      const results = await Promise.all(Array.from({ length: 20 }, () => pay({ invoice_id: inv.id, amount: 1_000 })));
      const ok = results.filter((r) => r.status === 201).length;
      expect(ok).toBe(11);
      expect(results.filter((r) => r.status === 400 || r.status === 409)).toHaveLength(9);
      const final = (await acme.http.GET('/v1/invoices/{id}', { path: { id: inv.id } })).body.data;
      expect(final.amount_paid).toBe(11_000);
      expect(final.amount_due).toBe(800);
    });
  });
});
