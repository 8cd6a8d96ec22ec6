import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKosh, type ApiResponse, type Tenant, type TestKosh } from '../support/harness.js';
import { createCustomer, createInvoice, gstinFor } from '../support/billing.js';

/**
 * The customer balance statement (DESIGN §20, issue #28 item 3, decision 0281):
 * `GET /v1/customers/{id}/balance` per currency and source, `GET …/balance-transactions` every
 * movement with its document, and the same two on the customer portal.
 */
let t: TestKosh;
let acme: Tenant;
let customer: string;

beforeAll(async () => {
  t = await startTestKosh();
  acme = await t.registerTenant({ gstin: gstinFor('29') });
  customer = await createCustomer(acme, { gstin: gstinFor('29', 'BBBBB2222B1Z') });
});
afterAll(() => t.close());

const minute = () => t.clock.advance(60_000);

describe('customer balance', () => {
  it('shows advances and credit notes per currency, every movement with its document, paged by cursor; the portal shows the same', async () => {
    // An empty statement first.
    const empty = await acme.http.GET('/v1/customers/{id}/balance', { path: { id: customer } });
    expect(empty.status, empty.text).toBe(200);
    expect(empty.body.data).toEqual({ object: 'customer_balance', customer_id: customer, balances: [] });

    // ₹11,800 advance (receipt voucher RV-000001), then ₹500 goodwill credit, then $20 goodwill credit.
    const paid = await acme.http.POST('/v1/payments/offline', { body: { customer_id: customer, payment_type: 'bank_transfer', amount: 1_180_000 } });
    expect(paid.status, paid.text).toBe(201);
    minute();
    const inr = await acme.http.POST('/v1/credit-notes', { body: { customer_id: customer, amount: 50_000, currency: 'INR', reason: 'goodwill' } });
    expect(inr.status, inr.text).toBe(201);
    minute();
    const usd = await acme.http.POST('/v1/credit-notes', { body: { customer_id: customer, amount: 2_000, currency: 'USD', reason: 'goodwill' } });
    expect(usd.status, usd.text).toBe(201);
    minute();

    let balance = (await acme.http.GET('/v1/customers/{id}/balance', { path: { id: customer } })).body.data;
    // INR: 11,800 + 500 = 12,300.00; USD: 20.00 of credit.
    expect(balance.balances).toEqual([
      { currency: 'INR', available: 1_230_000, sources: { advances: 1_180_000, credit_notes: 50_000, prepaid_credit: 0, promotional_credit: 0 } },
      { currency: 'USD', available: 2_000, sources: { advances: 0, credit_notes: 2_000, prepaid_credit: 0, promotional_credit: 0 } },
    ]);

    // An invoice of ₹5,000 + 18 % = ₹5,900 takes the credit note first (500.00), then 5,400.00 of the advance.
    const invoice = await createInvoice(acme, customer, [500_000], { auto_finalize: true });
    expect(invoice).toMatchObject({ status: 'paid', amount_due: 0 });
    balance = (await acme.http.GET('/v1/customers/{id}/balance', { path: { id: customer } })).body.data;
    // Advances 11,800 − 5,400 = 6,400.00; the INR note is spent.
    expect(balance.balances[0]).toEqual({
      currency: 'INR',
      available: 640_000,
      sources: { advances: 640_000, credit_notes: 0, prepaid_credit: 0, promotional_credit: 0 },
    });

    // The statement, newest first (the two applications share the invoice's instant: only their set is fixed).
    const all = await acme.http.GET('/v1/customers/{id}/balance-transactions', { path: { id: customer }, query: { limit: 10 } });
    expect(all.status, all.text).toBe(200);
    const rows = all.body.data as { type: string; amount: number; currency: string; document: { type: string; id: string; number: string | null } }[];
    expect(rows.map((r) => [r.type, r.amount, r.currency]).slice(0, 2)).toEqual(
      expect.arrayContaining([
        ['advance_applied', -540_000, 'INR'],
        ['credit_note_applied', -50_000, 'INR'],
      ]),
    );
    expect(rows.slice(2).map((r) => [r.type, r.amount, r.currency])).toEqual([
      ['credit_note_issued', 2_000, 'USD'],
      ['credit_note_issued', 50_000, 'INR'],
      ['advance_received', 1_180_000, 'INR'],
    ]);
    expect(rows.find((r) => r.type === 'advance_applied')!.document).toEqual({ type: 'invoice', id: invoice.id, number: invoice.number });
    expect(rows[4]!.document).toMatchObject({ type: 'receipt_voucher', number: 'RV-000001' });
    expect(rows[3]!.document).toMatchObject({ type: 'credit_note', id: inr.body.data.id, number: inr.body.data.number });
    // The INR movements add up to the INR balance: 11,800 + 500 − 500 − 5,400 = 6,400.
    expect(rows.filter((r) => r.currency === 'INR').reduce((a, r) => a + r.amount, 0)).toBe(640_000);

    // Cursor paging: two at a time, then the rest after the second.
    const first = await acme.http.GET('/v1/customers/{id}/balance-transactions', { path: { id: customer }, query: { limit: 2 } });
    expect(first.body).toMatchObject({ has_more: true, total_count: 5 });
    const next = await acme.http.GET('/v1/customers/{id}/balance-transactions', {
      path: { id: customer },
      query: { limit: 10, starting_after: first.body.data[1]!.id },
    });
    expect(next.body.data.map((r: { id: string }) => r.id)).toEqual(rows.slice(2).map((r) => (r as unknown as { id: string }).id));
    expect(next.body.has_more).toBe(false);
    // Filters: one currency, one source.
    const dollars = await acme.http.GET('/v1/customers/{id}/balance-transactions', { path: { id: customer }, query: { currency: 'USD' } });
    expect(dollars.body.data.map((r: { type: string }) => r.type)).toEqual(['credit_note_issued']);
    const advances = await acme.http.GET('/v1/customers/{id}/balance-transactions', { path: { id: customer }, query: { source: 'advances' } });
    expect(advances.body.data.map((r: { type: string }) => r.type)).toEqual(['advance_applied', 'advance_received']);

    // Another tenant's customer, or nonsense, is refused in the envelope.
    const other = await t.registerTenant({ gstin: gstinFor('27') });
    expect((await other.http.GET('/v1/customers/{id}/balance', { path: { id: customer } })).status).toBe(404);
    expect((await acme.http.GET('/v1/customers/{id}/balance-transactions', { path: { id: customer }, query: { currency: 'XYZ' } })).status).toBe(400);

    // The portal: the signed-in customer sees the same balance and statement.
    const link = await acme.http.POST('/v1/customers/{id}/portal-sessions', { path: { id: customer } });
    const opened = await t.call({ method: 'GET', url: `/portal/login?token=${encodeURIComponent(link.body.data.token)}` });
    const cookie = sessionCookie(opened);
    const portalBalance = await t.call({ method: 'GET', url: '/portal/api/balance', headers: { cookie } });
    expect(portalBalance.status, portalBalance.text).toBe(200);
    expect(portalBalance.body.data).toEqual(balance);
    const portalRows = await t.call({ method: 'GET', url: '/portal/api/balance-transactions?limit=10', headers: { cookie } });
    expect(portalRows.body.data).toEqual(all.body.data);
    expect((await t.call({ method: 'GET', url: '/portal/api/balance' })).status).toBe(401);
  });
});

function sessionCookie(res: ApiResponse): string {
  const header = res.headers['set-cookie'];
  return String(Array.isArray(header) ? header[0] : header).split(';')[0]!;
}
