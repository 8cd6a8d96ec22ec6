import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKosh, type Tenant, type TestKosh } from '../support/harness.js';
import { createCustomer, createPlan, invoicesOf, karnatakaTenant, subscribe, travelTo } from '../subscriptions/helpers.js';

/**
 * Pending one-off charges (DESIGN §24, decision 0380). Karnataka tenant, Karnataka customers with a
 * GSTIN: every line pays CGST + SGST, half of its rate each.
 */
let t: TestKosh;
let acme: Tenant;
let other: Tenant;

beforeAll(async () => {
  t = await startTestKosh();
  acme = await karnatakaTenant(t);
  other = await karnatakaTenant(t);
});
afterAll(() => t.close());

const addCharge = async (customer: string, body: Record<string, unknown>) => {
  const res = await acme.api('POST', `/v1/customers/${customer}/pending-charges`, body);
  expect(res.status, res.text).toBe(201);
  return res.body.data;
};
const chargesOf = async (customer: string, status = '') => {
  const res = await acme.api('GET', `/v1/customers/${customer}/pending-charges${status ? `?status=${status}` : ''}`);
  expect(res.status, res.text).toBe(200);
  return res.body.data as { id: string; status: string; invoice_id: string | null }[];
};
type Line = { description: string; hsn_code: string; tax_rate_bp: number; amount: number; cgst_amount: number; sgst_amount: number; total: number };
const lineOf = (invoice: { lines: Line[] }, description: string) => invoice.lines.find((l) => l.description === description);

describe('pending charges', () => {
  it('the billing run puts them on the renewal invoice as their own lines, taxed by their own HSN/SAC, and marks them invoiced', async () => {
    const plan = await createPlan(acme, { amount: 100_000 });
    const customer = await createCustomer(acme);
    const sub = await subscribe(acme, { customer_id: customer, plan_id: plan.id }); // 1 April → 1 May
    // The customer's: any invoice of the customer in INR takes it.
    const workshop = await addCharge(customer, { description: 'Onboarding workshop', amount: 250_000, hsn_code: '998313' });
    // The subscription's: 3 tea hampers at ₹200, tea is HSN 0902 at 5 %.
    const tea = await addCharge(customer, { description: 'Tea hampers', amount: 20_000, quantity: 3, hsn_code: '0902', subscription_id: sub.id });
    expect(tea).toMatchObject({ currency: 'INR', amount: 60_000, status: 'pending', subscription_id: sub.id });
    // In USD: no INR invoice takes it.
    const dollars = await addCharge(customer, { description: 'Expedited support', amount: 5_000, currency: 'USD', hsn_code: '998313' });
    // Deleted while pending: no invoice takes it.
    const dropped = await addCharge(customer, { description: 'Dropped', amount: 9_900, hsn_code: '998313' });
    const del = await acme.http.DELETE('/v1/customers/{id}/pending-charges/{charge_id}', { path: { id: customer, charge_id: dropped.id } });
    expect(del.status, del.text).toBe(200);

    await travelTo(t, '2026-05-01T00:00:00Z');
    const invoices = await invoicesOf(acme, sub.id);
    expect(invoices).toHaveLength(2);
    const renewal = invoices[1]!;
    // Plan fee 100 000 at 18 %: 9 000 + 9 000.
    // Workshop 250 000 at 18 % (SAC 998313): 22 500 + 22 500 = 45 000.
    // Tea 3 × 20 000 = 60 000 at 5 % (HSN 0902): 1 500 + 1 500 = 3 000.
    // Subtotal 100 000 + 250 000 + 60 000 = 410 000; tax 18 000 + 45 000 + 3 000 = 66 000; total 476 000.
    expect(lineOf(renewal, 'Onboarding workshop')).toMatchObject({
      hsn_code: '998313',
      tax_rate_bp: 1800,
      amount: 250_000,
      cgst_amount: 22_500,
      sgst_amount: 22_500,
    });
    expect(lineOf(renewal, 'Tea hampers')).toMatchObject({
      hsn_code: '0902',
      tax_rate_bp: 500,
      amount: 60_000,
      cgst_amount: 1_500,
      sgst_amount: 1_500,
      total: 63_000,
    });
    expect(lineOf(renewal, 'Dropped')).toBeUndefined();
    expect(renewal).toMatchObject({ billing_reason: 'subscription_cycle', subtotal: 410_000, tax_amount: 66_000, total: 476_000 });

    const charges = await chargesOf(customer);
    expect(charges.map((c) => [c.id, c.status, c.invoice_id])).toEqual([
      [workshop.id, 'invoiced', renewal.id],
      [tea.id, 'invoiced', renewal.id],
      [dollars.id, 'pending', null],
    ]);
    expect((await chargesOf(customer, 'pending')).map((c) => c.id)).toEqual([dollars.id]);

    // Taken: part of the invoice now, not deletable.
    const late = await acme.http.DELETE('/v1/customers/{id}/pending-charges/{charge_id}', { path: { id: customer, charge_id: workshop.id } });
    expect(late.status, late.text).toBe(409);
    expect(late.error!).toMatchObject({ code: 'conflict', reason: 'pending_charge_invoiced' });

    // Taken once: the next renewal has only the plan fee, 100 000 + 18 000.
    await travelTo(t, '2026-06-01T00:00:00Z');
    const june = (await invoicesOf(acme, sub.id))[2]!;
    expect(june).toMatchObject({ subtotal: 100_000, total: 118_000 });
    expect(june.lines).toHaveLength(1);
    await acme.http.POST('/v1/subscriptions/{id}/cancel', { path: { id: sub.id }, body: { at_period_end: false } });
    t.clock.set('2026-04-01T00:00:00Z');
  });

  it('a one-off invoice takes the customer’s charges, not those waiting for a subscription', async () => {
    const plan = await createPlan(acme, { amount: 100_000 });
    const customer = await createCustomer(acme);
    const sub = await subscribe(acme, { customer_id: customer, plan_id: plan.id });
    const audit = await addCharge(customer, { description: 'Data migration', amount: 50_000, hsn_code: '998313' });
    const waiting = await addCharge(customer, { description: 'Seat top-up', amount: 7_000, subscription_id: sub.id, hsn_code: '998314' });
    const res = await acme.http.POST('/v1/invoices', {
      body: {
        customer_id: customer,
        currency: 'INR',
        lines: [{ description: 'Consulting day', unit_amount: 10_000 }],
      },
    });
    expect(res.status, res.text).toBe(201);
    // 10 000 (tenant SAC, 18 %) + 50 000 (998313, 18 %) = 60 000; GST 1 800 + 9 000 = 10 800; total 70 800.
    expect(res.body.data).toMatchObject({ status: 'open', subtotal: 60_000, tax_amount: 10_800, total: 70_800 });
    expect(res.body.data.lines.map((l: Line) => [l.description, l.amount, l.hsn_code])).toEqual([
      ['Consulting day', 10_000, '998314'],
      ['Data migration', 50_000, '998313'],
    ]);
    const charges = await chargesOf(customer);
    expect(charges.find((c) => c.id === audit.id)).toMatchObject({ status: 'invoiced', invoice_id: res.body.data.id });
    expect(charges.find((c) => c.id === waiting.id)).toMatchObject({ status: 'pending', invoice_id: null });

    // include_pending_charges: false leaves them waiting.
    const later = await addCharge(customer, { description: 'Later', amount: 1_000, hsn_code: '998313' });
    const plain = await acme.http.POST('/v1/invoices', {
      body: {
        customer_id: customer,
        currency: 'INR',
        include_pending_charges: false,
        lines: [{ description: 'Only this', unit_amount: 2_000 }],
      },
    });
    expect(plain.status, plain.text).toBe(201);
    expect(plain.body.data.lines).toHaveLength(1);
    expect((await chargesOf(customer, 'pending')).map((c) => c.id)).toEqual([waiting.id, later.id]);
    await acme.http.POST('/v1/subscriptions/{id}/cancel', { path: { id: sub.id }, body: { at_period_end: false } });
  });

  it('an immediate cancel’s final invoice takes the subscription’s charges (its last invoice); its preview shows them and takes none', async () => {
    t.clock.set('2026-04-01T00:00:00Z');
    const plan = await createPlan(acme, { amount: 100_000 });
    const customer = await createCustomer(acme);
    const sub = await subscribe(acme, { customer_id: customer, plan_id: plan.id });
    const kit = await addCharge(customer, { description: 'Hardware token', amount: 40_000, hsn_code: '998313', subscription_id: sub.id });
    t.clock.set('2026-04-11T00:00:00Z');
    // A flat plan has no usage: the final invoice is the charge alone, 40 000 + 18 % = 47 200.
    const preview = await acme.http.POST('/v1/subscriptions/{id}/cancel', { path: { id: sub.id }, body: { at_period_end: false, preview: true } });
    expect(preview.status, preview.text).toBe(200);
    expect(preview.body.data.preview!.final_invoice).toMatchObject({ billing_reason: 'subscription_final', subtotal: 40_000, total: 47_200 });
    expect((await chargesOf(customer)).map((c) => c.status)).toEqual(['pending']);
    const cancel = await acme.http.POST('/v1/subscriptions/{id}/cancel', { path: { id: sub.id }, body: { at_period_end: false } });
    expect(cancel.status, cancel.text).toBe(200);
    const final = (await invoicesOf(acme, sub.id))[1]!;
    expect(final).toMatchObject({ billing_reason: 'subscription_final', subtotal: 40_000, total: 47_200 });
    expect(await chargesOf(customer)).toMatchObject([{ id: kit.id, status: 'invoiced', invoice_id: final.id }]);
    t.clock.set('2026-04-01T00:00:00Z');
  });

  it('refuses what could never be invoiced, with 4xx in plain words', async () => {
    const customer = await createCustomer(acme);
    const mine = await createCustomer(acme);
    const plan = await createPlan(acme, { amount: 100_000 });
    const theirs = await subscribe(acme, { customer_id: mine, plan_id: plan.id });
    const post = (body: Record<string, unknown>, who = customer, tenant = acme) => tenant.api('POST', `/v1/customers/${who}/pending-charges`, body);

    // SAC 998552 (tour operators) has no single rate: the charge must name one.
    const conditional = await post({ description: 'Offsite', amount: 10_000, hsn_code: '998552' });
    expect(conditional.status).toBe(400);
    expect(conditional.body.error.details[0].field).toBe('tax_rate_bp');
    expect((await post({ description: 'Offsite', amount: 10_000, hsn_code: '998552', tax_rate_bp: 500 })).status).toBe(201);

    const notMine = await post({ description: 'x', amount: 100, hsn_code: '998313', subscription_id: theirs.id });
    expect(notMine.status).toBe(400);
    expect(notMine.body.error.details[0].field).toBe('subscription_id');
    const wrongCurrency = await post({ description: 'x', amount: 100, hsn_code: '998313', subscription_id: theirs.id, currency: 'USD' }, mine);
    expect(wrongCurrency.status).toBe(400);
    expect((await post({ description: 'x', amount: 0, hsn_code: '998313' })).status).toBe(400);
    expect((await post({ description: 'x', amount: 100, hsn_code: '12' })).status).toBe(400);

    // Another tenant's customer and charge: 404, as if missing.
    expect((await post({ description: 'x', amount: 100, hsn_code: '998313' }, customer, other)).status).toBe(404);
    const charge = (await post({ description: 'x', amount: 100, hsn_code: '998313' })).body.data;
    expect((await other.http.DELETE('/v1/customers/{id}/pending-charges/{charge_id}', { path: { id: customer, charge_id: charge.id } })).status).toBe(404);
    expect((await acme.http.DELETE('/v1/customers/{id}/pending-charges/{charge_id}', { path: { id: mine, charge_id: charge.id } })).status).toBe(404);
    expect((await other.http.GET('/v1/customers/{id}/pending-charges', { path: { id: customer } })).status).toBe(404);
    await acme.http.POST('/v1/subscriptions/{id}/cancel', { path: { id: theirs.id }, body: { at_period_end: false } });
  });
});
