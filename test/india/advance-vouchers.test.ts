import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKosh, type Tenant, type TestKosh } from '../support/harness.js';
import { createCustomer, gstinFor } from '../support/billing.js';

/**
 * Receipt and refund vouchers beyond rupees and in the return (DESIGN §20, decisions 0280, 0400):
 * a dollar advance carries its rate of the date of receipt and its rupee value and tax (CGST
 * Rules, rule 34(2) with CGST Act s.13(2)), on the voucher, on each refund voucher and in GSTR-1
 * tables 11A/11B; and the month's vouchers are listed in table 13 (doc_issue rows 6 and 8).
 */
let t: TestKosh;
let acme: Tenant;
let entityId: string;
let abroad: string; // in the US: an export of services; the entity has no LUT, so IGST 18 % is paid

type Line = { account_code: number; debit: number; credit: number; functional_debit: number | null; functional_credit: number | null };

beforeAll(async () => {
  t = await startTestKosh();
  acme = await t.registerTenant({ gstin: gstinFor('29') });
  entityId = (await acme.http.GET('/v1/entities')).body.data[0]!.id;
  expect((await acme.http.PATCH('/v1/entities/{id}', { path: { id: entityId }, body: { lut: false } })).status).toBe(200);
  abroad = await createCustomer(acme, { billing_address: { country: 'US' } });
});
afterAll(() => t.close());

const gstr1 = async (period: string) => (await acme.http.GET('/v1/gst/gstr1', { query: { entity_id: entityId, period } })).body.data;
async function functionalOf(kind: string, referenceId: string) {
  const list = (await acme.http.GET('/v1/ledger/journal-entries', { query: { kind, limit: 1000 } })).body.data as { reference_id: string; lines: Line[] }[];
  const out: Record<number, number> = {};
  for (const l of list.find((e) => e.reference_id === referenceId)!.lines) {
    out[l.account_code] = (out[l.account_code] ?? 0) + (l.functional_debit ?? 0) - (l.functional_credit ?? 0);
  }
  return out;
}

describe('a dollar advance in rupees', () => {
  it('is refused without a rate: its GST is determined in INR', async () => {
    const res = await acme.api('POST', '/v1/payments/offline', { customer_id: abroad, payment_type: 'bank_transfer', amount: 11_800, currency: 'USD' });
    expect(res.status, res.text).toBe(400);
    expect(res.body.error.details[0].field).toBe('exchange_rate');
  });

  it('carries the rate of its date of receipt and rupee values on its receipt voucher, refund vouchers and tables 11A/11B', async () => {
    // USD 118.00 at 83.25 (April): value USD 100.00, IGST USD 18.00 → ₹9,823.50, IGST ₹1,498.50,
    // value ₹8,325.00.
    const paid = await acme.http.POST('/v1/payments/offline', {
      body: {
        customer_id: abroad,
        payment_type: 'bank_transfer',
        amount: 11_800,
        currency: 'USD',
        exchange_rate: '83.25',
      },
    });
    expect(paid.status, paid.text).toBe(201);
    const advance = (await acme.http.GET('/v1/advances', { query: { customer_id: abroad } })).body.data[0]!;
    expect(advance).toMatchObject({
      currency: 'USD',
      tax_type: 'export',
      place_of_supply: null,
      subtotal: 10_000,
      igst_amount: 1_800,
      exchange_rate: '83.25',
      inr_amount: 982_350,
      inr_subtotal: 832_500,
      inr_cgst_amount: 0,
      inr_sgst_amount: 0,
      inr_igst_amount: 149_850,
      inr_tax_amount: 149_850,
      inr_tax_open: 149_850,
    });
    // The voucher's IGST is booked at its rupee value: Dr 1300 ₹1,498.50 / Cr 2120 ₹1,498.50.
    expect(await functionalOf('advance.received', advance.id)).toEqual({ 1300: 149_850, 2120: -149_850 });

    // Half refunded in April (a later rate in the table changes nothing: the voucher's rate holds):
    // USD 59.00 → value ₹4,162.50, IGST ₹749.25.
    expect((await acme.http.PUT('/v1/entities/{id}/exchange-rates', { path: { id: entityId }, body: { currency: 'USD', rate: '90' } })).status).toBe(200);
    const half = await acme.http.POST('/v1/advances/{id}/refunds', { path: { id: advance.id }, body: { amount: 5_900 } });
    expect(half.status, half.text).toBe(201);
    const voucher = half.body.data.movements[0]!;
    expect(voucher).toMatchObject({ amount: 5_900, igst_amount: 900, inr_amount: 491_175, inr_subtotal: 416_250, inr_igst_amount: 74_925 });
    expect(half.body.data.inr_tax_open).toBe(74_925);
    expect(await functionalOf('advance.refunded', voucher.id)).toMatchObject({ 2120: 74_925, 1300: -74_925 });

    // 11A in April, in rupees and net of the April refund: ₹4,162.50 / IGST ₹749.25.
    const april = await gstr1('042026');
    expect(april.at).toEqual([{ pos: '96', sply_ty: 'INTER', itms: [{ rt: 18, ad_amt: 4162.5, iamt: 749.25, camt: 0, samt: 0, csamt: 0 }] }]);

    // The rest refunded in May: 11B takes exactly what is left of the voucher's rupee tax.
    t.clock.advanceDays(35);
    const rest = await acme.http.POST('/v1/advances/{id}/refunds', { path: { id: advance.id }, body: {} });
    expect(rest.status, rest.text).toBe(201);
    expect(rest.body.data.movements[1]).toMatchObject({ inr_subtotal: 416_250, inr_igst_amount: 74_925 });
    expect(rest.body.data).toMatchObject({ balance: 0, inr_tax_open: 0 });
    const may = await gstr1('052026');
    expect(may.txpd).toEqual([{ pos: '96', sply_ty: 'INTER', itms: [{ rt: 18, ad_amt: 4162.5, iamt: 749.25, camt: 0, samt: 0, csamt: 0 }] }]);
  });
});

describe('GSTR-1 table 13: receipt and refund vouchers', () => {
  it("lists the month's receipt vouchers (row 6) and refund vouchers (row 8) per series, from first to last", async () => {
    const tenant = await t.registerTenant({ gstin: gstinFor('29') });
    const entity = (await tenant.http.GET('/v1/entities')).body.data[0]!.id;
    const customer = await createCustomer(tenant, { gstin: gstinFor('29', 'BBBBB2222B1Z') });
    const month = t.clock.now();
    const period = `${String(month.getUTCMonth() + 1).padStart(2, '0')}${month.getUTCFullYear()}`;
    for (const amount of [118_000, 236_000, 59_000]) {
      expect((await tenant.http.POST('/v1/payments/offline', { body: { customer_id: customer, payment_type: 'bank_transfer', amount } })).status).toBe(201);
    }
    const advances = (await tenant.http.GET('/v1/advances', { query: { customer_id: customer } })).body.data as { id: string; amount: number }[];
    const big = advances.find((a) => a.amount === 236_000)!;
    expect((await tenant.http.POST('/v1/advances/{id}/refunds', { path: { id: big.id }, body: { amount: 100_000 } })).status).toBe(201);
    expect((await tenant.http.POST('/v1/advances/{id}/refunds', { path: { id: big.id }, body: {} })).status).toBe(201);

    const r = (await tenant.http.GET('/v1/gst/gstr1', { query: { entity_id: entity, period } })).body.data;
    const row = (n: number) => r.doc_issue.doc_det.find((d: { doc_num: number }) => d.doc_num === n);
    expect(row(6)).toEqual({
      doc_num: 6,
      doc_typ: 'Receipt voucher',
      docs: [{ num: 1, from: 'RV-000001', to: 'RV-000003', totnum: 3, cancel: 0, net_issue: 3 }],
    });
    expect(row(8)).toEqual({
      doc_num: 8,
      doc_typ: 'Refund voucher',
      docs: [{ num: 1, from: 'RFV-000001', to: 'RFV-000002', totnum: 2, cancel: 0, net_issue: 2 }],
    });
  });
});
