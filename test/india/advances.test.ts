import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKosh, type Tenant, type TestKosh } from '../support/harness.js';
import { createCustomer, createInvoice, gstinFor } from '../support/billing.js';
import { signTestWebhook, TEST_SIGNATURE_HEADER } from '../../src/modules/collections/index.js';

/**
 * Customer advances (DESIGN §20, issue #28 item 2, decision 0280): money received before any
 * invoice carries GST for services (CGST Act s.13(2)) under a receipt voucher (rule 50), is spent
 * on the customer's next invoices with that tax adjusted (GSTR-1 11B), and can be refunded with a
 * refund voucher (rule 51) that reverses it. Figures worked by hand in the comments.
 */
let t: TestKosh;
let acme: Tenant;
let local: string; // registered in Karnataka (29), as the supplier: intra-state
let mumbai: string; // unregistered, billed in Maharashtra (27): inter-state

beforeAll(async () => {
  t = await startTestKosh();
  acme = await t.registerTenant({ gstin: gstinFor('29') });
  local = await createCustomer(acme, { gstin: gstinFor('29', 'BBBBB2222B1Z') });
  mumbai = await createCustomer(acme, { billing_address: { state_code: '27', country: 'IN' } });
});
afterAll(() => t.close());

type Line = { account_code: number; debit: number; credit: number };
const net = (lines: Line[]) => {
  const out: Record<number, number> = {};
  for (const l of lines) out[l.account_code] = (out[l.account_code] ?? 0) + l.debit - l.credit;
  return out;
};
async function entry(kind: string, referenceId?: string) {
  const list = (await acme.http.GET('/v1/ledger/journal-entries', { query: { kind, limit: 1000 } })).body.data as { reference_id: string; lines: Line[] }[];
  const found = referenceId ? list.filter((e) => e.reference_id === referenceId) : list;
  return found.map((e) => net(e.lines));
}
const advancesOf = async (customer: string) => (await acme.http.GET('/v1/advances', { query: { customer_id: customer } })).body.data;
const pay = (customer: string, body: Record<string, unknown>) =>
  acme.api('POST', '/v1/payments/offline', { customer_id: customer, payment_type: 'bank_transfer', ...body });

describe('customer advances', () => {
  it('an offline payment without an invoice is an advance: a receipt voucher with GST, spent on the next invoices with that GST adjusted', async () => {
    // ₹11,800 received, services at 18 %, intra-state: value 11,800 × 100/118 = 10,000.00,
    // CGST 900.00, SGST 900.00.
    const paid = await pay(local, { amount: 1_180_000, reference_number: 'UTR-ADV-1' });
    expect(paid.status, paid.text).toBe(201);
    const [advance] = await advancesOf(local);
    expect(advance).toMatchObject({
      object: 'advance',
      payment_id: paid.body.data.id,
      receipt_voucher_number: 'RV-000001',
      amount: 1_180_000,
      subtotal: 1_000_000,
      cgst_amount: 90_000,
      sgst_amount: 90_000,
      igst_amount: 0,
      rate_bp: 1800,
      hsn_code: '998314',
      tax_type: 'intra_state',
      place_of_supply: '29',
      balance: 1_180_000,
      tax_open: 180_000,
      movements: [],
    });
    // The money: Dr cash / Cr 2310; the voucher's GST: Dr 1300 / Cr 2100, 2110.
    expect(await entry('payment.recorded', paid.body.data.id)).toEqual([{ 1000: 1_180_000, 2310: -1_180_000 }]);
    expect(await entry('advance.received', advance!.id)).toEqual([{ 1300: 180_000, 2100: -90_000, 2110: -90_000 }]);

    // The next invoice, ₹5,000 + 18 % = ₹5,900, is paid by the advance at finalization. The 5,900
    // carries 5,900/11,800 of the voucher's tax: CGST 450.00, SGST 450.00 (value 5,000.00).
    const first = await createInvoice(acme, local, [500_000], { auto_finalize: true });
    expect(first).toMatchObject({ status: 'paid', total: 590_000, amount_paid: 590_000, amount_due: 0, cgst_amount: 45_000, sgst_amount: 45_000 });
    let after = (await acme.http.GET('/v1/advances/{id}', { path: { id: advance!.id } })).body.data;
    expect(after).toMatchObject({ balance: 590_000, tax_open: 90_000 });
    expect(after.movements).toMatchObject([
      { kind: 'applied', invoice_id: first.id, amount: 590_000, subtotal: 500_000, cgst_amount: 45_000, sgst_amount: 45_000, igst_amount: 0 },
    ]);
    // Dr 2310 5,900 / Cr 1100 5,900 (the invoice); Dr 2100 450, Dr 2110 450 / Cr 1300 900.
    expect(await entry('advance.applied', after.movements[0]!.id)).toEqual([{ 2310: 590_000, 1100: -590_000, 2100: 45_000, 2110: 45_000, 1300: -90_000 }]);

    // A second invoice of ₹10,000 + 18 % = ₹11,800 takes the remaining ₹5,900 and still owes ₹5,900.
    const second = await createInvoice(acme, local, [1_000_000], { auto_finalize: true });
    expect(second).toMatchObject({ status: 'open', total: 1_180_000, amount_paid: 590_000, amount_due: 590_000 });
    after = (await acme.http.GET('/v1/advances/{id}', { path: { id: advance!.id } })).body.data;
    expect(after).toMatchObject({ balance: 0, tax_open: 0 });
    expect(after.movements[1]).toMatchObject({ invoice_id: second.id, amount: 590_000, cgst_amount: 45_000, sgst_amount: 45_000 });

    // GST is charged once: CGST payable = 900 (voucher) + 450 + 900 (invoices) − 450 − 450
    // (adjusted) = 1,350.00 = the two invoices' CGST; 1300 is back to zero.
    const tb = (await acme.http.GET('/v1/ledger/trial-balance', { query: { currency: 'INR' } })).body.data.accounts as {
      code: number;
      debit: number;
      credit: number;
    }[];
    const balance = (code: number) => {
      const a = tb.find((x) => x.code === code);
      return a ? a.credit - a.debit : 0;
    };
    expect(balance(2100)).toBe(135_000);
    expect(balance(2110)).toBe(135_000);
    expect(balance(1300)).toBe(0);
    expect(balance(2310)).toBe(0);
  });

  it('an advance received after the invoice is applied by POST /v1/invoices/{id}/apply-balance', async () => {
    // Inter-state (Maharashtra): ₹1,180 → value 1,000.00, IGST 180.00. The open invoice is ₹590
    // (500 + IGST 90): the advance pays it, adjusting IGST 90.00 (590/1,180 of 180).
    const invoice = await createInvoice(acme, mumbai, [50_000], { auto_finalize: true });
    expect(invoice).toMatchObject({ status: 'open', amount_due: 59_000, igst_amount: 9_000 });
    await pay(mumbai, { amount: 118_000 });
    const [advance] = await advancesOf(mumbai);
    expect(advance).toMatchObject({ tax_type: 'inter_state', place_of_supply: '27', subtotal: 100_000, igst_amount: 18_000, cgst_amount: 0 });
    const applied = await acme.http.POST('/v1/invoices/{id}/apply-balance', { path: { id: invoice.id } });
    expect(applied.status, applied.text).toBe(200);
    expect(applied.body.data).toMatchObject({ status: 'paid', amount_due: 0, amount_paid: 59_000 });
    const after = (await acme.http.GET('/v1/advances/{id}', { path: { id: advance!.id } })).body.data;
    expect(after).toMatchObject({ balance: 59_000, tax_open: 9_000 });
    expect(await entry('advance.applied', after.movements[0]!.id)).toEqual([{ 2310: 59_000, 1100: -59_000, 2120: 9_000, 1300: -9_000 }]);
    // Nothing left to apply on a paid invoice: 409.
    const again = await acme.http.POST('/v1/invoices/{id}/apply-balance', { path: { id: invoice.id } });
    expect(again.status).toBe(409);
  });

  it('refunds an advance with refund vouchers that reverse its GST', async () => {
    // ₹2,360 inter-state: value 2,000.00, IGST 360.00. Refund ₹1,180 → IGST 180.00 reversed
    // (refund voucher RFV-000001); then the rest (₹1,180, IGST 180.00: RFV-000002).
    await pay(mumbai, { amount: 236_000 });
    const advance = (await advancesOf(mumbai)).find((a: { amount: number }) => a.amount === 236_000);
    expect(advance).toMatchObject({ igst_amount: 36_000, subtotal: 200_000 });

    const tooMuch = await acme.http.POST('/v1/advances/{id}/refunds', { path: { id: advance!.id }, body: { amount: 236_001 } });
    expect(tooMuch.status).toBe(400);
    expect(tooMuch.error!.details![0]!.field).toBe('amount');

    const half = await acme.http.POST('/v1/advances/{id}/refunds', { path: { id: advance!.id }, body: { amount: 118_000, reason: 'project canceled' } });
    expect(half.status, half.text).toBe(201);
    expect(half.body.data).toMatchObject({ balance: 118_000, tax_open: 18_000 });
    const voucher = half.body.data.movements[0];
    expect(voucher).toMatchObject({
      kind: 'refunded',
      refund_voucher_number: 'RFV-000001',
      amount: 118_000,
      subtotal: 100_000,
      igst_amount: 18_000,
      reason: 'project canceled',
    });
    // Dr 2310 1,180 / Cr 2320 refunds payable 1,180; Dr 2120 180 / Cr 1300 180.
    expect(await entry('advance.refunded', voucher!.id)).toEqual([{ 2310: 118_000, 2320: -118_000, 2120: 18_000, 1300: -18_000 }]);

    const rest = await acme.http.POST('/v1/advances/{id}/refunds', { path: { id: advance!.id }, body: {} });
    expect(rest.status, rest.text).toBe(201);
    expect(rest.body.data).toMatchObject({ balance: 0, tax_open: 0 });
    expect(rest.body.data.movements[1]).toMatchObject({ refund_voucher_number: 'RFV-000002', amount: 118_000, igst_amount: 18_000 });
    const none = await acme.http.POST('/v1/advances/{id}/refunds', { path: { id: advance!.id }, body: {} });
    expect(none.status).toBe(409);
    expect(none.error!.reason).toBe('advance_exhausted');
  });

  it('an entity without a GSTIN takes advances without GST, and a goods advance carries none', async () => {
    const shop = await acme.http.POST('/v1/entities', { body: { name: 'Small Shop', invoice_prefix: 'UR-', state_code: '29' } });
    expect(shop.status, shop.text).toBe(201);
    const paid = await pay(local, { amount: 50_000, entity_id: shop.body.data.id });
    expect(paid.status, paid.text).toBe(201);
    const advance = (await advancesOf(local)).find((a: { entity_id: string }) => a.entity_id === shop.body.data.id);
    expect(advance).toMatchObject({ amount: 50_000, subtotal: 50_000, tax_amount: 0, rate_bp: 0, tax_type: '', place_of_supply: null });
    expect(await entry('advance.received', advance!.id)).toEqual([]);

    // Tea (HSN 0902) from the registered entity: no GST on an advance for goods (Notification 66/2017-CT).
    const tea = await pay(local, { amount: 21_000, hsn_code: '0902' });
    expect(tea.status, tea.text).toBe(201);
    const goods = (await advancesOf(local)).find((a: { hsn_code: string }) => a.hsn_code === '0902');
    expect(goods).toMatchObject({ tax_type: 'intra_state', tax_amount: 0, rate_bp: 0 });

    // An advance names no invoice: entity_id with invoice_id is refused.
    const inv = await createInvoice(acme, local, [1_000]);
    const both = await pay(local, { amount: 1, invoice_id: inv.id, entity_id: shop.body.data.id });
    expect(both.status).toBe(400);
  });
});

describe('gateway money an invoice no longer needed', () => {
  it('becomes an advance with its receipt voucher and GST', async () => {
    const tenant = await t.registerTenant({ gstin: gstinFor('29') });
    const secret = 'whsec_advances';
    const conn = await tenant.http.POST('/v1/gateway-connections', {
      body: { provider: 'test', credentials: { webhook_secret: secret }, currencies: ['INR'] },
    });
    expect(conn.status, conn.text).toBe(201);
    const customer = await createCustomer(tenant, { gstin: gstinFor('29', 'BBBBB2222B1Z') });
    const pm = await tenant.http.POST('/v1/customers/{id}/payment-methods', { path: { id: customer }, body: { token: 'tok_pending' } });
    // ₹3,000 + 18 % = ₹3,540: a card charge is pending when the customer pays the invoice by bank transfer.
    const inv = await createInvoice(tenant, customer, [300_000], { auto_finalize: true });
    expect((await tenant.http.POST('/v1/invoices/{id}/pay', { path: { id: inv.id }, body: { payment_method_id: pm.body.data.id } })).body.data.status).toBe(
      'open',
    );
    const attempt = (await t.database.db
      .selectFrom('payment_attempts')
      .select(['gateway_payment_id'])
      .where('tenant_id', '=', tenant.tenantId)
      .where('invoice_id', '=', inv.id)
      .executeTakeFirstOrThrow())!;
    const bank = await tenant.http.POST('/v1/payments/offline', {
      body: {
        customer_id: customer,
        invoice_id: inv.id,
        payment_type: 'bank_transfer',
        amount: 354_000,
      },
    });
    expect(bank.status, bank.text).toBe(201);
    // Then the card charge succeeds: the ₹3,540 is the customer's advance — value 3,000.00, CGST 270.00, SGST 270.00.
    const body = JSON.stringify({
      id: 'evt_late',
      type: 'payment.succeeded',
      data: { payment_id: attempt.gateway_payment_id, amount: 354_000, currency: 'INR' },
    });
    const hook = await t.call({
      method: 'POST',
      url: `/webhooks/gateways/test/${conn.body.data.id}`,
      headers: { 'content-type': 'application/json', [TEST_SIGNATURE_HEADER]: signTestWebhook(body, secret, t.clock.now()) },
      payload: body,
    });
    expect(hook.status, hook.text).toBe(200);
    await t.kosh.worker.drain();
    const card = ((await tenant.http.GET('/v1/payments', { query: { invoice_id: inv.id } })).body.data as { id: string; channel: string }[]).find(
      (p) => p.channel === 'gateway',
    );
    expect(card).toBeDefined();
    const [advance] = (await tenant.http.GET('/v1/advances', { query: { customer_id: customer } })).body.data;
    expect(advance).toMatchObject({ payment_id: card!.id, amount: 354_000, subtotal: 300_000, cgst_amount: 27_000, sgst_amount: 27_000, balance: 354_000 });
  });
});

describe('GSTR-1 tables 11A and 11B', () => {
  it('reports the advance in its month (11A) and its adjustment in a later month (11B)', async () => {
    const tenant = await t.registerTenant({ gstin: gstinFor('29') });
    const entityId = (await tenant.http.GET('/v1/entities')).body.data[0]!.id;
    const customer = await createCustomer(tenant, { gstin: gstinFor('29', 'BBBBB2222B1Z') });
    // April 2026: ₹11,800 received (value 10,000.00, CGST 900.00, SGST 900.00) and ₹590 of it
    // refunded in April (value 500.00, CGST 45.00, SGST 45.00): 11A April nets to 9,500.00 / 855 / 855.
    await tenant.http.POST('/v1/payments/offline', { body: { customer_id: customer, payment_type: 'bank_transfer', amount: 1_180_000 } });
    const [advance] = (await tenant.http.GET('/v1/advances', { query: { customer_id: customer } })).body.data;
    expect((await tenant.http.POST('/v1/advances/{id}/refunds', { path: { id: advance!.id }, body: { amount: 59_000 } })).status).toBe(201);
    const april = (await tenant.http.GET('/v1/gst/gstr1', { query: { entity_id: entityId, period: '042026' } })).body.data;
    expect(april.at).toEqual([{ pos: '29', sply_ty: 'INTRA', itms: [{ rt: 18, ad_amt: 9500, iamt: 0, camt: 855, samt: 855, csamt: 0 }] }]);
    expect(april.txpd).toEqual([]);
    // 3.1(a) carries the advance's tax: no invoice yet, so only 9,500.00 / 855 / 855.
    const april3b = (await tenant.http.GET('/v1/gst/gstr3b', { query: { entity_id: entityId, period: '042026' } })).body.data;
    expect(april3b.sup_details.osup_det).toMatchObject({ txval: 9500, camt: 855, samt: 855, iamt: 0 });

    // May: an invoice of ₹5,000 + 18 % takes ₹5,900 of the advance: 11B May 5,000.00 / 450 / 450.
    t.clock.advanceDays(35);
    const invoice = await createInvoice(tenant, customer, [500_000], { auto_finalize: true });
    expect(invoice.status).toBe('paid');
    const may = (await tenant.http.GET('/v1/gst/gstr1', { query: { entity_id: entityId, period: '052026' } })).body.data;
    expect(may.at).toEqual([]);
    expect(may.txpd).toEqual([{ pos: '29', sply_ty: 'INTRA', itms: [{ rt: 18, ad_amt: 5000, iamt: 0, camt: 450, samt: 450, csamt: 0 }] }]);
    // 3.1(a) in May: the invoice (5,000 / 450 / 450) less the adjustment (5,000 / 450 / 450) = 0.
    const may3b = (await tenant.http.GET('/v1/gst/gstr3b', { query: { entity_id: entityId, period: '052026' } })).body.data;
    expect(may3b.sup_details.osup_det).toMatchObject({ txval: 0, camt: 0, samt: 0 });
  });
});
