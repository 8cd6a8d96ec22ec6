import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKosh, type Tenant, type TestKosh } from '../support/harness.js';
import { createCustomer, createPlan, eventTypesOf, invoicesOf, karnatakaTenant, pay, retire, subscribe, travelTo } from '../subscriptions/helpers.js';

/**
 * Subscription items: add-ons beside the plan (DESIGN §24, decision 0470). Karnataka tenant and
 * Karnataka customers with a GSTIN: every line pays CGST 9 % + SGST 9 %, each half rounded half-up
 * per line. Base plan ₹999 a month (SAC 998314), add-on "Priority support" ₹200 a month
 * (SAC 998315). Prorations are to the day: unit price × remaining days ÷ period days, half-up.
 */
let t: TestKosh;
let acme: Tenant;
let other: Tenant;
let base: { id: string };
let addOnPrice: string;

type Line = {
  description: string;
  quantity: number;
  unit_amount: number;
  amount: number;
  cgst_amount: number;
  sgst_amount: number;
  hsn_code: string;
  plan_id: string;
};

async function addOnPlan(tenant: Tenant, body: Record<string, unknown> = {}): Promise<{ planId: string; priceId: string }> {
  const res = await tenant.http.POST('/v1/plans', {
    body: {
      name: 'Priority support',
      code: `support-${Math.random().toString(36).slice(2, 10)}`,
      interval_unit: 'month',
      amount: 20_000,
      currency: 'INR',
      hsn_code: '998315',
      ...body,
    },
  });
  expect(res.status, res.text).toBe(201);
  return { planId: res.body.data.id, priceId: res.body.data.prices[0]!.id };
}

const addItem = async (subscription: string, body: Record<string, unknown>) => {
  const res = await acme.api('POST', `/v1/subscriptions/${subscription}/items`, body);
  expect(res.status, res.text).toBe(200);
  return res.body.data;
};

beforeAll(async () => {
  t = await startTestKosh();
  acme = await karnatakaTenant(t);
  other = await karnatakaTenant(t);
  base = await createPlan(acme, { amount: 99_900 });
  addOnPrice = (await addOnPlan(acme)).priceId;
});
afterAll(() => t.close());

describe('subscription items', () => {
  it('renewal invoices carry one line per item, taxed by its own plan, and the upcoming invoice shows the same', async () => {
    const customer = await createCustomer(acme);
    const sub = await subscribe(acme, { customer_id: customer, plan_id: base.id }); // 1 April → 1 May
    const added = await addItem(sub.id, { price_id: addOnPrice, quantity: 3, proration_behavior: 'none' });
    expect(added.item).toMatchObject({ object: 'subscription_item', kind: 'add_on', subscription_id: sub.id, price_id: addOnPrice, quantity: 3 });
    // `none`: nothing credited or charged now; the next renewal bills the item.
    expect(added).toMatchObject({ preview: false, invoice: null, credit_note: null, proration: { prorated: false, new_charge: 0 } });

    const items = await acme.http.GET('/v1/subscriptions/{id}/items', { path: { id: sub.id } });
    expect(items.status, items.text).toBe(200);
    expect(items.body.data).toEqual([
      expect.objectContaining({ id: null, kind: 'plan', plan_id: base.id, price_id: sub.price_id, quantity: 1 }),
      expect.objectContaining({ id: added.item.id, kind: 'add_on', price_id: addOnPrice, quantity: 3 }),
    ]);

    // Plan 99 900: 9 % = 8 991 each half. Add-on 3 × 20 000 = 60 000: 5 400 each half.
    // Subtotal 159 900; tax 17 982 + 10 800 = 28 782; total 188 682.
    const expected = {
      subtotal: 159_900,
      cgst_amount: 14_391,
      sgst_amount: 14_391,
      tax_amount: 28_782,
      total: 188_682,
    };
    const upcoming = await acme.http.GET('/v1/subscriptions/{id}/upcoming-invoice', { path: { id: sub.id } });
    expect(upcoming.status, upcoming.text).toBe(200);
    expect(upcoming.body.data).toMatchObject(expected);

    await travelTo(t, '2026-05-01T00:00:00Z');
    const renewal = (await invoicesOf(acme, sub.id)).at(-1)!;
    expect(renewal).toMatchObject({ billing_reason: 'subscription_cycle', period_start: '2026-05-01T00:00:00.000Z', ...expected });
    const lines = renewal.lines as Line[];
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({ plan_id: base.id, hsn_code: '998314', quantity: 1, unit_amount: 99_900, cgst_amount: 8_991, sgst_amount: 8_991 });
    expect(lines[1]).toMatchObject({ hsn_code: '998315', quantity: 3, unit_amount: 20_000, amount: 60_000, cgst_amount: 5_400, sgst_amount: 5_400 });
    expect(lines[1]!.description).toMatch(/^Priority support, 2026-05-01 to 2026-06-01$/);
    // The upcoming invoice was the renewal's own lines.
    expect((upcoming.body.data.lines as Line[]).map((l) => [l.description, l.amount])).toEqual(lines.map((l) => [l.description, l.amount]));
    await retire(acme, sub.id);
  });

  it('adds, changes and removes an item mid-period, crediting the unused time and charging the rest to the day', async () => {
    await travelTo(t, '2026-05-01T00:00:00Z');
    const customer = await createCustomer(acme);
    const sub = await subscribe(acme, { customer_id: customer, plan_id: base.id }); // 1 May → 1 June: 31 days
    const [first] = await invoicesOf(acme, sub.id);
    expect(first).toMatchObject({ total: 117_882 }); // 99 900 + 8 991 + 8 991
    await pay(acme, first);

    // 11 May: add 3 × ₹200 with prorations; 21 of 31 days remain.
    await travelTo(t, '2026-05-11T00:00:00Z');
    const added = await addItem(sub.id, { price_id: addOnPrice, quantity: 3 });
    // Credit: the paid invoice's 117 882 × 21 / 31 = 79 855.55 → 79 856.
    // Charge: plan 99 900 × 21 / 31 = 67 674.19 → 67 674; add-on 20 000 × 21 / 31 = 13 548.39 → 13 548, × 3 = 40 644.
    // Net 108 318. GST: 67 674 × 9 % = 6 090.66 → 6 091 a half; 40 644 × 9 % = 3 657.96 → 3 658 a half.
    // Tax 2 × 6 091 + 2 × 3 658 = 19 498; total 127 816; the credit is spent on it: due 127 816 − 79 856 = 47 960.
    expect(added.proration).toEqual({
      prorated: true,
      changed_at: '2026-05-11T00:00:00.000Z',
      period_start: '2026-05-11T00:00:00.000Z',
      period_end: '2026-06-01T00:00:00.000Z',
      remaining_days: 21,
      period_days: 31,
      unused_value: 79_856,
      unused_credit: 79_856,
      credit_capped: false,
      new_charge: 108_318,
    });
    expect(added.credit_note).toMatchObject({ invoice_id: first.id, amount: 79_856 });
    expect(added.invoice).toMatchObject({
      billing_reason: 'subscription_update',
      subtotal: 108_318,
      cgst_amount: 9_749,
      sgst_amount: 9_749,
      total: 127_816,
      amount_credited: 79_856,
      amount_due: 47_960,
      period_start: '2026-05-11T00:00:00.000Z',
      period_end: '2026-06-01T00:00:00.000Z',
    });
    expect((added.invoice!.lines as Line[]).map((l) => [l.quantity, l.unit_amount, l.cgst_amount])).toEqual([
      [1, 67_674, 6_091],
      [3, 13_548, 3_658],
    ]);
    expect(added.subscription.latest_invoice_id).toBe(added.invoice!.id);

    // 21 May: 3 → 5. A preview first: the same figures, nothing written.
    await travelTo(t, '2026-05-21T00:00:00Z');
    const invoicesBefore = (await invoicesOf(acme, sub.id)).length;
    const preview = await acme.http.PATCH('/v1/subscriptions/{id}/items/{item_id}', {
      path: { id: sub.id, item_id: added.item.id! },
      body: { quantity: 5, preview: true },
    });
    expect(preview.status, preview.text).toBe(200);
    expect(preview.body.data).toMatchObject({ preview: true, item: { quantity: 5 } });
    expect((await invoicesOf(acme, sub.id)).length).toBe(invoicesBefore);
    expect((await acme.http.GET('/v1/subscriptions/{id}/items', { path: { id: sub.id } })).body.data[1]!.quantity).toBe(3);

    const changed = await acme.http.PATCH('/v1/subscriptions/{id}/items/{item_id}', { path: { id: sub.id, item_id: added.item.id! }, body: { quantity: 5 } });
    expect(changed.status, changed.text).toBe(200);
    const change = changed.body.data;
    // 11 of 31 days remain. Credit on the 11 May invoice (it paid 11 May → 1 June, 21 days): 127 816 × 11 / 21 = 66 951.24 → 66 951.
    // Charge: plan 99 900 × 11 / 31 = 35 448.39 → 35 448; add-on 20 000 × 11 / 31 = 7 096.77 → 7 097, × 5 = 35 485. Net 70 933.
    // GST: 35 448 × 9 % = 3 190.32 → 3 190 a half; 35 485 × 9 % = 3 193.65 → 3 194 a half. Tax 12 768; total 83 701.
    // The credit first settles the 47 960 the 11 May invoice still owed; the other 18 991 is spent here: due 64 710.
    expect(change.proration).toMatchObject({ remaining_days: 11, period_days: 31, unused_credit: 66_951, new_charge: 70_933 });
    expect(change.invoice).toMatchObject({ subtotal: 70_933, tax_amount: 12_768, total: 83_701, amount_credited: 18_991, amount_due: 64_710 });
    expect((change.invoice!.lines as Line[]).map((l) => [l.quantity, l.unit_amount, l.cgst_amount])).toEqual([
      [1, 35_448, 3_190],
      [5, 7_097, 3_194],
    ]);
    expect(change.item).toMatchObject({ id: added.item.id, quantity: 5 });
    const eleventh = await acme.http.GET('/v1/invoices/{id}', { path: { id: added.invoice!.id } });
    expect(eleventh.body.data).toMatchObject({ amount_due: 0 });
    await pay(acme, change.invoice!);

    // 1 June renewal: plan 99 900 (8 991 a half) + 5 × 20 000 = 100 000 (9 000 a half): 199 900 + 35 982 = 235 882.
    await travelTo(t, '2026-06-01T00:00:00Z');
    const renewal = (await invoicesOf(acme, sub.id)).at(-1)!;
    expect(renewal).toMatchObject({ billing_reason: 'subscription_cycle', subtotal: 199_900, tax_amount: 35_982, total: 235_882 });

    // 16 June: remove the add-on; 15 of 30 days remain.
    await travelTo(t, '2026-06-16T00:00:00Z');
    const removed = await acme.http.DELETE('/v1/subscriptions/{id}/items/{item_id}', { path: { id: sub.id, item_id: added.item.id! } });
    expect(removed.status, removed.text).toBe(200);
    // Credit 235 882 × 15 / 30 = 117 941 (it settles the unpaid renewal's due first: no credit left over).
    // Charge: the plan alone, 99 900 × 15 / 30 = 49 950; 9 % = 4 495.5 → 4 496 a half; total 58 942.
    expect(removed.body.data.proration).toMatchObject({ remaining_days: 15, period_days: 30, unused_credit: 117_941, new_charge: 49_950 });
    expect(removed.body.data.invoice).toMatchObject({ subtotal: 49_950, cgst_amount: 4_496, sgst_amount: 4_496, total: 58_942, amount_due: 58_942 });
    expect(removed.body.data.invoice!.lines).toHaveLength(1);
    expect(removed.body.data.item).toMatchObject({ id: added.item.id, quantity: 5 });
    expect((await acme.http.GET('/v1/subscriptions/{id}/items', { path: { id: sub.id } })).body.data).toHaveLength(1);
    const upcoming = await acme.http.GET('/v1/subscriptions/{id}/upcoming-invoice', { path: { id: sub.id } });
    expect(upcoming.body.data).toMatchObject({ subtotal: 99_900, total: 117_882 });
    expect(await eventTypesOf(acme, added.item.id!)).toEqual(['subscription_item.created', 'subscription_item.updated', 'subscription_item.deleted']);
    await retire(acme, sub.id);
  });

  it('a seat change charges the items again for the rest of the period, beside the new quantity', async () => {
    await travelTo(t, '2026-06-16T00:00:00Z');
    const customer = await createCustomer(acme);
    const sub = await subscribe(acme, { customer_id: customer, plan_id: base.id }); // 16 June → 16 July: 30 days
    const [first] = await invoicesOf(acme, sub.id);
    await pay(acme, first);
    await addItem(sub.id, { price_id: addOnPrice, quantity: 2, proration_behavior: 'none' });
    await travelTo(t, '2026-06-26T00:00:00Z'); // 20 of 30 days remain
    const res = await acme.http.PATCH('/v1/subscriptions/{id}', { path: { id: sub.id }, body: { quantity: 2 } });
    expect(res.status, res.text).toBe(200);
    // Credit 117 882 × 20 / 30 = 78 588. Charge: plan 99 900 × 20 / 30 = 66 600, × 2 = 133 200 (11 988 a half);
    // add-on 20 000 × 20 / 30 = 13 333.33 → 13 333, × 2 = 26 666 (2 399.94 → 2 400 a half).
    // Net 159 866; tax 23 976 + 4 800 = 28 776; total 188 642; due 188 642 − 78 588 = 110 054.
    expect(res.body.data.proration).toMatchObject({ unused_credit: 78_588 });
    expect(res.body.data.invoice).toMatchObject({ subtotal: 159_866, tax_amount: 28_776, total: 188_642, amount_due: 110_054 });
    expect((res.body.data.invoice!.lines as Line[]).map((l) => [l.quantity, l.unit_amount])).toEqual([
      [2, 66_600],
      [2, 13_333],
    ]);
    await retire(acme, sub.id);
  });

  it('adds an item during a trial without charging; the trial-end invoice bills it', async () => {
    const customer = await createCustomer(acme);
    const sub = await subscribe(acme, { customer_id: customer, plan_id: base.id, trial_days: 5 }); // 26 June → 1 July
    const added = await addItem(sub.id, { price_id: addOnPrice, quantity: 1 });
    expect(added).toMatchObject({ invoice: null, credit_note: null, proration: { prorated: false } });
    await travelTo(t, '2026-07-01T00:00:00Z');
    // 99 900 + 20 000 = 119 900; tax 17 982 + 3 600 = 21 582; total 141 482.
    expect((await invoicesOf(acme, sub.id)).at(-1)).toMatchObject({ subtotal: 119_900, tax_amount: 21_582, total: 141_482 });
    await retire(acme, sub.id);
  });

  it('refuses prices it cannot bill beside the plan, and ids of other subscriptions or tenants', async () => {
    const customer = await createCustomer(acme);
    const sub = await subscribe(acme, { customer_id: customer, plan_id: base.id });
    const post = (body: Record<string, unknown>, id = sub.id, tenant = acme) => tenant.api('POST', `/v1/subscriptions/${id}/items`, body);

    const yearly = await addOnPlan(acme, { interval_unit: 'year', amount: 200_000 });
    expect((await post({ price_id: yearly.priceId })).status).toBe(400);
    const dollars = await addOnPlan(acme, { currency: 'USD', amount: 300 });
    expect((await post({ price_id: dollars.priceId })).status).toBe(400);
    const metric = await acme.http.POST('/v1/billable-metrics', { body: { code: `calls-${Date.now()}`, name: 'API calls', aggregation: 'count' } });
    const metered = await createPlan(acme, { prices: [{ currency: 'INR', amount: 10, billing_scheme: 'metered', metric_code: metric.body.data.code }] });
    const meteredPrice = (await acme.http.GET('/v1/plans/{id}', { path: { id: metered.id } })).body.data.prices[0]!.id;
    expect((await post({ price_id: meteredPrice })).status).toBe(400);
    expect((await post({ price_id: sub.price_id })).status).toBe(400);
    expect((await post({ price_id: '00000000-0000-7000-8000-000000000000' })).status).toBe(404);

    const ok = await post({ price_id: addOnPrice, proration_behavior: 'none' });
    expect(ok.status, ok.text).toBe(200);
    const again = await post({ price_id: addOnPrice });
    expect(again.status).toBe(409);
    expect(again.body.error.reason).toBe('subscription_item_exists');

    // A plan of another interval would leave the add-on out of step: refused while it has items.
    const yearlyBase = await createPlan(acme, { interval_unit: 'year', amount: 999_000 });
    const change = await acme.http.POST('/v1/subscriptions/{id}/change-plan', { path: { id: sub.id }, body: { plan_id: yearlyBase.id } });
    expect(change.status).toBe(409);
    expect(change.error!.reason).toBe('subscription_has_items');

    // Another tenant's subscription, and an item under another subscription: 404.
    const otherAddOn = await addOnPlan(other);
    expect((await post({ price_id: otherAddOn.priceId }, sub.id, other)).status).toBe(404);
    expect((await post({ price_id: otherAddOn.priceId })).status).toBe(404);
    const second = await subscribe(acme, { customer_id: await createCustomer(acme), plan_id: base.id });
    expect(
      (await acme.http.PATCH('/v1/subscriptions/{id}/items/{item_id}', { path: { id: second.id, item_id: ok.body.data.item.id! }, body: { quantity: 2 } }))
        .status,
    ).toBe(404);
    expect(
      (await acme.http.PATCH('/v1/subscriptions/{id}/items/{item_id}', { path: { id: sub.id, item_id: ok.body.data.item.id! }, body: { quantity: 1 } })).status,
    ).toBe(400);

    await retire(acme, sub.id, second.id);
    expect((await post({ price_id: yearly.priceId })).status).toBe(409);
  });
});
