import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKosh, type Tenant, type TestKosh } from '../support/harness.js';
import { createCustomer, createInvoice, gstinFor } from '../support/billing.js';

/**
 * A top-up of prepaid credit paid in parts, in a foreign currency, and its number (decision 0840,
 * after 0700): each payment received against the top-up is an advance of its own date, with its
 * own receipt voucher (CGST Act s.13(2) and its Explanation (i); CGST Rules, rule 50) valued in
 * rupees at the rate of that date (rule 34); the credit is granted when the top-up is paid in
 * full; the top-up is numbered in its own series, so the tax invoices stay consecutive. The tenant
 * is in Karnataka (29); a customer with no state is intra-state (CGST 9 % + SGST 9 %).
 */
let t: TestKosh;
let acme: Tenant;
let entityId: string;

type Line = {
  account_code: number;
  debit: number;
  credit: number;
  functional_debit: number | null;
  functional_credit: number | null;
  invoice_id: string | null;
};
type Entry = { kind: string; reference_id: string; posted_at: string; lines: Line[] };

beforeAll(async () => {
  t = await startTestKosh();
  acme = await t.registerTenant({ gstin: gstinFor('29') });
  entityId = (await acme.http.GET('/v1/entities')).body.data[0]!.id;
});
afterAll(() => t.close());

async function grantTopUp(customer: string, body: { amount: number; name?: string }) {
  const res = await acme.http.POST('/v1/customers/{id}/credit-grants', { path: { id: customer }, body: { category: 'paid', currency: 'INR', ...body } });
  expect(res.status, res.text).toBe(201);
  const topUp = (await acme.http.GET('/v1/invoices/{id}', { path: { id: res.body.data.invoice_id! } })).body.data;
  return { grant: res.body.data, topUp };
}

async function payPart(customer: string, invoiceId: string, amount: number, currency = 'INR') {
  const res = await acme.http.POST('/v1/payments/offline', {
    body: { customer_id: customer, invoice_id: invoiceId, amount, currency, payment_type: 'bank_transfer' },
  });
  expect(res.status, res.text).toBe(201);
}

const vouchersOf = async (customer: string) =>
  ((await acme.http.GET('/v1/advances', { query: { customer_id: customer } })).body.data as Record<string, unknown>[]).sort((a, b) =>
    String(a.receipt_voucher_number) < String(b.receipt_voucher_number) ? -1 : 1,
  );

/** The entries of a kind referencing one of `ids`, each as account → debit − credit (and functional when asked). */
async function entries(kind: string, ids: string[], functional = false) {
  const list = (await acme.http.GET('/v1/ledger/journal-entries', { query: { kind, limit: 1000 } })).body.data as Entry[];
  return ids.map((id) => {
    const e = list.find((x) => x.reference_id === id);
    expect(e, `${kind} ${id}`).toBeDefined();
    const out: Record<number, number> = {};
    for (const l of e!.lines) {
      out[l.account_code] = (out[l.account_code] ?? 0) + (functional ? (l.functional_debit ?? 0) - (l.functional_credit ?? 0) : l.debit - l.credit);
    }
    return out;
  });
}

/** An account's balance tagged with an invoice (credit − debit). */
async function tagged(invoiceId: string, code: number) {
  const list = (await acme.http.GET('/v1/invoices/{id}/journal-entries', { path: { id: invoiceId } })).body.data as Entry[];
  return list.flatMap((e) => e.lines).reduce((s, l) => (l.account_code === code && l.invoice_id === invoiceId ? s + l.credit - l.debit : s), 0);
}

const sequence = (number: string) => Number(/(\d+)$/.exec(number)![1]);

describe('a top-up paid in parts', () => {
  it('issues a receipt voucher per part on its own date, grants the credit on full payment, and draws adjust both vouchers', async () => {
    const customer = await createCustomer(acme);
    // ₹1,000 of credit + ₹180 of GST: the top-up asks ₹1,180 (decision 0700).
    const { grant, topUp } = await grantTopUp(customer, { amount: 100_000, name: 'Wallet' });
    expect(topUp).toMatchObject({ total: 118_000, status: 'open' });

    // 12 April: ₹500 received. Its voucher: 500 × 9 000 / 1 180 = 3 813.56 → CGST ₹38.14, SGST ₹38.14,
    // value ₹423.72. Dr 2330 ₹76.28 / Cr 2100 ₹38.14, Cr 2110 ₹38.14; the credit is not granted yet.
    await payPart(customer, topUp.id, 50_000);
    let vouchers = await vouchersOf(customer);
    expect(vouchers).toHaveLength(1);
    expect(vouchers[0]).toMatchObject({ credit_grant_id: grant.id, amount: 50_000, subtotal: 42_372, cgst_amount: 3_814, sgst_amount: 3_814, igst_amount: 0 });
    expect(String(vouchers[0]!.received_at).slice(0, 7)).toBe('2026-04');
    expect(await entries('credit_grant.tax_on_receipt', [vouchers[0]!.id as string])).toEqual([{ 2330: 7_628, 2100: -3_814, 2110: -3_814 }]);
    expect((await acme.http.GET('/v1/credit-grants/{id}', { path: { id: grant.id } })).body.data).toMatchObject({ status: 'pending' });
    expect(await tagged(topUp.id, 2330)).toBe(118_000 - 7_628);
    expect(await tagged(topUp.id, 1100)).toBe(-68_000);

    // Nothing spendable yet: an invoice draws nothing.
    const early = await createInvoice(acme, customer, [1_000]);
    expect(early).toMatchObject({ amount_credited: 0 });

    // May: the rest, ₹680. Its voucher takes what is left of the split: CGST ₹51.86, SGST ₹51.86,
    // value ₹576.28. Paid in full, the grant is active with the two vouchers' ₹1,000 and ₹180.
    t.clock.advanceDays(35);
    await payPart(customer, topUp.id, 68_000);
    vouchers = await vouchersOf(customer);
    expect(vouchers).toHaveLength(2);
    expect(vouchers[1]).toMatchObject({ amount: 68_000, subtotal: 57_628, cgst_amount: 5_186, sgst_amount: 5_186 });
    expect(String(vouchers[1]!.received_at).slice(0, 7)).toBe('2026-05');
    expect(await entries('credit_grant.tax_on_receipt', [vouchers[1]!.id as string])).toEqual([{ 2330: 10_372, 2100: -5_186, 2110: -5_186 }]);
    expect((await acme.http.GET('/v1/credit-grants/{id}', { path: { id: grant.id } })).body.data).toMatchObject({
      status: 'active',
      amount: 100_000,
      remaining: 100_000,
      tax_amount: 18_000,
    });
    expect(await tagged(topUp.id, 2330)).toBe(100_000);
    expect(await tagged(topUp.id, 2100)).toBe(9_000);

    // ₹500 of service (₹590 with GST) drawn from the credit: d = ₹500 with its ₹45 + ₹45. The draw
    // adjusts the vouchers oldest first: all of the April one (₹500: ₹423.72 + ₹38.14 + ₹38.14), then
    // ₹90 of the May one (₹76.28 + ₹6.86 + ₹6.86).
    const drawn = await createInvoice(acme, customer, [50_000]);
    expect(drawn).toMatchObject({ total: 59_000, amount_credited: 59_000, status: 'paid' });
    const after = (await vouchersOf(customer)) as {
      balance: number;
      tax_open: number;
      movements: { amount: number; subtotal: number; cgst_amount: number }[];
    }[];
    expect(after.map((v) => ({ balance: v.balance, tax_open: v.tax_open }))).toEqual([
      { balance: 0, tax_open: 0 },
      { balance: 59_000, tax_open: 9_000 },
    ]);
    expect(after[0]!.movements).toMatchObject([{ amount: 50_000, subtotal: 42_372, cgst_amount: 3_814 }]);
    expect(after[1]!.movements).toMatchObject([{ amount: 9_000, subtotal: 7_628, cgst_amount: 686 }]);
    // Output tax tagged with the top-up: ₹180 charged on the vouchers less the ₹90 adjusted.
    expect(await tagged(topUp.id, 2100)).toBe(4_500);
    expect(await tagged(topUp.id, 2330)).toBe(50_000);

    // GSTR-1 table 11A of April: the April part, ₹423.72 with ₹38.14 + ₹38.14.
    const april = (await acme.http.GET('/v1/gst/gstr1', { query: { entity_id: entityId, period: '042026' } })).body.data;
    expect(april.at).toEqual([{ pos: '29', sply_ty: 'INTRA', itms: [{ rt: 18, ad_amt: 423.72, iamt: 0, camt: 38.14, samt: 38.14, csamt: 0 }] }]);
    // May: the April voucher adjusted in 11B.
    const may = (await acme.http.GET('/v1/gst/gstr1', { query: { entity_id: entityId, period: '052026' } })).body.data;
    expect(may.txpd).toEqual([{ pos: '29', sply_ty: 'INTRA', itms: [{ rt: 18, ad_amt: 423.72, iamt: 0, camt: 38.14, samt: 38.14, csamt: 0 }] }]);
  });
});

describe('a foreign-currency top-up', () => {
  it("values each part's voucher in rupees at the rate of its date of receipt; the difference to the top-up's rate is realized", async () => {
    const tenant = await t.registerTenant({ gstin: gstinFor('29') });
    const entity = (await tenant.http.GET('/v1/entities')).body.data[0]!.id;
    expect((await tenant.http.PATCH('/v1/entities/{id}', { path: { id: entity }, body: { lut: false } })).status).toBe(200);
    const abroad = await createCustomer(tenant, { billing_address: { country: 'US' } });
    const rate = async (r: string) =>
      expect((await tenant.http.PUT('/v1/entities/{id}/exchange-rates', { path: { id: entity }, body: { currency: 'USD', rate: r } })).status).toBe(200);
    await rate('83.25');
    // USD 100.00 of credit, an export without LUT: IGST 18 %, USD 118.00 asked at ₹83.25.
    const created = await tenant.http.POST('/v1/customers/{id}/credit-grants', {
      path: { id: abroad },
      body: { category: 'paid', currency: 'USD', amount: 10_000 },
    });
    expect(created.status, created.text).toBe(201);
    const topUp = created.body.data.invoice_id as string;
    const pay = async (amount: number) => {
      const res = await tenant.http.POST('/v1/payments/offline', {
        body: {
          customer_id: abroad,
          invoice_id: topUp,
          amount,
          currency: 'USD',
          payment_type: 'bank_transfer',
        },
      });
      expect(res.status, res.text).toBe(201);
    };
    const vouchers = async () =>
      ((await tenant.http.GET('/v1/advances', { query: { customer_id: abroad } })).body.data as Record<string, unknown>[]).sort((a, b) =>
        String(a.receipt_voucher_number) < String(b.receipt_voucher_number) ? -1 : 1,
      );
    const functional = async (id: string) => {
      const list = (await tenant.http.GET('/v1/ledger/journal-entries', { query: { kind: 'credit_grant.tax_on_receipt', limit: 100 } })).body.data as Entry[];
      const out: Record<number, number> = {};
      for (const l of list.find((e) => e.reference_id === id)!.lines)
        out[l.account_code] = (out[l.account_code] ?? 0) + (l.functional_debit ?? 0) - (l.functional_credit ?? 0);
      return out;
    };

    // The next day the rate is ₹85: USD 59.00 received, IGST USD 9.00 → ₹765.00 (rule 34: the rate of
    // the date of receipt). 2330 gives up the USD 9.00 at the top-up's ₹83.25 (₹749.25): ₹15.75 loss.
    t.clock.advanceDays(1);
    await rate('85');
    await pay(5_900);
    let list = await vouchers();
    expect(list[0]).toMatchObject({ amount: 5_900, subtotal: 5_000, igst_amount: 900, exchange_rate: '85', inr_amount: 501_500, inr_igst_amount: 76_500 });
    expect(await functional(list[0]!.id as string)).toEqual({ 2330: 74_925, 2120: -76_500, 4300: 1_575 });

    // Then ₹90: the rest, USD 59.00, IGST USD 9.00 → ₹810.00; 2330 ₹749.25 again, ₹60.75 loss.
    t.clock.advanceDays(1);
    await rate('90');
    await pay(5_900);
    list = await vouchers();
    expect(list[1]).toMatchObject({ amount: 5_900, subtotal: 5_000, igst_amount: 900, exchange_rate: '90', inr_amount: 531_000, inr_igst_amount: 81_000 });
    expect(await functional(list[1]!.id as string)).toEqual({ 2330: 74_925, 2120: -81_000, 4300: 6_075 });
    expect((await tenant.http.GET('/v1/credit-grants/{id}', { path: { id: created.body.data.id } })).body.data).toMatchObject({
      status: 'active',
      amount: 10_000,
      tax_amount: 1_800,
    });
  });
});

describe('numbering', () => {
  it('numbers a top-up in its own TU- series: the tax invoices around it stay consecutive', async () => {
    const customer = await createCustomer(acme, { gstin: gstinFor('29', 'BBBBB2222B1Z') });
    const before = await createInvoice(acme, customer, [10_000]);
    const { topUp } = await grantTopUp(customer, { amount: 10_000 });
    const after = await createInvoice(acme, customer, [10_000]);
    expect(topUp.number).toMatch(/^TU-/);
    expect(sequence(after.number)).toBe(sequence(before.number) + 1);
    expect(after.number.replace(/\d+$/, '')).toBe(before.number.replace(/\d+$/, ''));
    // GSTR-1 table 13 lists no TU- series among invoices.
    const month = (
      await acme.http.GET('/v1/gst/gstr1', {
        query: {
          entity_id: entityId,
          period: `${new Date(t.clock.now().getTime() + 5.5 * 3_600_000).toISOString().slice(5, 7)}${t.clock.now().getUTCFullYear()}`,
        },
      })
    ).body.data;
    expect(JSON.stringify(month.doc_issue)).not.toContain('TU-');
  });
});
