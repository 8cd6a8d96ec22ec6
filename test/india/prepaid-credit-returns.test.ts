import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKosh, type Tenant, type TestKosh } from '../support/harness.js';
import { createCustomer, createInvoice, gstinFor } from '../support/billing.js';

/**
 * Paid prepaid credit in the GST returns (DESIGN §23, decision 0700). A paid top-up is an advance
 * for services: its GST is due when the payment is received (CGST Act s.13(2)), under a receipt
 * voucher (CGST Rules, rule 50) reported in GSTR-1 table 11A; the top-up request itself is no tax
 * invoice. An invoice that draws the credit charges its own GST (table 4) and the voucher's tax
 * on the part drawn is adjusted (table 11B), so GSTR-3B 3.1(a) = invoice tax + advance tax −
 * adjusted advance tax, each rupee of tax counted once — what the output-tax accounts moved.
 * Supplier and customer in Karnataka (29): CGST 9 % + SGST 9 %.
 */
let t: TestKosh;
let acme: Tenant;
let entityId: string;

beforeAll(async () => {
  t = await startTestKosh();
  acme = await t.registerTenant({ gstin: gstinFor('29') });
  entityId = (await acme.http.GET('/v1/entities')).body.data[0]!.id;
});
afterAll(() => t.close());

const gstReturn = async (kind: 'gstr1' | 'gstr3b', period: string) => {
  const res = await acme.api('GET', `/v1/gst/${kind}?entity_id=${entityId}&period=${period}`);
  expect(res.status, res.text).toBe(200);
  return res.body.data;
};

/** What the output-tax accounts moved (credit − debit) in [from, to), per head, in paise. */
async function outputTax(from: string, to: string): Promise<{ cgst: number; sgst: number; igst: number }> {
  const { rows } = await sql<{ account_code: number; n: string }>`
    SELECT l.account_code, sum(l.credit - l.debit)::text AS n FROM journal_lines l JOIN journal_entries e ON e.tenant_id = l.tenant_id AND e.id = l.entry_id
    WHERE l.tenant_id = ${acme.tenantId} AND l.account_code IN (2100, 2110, 2120)
      AND e.posted_at >= ${new Date(from)} AND e.posted_at < ${new Date(to)}
    GROUP BY l.account_code`.execute(t.database.db);
  const of = (code: number) => Number(rows.find((r) => r.account_code === code)?.n ?? 0);
  return { cgst: of(2100), sgst: of(2110), igst: of(2120) };
}

/** GSTR-3B 3.1(a) per head, in paise. */
const paise = (row: { camt: number; samt: number; iamt: number }) => ({
  cgst: Math.round(row.camt * 100),
  sgst: Math.round(row.samt * 100),
  igst: Math.round(row.iamt * 100),
});

async function topUp(customer: string, amount: number) {
  const grant = await acme.http.POST('/v1/customers/{id}/credit-grants', { path: { id: customer }, body: { category: 'paid', amount, currency: 'INR' } });
  expect(grant.status, grant.text).toBe(201);
  const invoice = (await acme.http.GET('/v1/invoices/{id}', { path: { id: grant.body.data.invoice_id! } })).body.data;
  const paid = await acme.http.POST('/v1/payments/offline', {
    body: {
      customer_id: customer,
      invoice_id: invoice.id,
      amount: invoice.amount_due,
      payment_type: 'bank_transfer',
    },
  });
  expect(paid.status, paid.text).toBe(201);
  return { grant: grant.body.data, invoice };
}

describe('paid prepaid credit in the GST returns', () => {
  it('taxes a top-up on its receipt voucher (11A) and adjusts it when an invoice of a later month draws it (11B): GSTR-3B = the books, once', async () => {
    t.clock.set('2026-04-10T00:00:00Z');
    const customer = await createCustomer(acme, { gstin: gstinFor('29', 'BBBBB2222B1Z') });
    // April: ₹1,000 of credit. The top-up asks ₹1,000 + the ₹180 of GST its voucher will charge.
    const { grant, invoice } = await topUp(customer, 100_000);
    expect(invoice).toMatchObject({ billing_reason: 'credit_top_up', tax_type: '', tax_amount: 0, total: 118_000 });
    expect((await acme.http.GET('/v1/credit-grants/{id}', { path: { id: grant.id } })).body.data).toMatchObject({
      status: 'active',
      amount: 100_000,
      remaining: 100_000,
      tax_amount: 18_000,
    });
    const [voucher] = (await acme.http.GET('/v1/advances', { query: { customer_id: customer } })).body.data;
    expect(voucher).toMatchObject({
      credit_grant_id: grant.id,
      payment_id: null,
      amount: 118_000,
      subtotal: 100_000,
      cgst_amount: 9_000,
      sgst_amount: 9_000,
      balance: 118_000,
    });
    // The voucher is the grant's: no refund of it on its own, and no spendable advance in the balance.
    const refund = await acme.http.POST('/v1/advances/{id}/refunds', { path: { id: voucher!.id }, body: { reason: 'no' } });
    expect(refund.status, refund.text).toBe(409);
    expect(refund.error!.reason).toBe('advance_is_prepaid_credit');
    const statement = (await acme.http.GET('/v1/customers/{id}/balance', { path: { id: customer } })).body.data;
    expect(statement.balances).toEqual([
      { currency: 'INR', available: 100_000, sources: { advances: 0, credit_notes: 0, prepaid_credit: 100_000, promotional_credit: 0 } },
    ]);

    // May: ₹500 of service + CGST 45 + SGST 45 = ₹590, settled entirely from the credit (₹500 of
    // credit and the ₹90 of GST its voucher paid on it).
    t.clock.set('2026-05-10T00:00:00Z');
    const may = await createInvoice(acme, customer, [50_000]);
    expect(may).toMatchObject({ status: 'paid', total: 59_000, cgst_amount: 4_500, sgst_amount: 4_500, amount_credited: 59_000 });
    expect((await acme.http.GET('/v1/credit-grants/{id}', { path: { id: grant.id } })).body.data).toMatchObject({ remaining: 50_000 });

    const april = await gstReturn('gstr1', '042026');
    // The top-up request is no tax invoice: not in table 4; its voucher is in 11A.
    expect(april.b2b ?? []).toEqual([]);
    expect(april.at).toEqual([{ pos: '29', sply_ty: 'INTRA', itms: [{ rt: 18, ad_amt: 1000, iamt: 0, camt: 90, samt: 90, csamt: 0 }] }]);
    expect(april.txpd).toEqual([]);
    const mayReturn = await gstReturn('gstr1', '052026');
    expect(mayReturn.b2b[0].inv.map((i: { inum: string }) => i.inum)).toEqual([may.number]);
    expect(mayReturn.b2b[0].inv[0].itms[0].itm_det).toMatchObject({ txval: 500, camt: 45, samt: 45 });
    expect(mayReturn.at).toEqual([]);
    expect(mayReturn.txpd).toEqual([{ pos: '29', sply_ty: 'INTRA', itms: [{ rt: 18, ad_amt: 500, iamt: 0, camt: 45, samt: 45, csamt: 0 }] }]);

    // GSTR-3B 3.1(a): April 90 + 90 on ₹1,000 (the advance); May 45 + 45 (invoice) − 45 − 45
    // (adjusted) = 0. Each equals what the output-tax accounts moved that month; ₹180 in all.
    const april3b = (await gstReturn('gstr3b', '042026')).sup_details.osup_det;
    const may3b = (await gstReturn('gstr3b', '052026')).sup_details.osup_det;
    expect(april3b).toMatchObject({ txval: 1000, camt: 90, samt: 90, iamt: 0 });
    expect(may3b).toMatchObject({ txval: 0, camt: 0, samt: 0, iamt: 0 });
    expect(paise(april3b)).toEqual(await outputTax('2026-04-01T00:00:00+05:30', '2026-05-01T00:00:00+05:30'));
    expect(paise(may3b)).toEqual(await outputTax('2026-05-01T00:00:00+05:30', '2026-06-01T00:00:00+05:30'));
    expect(await outputTax('2026-04-01T00:00:00+05:30', '2026-05-01T00:00:00+05:30')).toEqual({ cgst: 9_000, sgst: 9_000, igst: 0 });
    expect(await outputTax('2026-05-01T00:00:00+05:30', '2026-06-01T00:00:00+05:30')).toEqual({ cgst: 0, sgst: 0, igst: 0 });
  });

  it('nets a draw of the same month out of 11A: the month declares the invoice and the undrawn advance once', async () => {
    t.clock.set('2026-06-05T00:00:00Z');
    const customer = await createCustomer(acme, { gstin: gstinFor('29', 'CCCCC3333C1Z') });
    await topUp(customer, 100_000);
    const june = await createInvoice(acme, customer, [50_000]);
    expect(june).toMatchObject({ status: 'paid', total: 59_000, amount_credited: 59_000 });
    const r1 = await gstReturn('gstr1', '062026');
    // 11A: the ₹1,000 advance less the ₹500 drawn in June = 500 / 45 / 45; nothing in 11B.
    expect(r1.at).toEqual([{ pos: '29', sply_ty: 'INTRA', itms: [{ rt: 18, ad_amt: 500, iamt: 0, camt: 45, samt: 45, csamt: 0 }] }]);
    expect(r1.txpd).toEqual([]);
    // 3.1(a): invoice 500 / 45 / 45 + advance 500 / 45 / 45 = 1,000 / 90 / 90 = the books.
    const june3b = (await gstReturn('gstr3b', '062026')).sup_details.osup_det;
    expect(june3b).toMatchObject({ txval: 1000, camt: 90, samt: 90, iamt: 0 });
    expect(paise(june3b)).toEqual(await outputTax('2026-06-01T00:00:00+05:30', '2026-07-01T00:00:00+05:30'));
  });

  it('an unpaid top-up carries no GST anywhere, and voiding it leaves nothing behind', async () => {
    t.clock.set('2026-07-05T00:00:00Z');
    const customer = await createCustomer(acme, { gstin: gstinFor('29', 'DDDDD4444D1Z') });
    const grant = await acme.http.POST('/v1/customers/{id}/credit-grants', {
      path: { id: customer },
      body: { category: 'paid', amount: 100_000, currency: 'INR' },
    });
    expect(grant.status, grant.text).toBe(201);
    const july = await gstReturn('gstr1', '072026');
    expect(july.at).toEqual([]);
    expect(july.b2b ?? []).toEqual([]);
    expect(await outputTax('2026-07-01T00:00:00+05:30', '2026-08-01T00:00:00+05:30')).toEqual({ cgst: 0, sgst: 0, igst: 0 });
    expect((await acme.http.POST('/v1/credit-grants/{id}/void', { path: { id: grant.body.data.id } })).status).toBe(200);
    expect((await acme.http.GET('/v1/advances', { query: { customer_id: customer } })).body.data).toEqual([]);
  });
});
