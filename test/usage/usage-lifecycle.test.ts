import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { operations } from '../../clients/typescript/src/schema.js';
import { startTestKosh, type Tenant, type TestKosh } from '../support/harness.js';
import { createCustomer, getSubscription, invoicesOf, karnatakaTenant, subscribe, travelTo } from '../subscriptions/helpers.js';

// Usage at the edges of a subscription's life (decision 0190): the final usage of an ending
// subscription, one metric metered once per customer, pure usage plans.

let t: TestKosh;
let acme: Tenant;
let seq = 0;
const uid = (p: string) => `${p}-${(seq += 1)}-${Math.random().toString(36).slice(2, 8)}`;

beforeAll(async () => {
  t = await startTestKosh();
  t.clock.set('2032-01-01T00:00:00Z');
  acme = await karnatakaTenant(t);
});
afterAll(() => t.close());

type PlanPrice = NonNullable<operations['createPlan']['requestBody']['content']['application/json']['prices']>[number];

async function metric() {
  const res = await acme.http.POST('/v1/billable-metrics', { body: { name: 'Calls', code: uid('calls'), aggregation: 'count' } });
  expect(res.status, res.text).toBe(201);
  return res.body.data as { id: string; code: string };
}

async function plan(prices: PlanPrice[]) {
  const res = await acme.http.POST('/v1/plans', { body: { name: 'Usage plan', code: uid('plan'), interval: 'month', hsn_code: '998314', prices } });
  expect(res.status, res.text).toBe(201);
  return res.body.data as { id: string; code: string };
}

/** A plan of 1 000.00 a month plus `unit` a call of a fresh metric. */
async function meteredPlan(unit = 10) {
  const m = await metric();
  const p = await plan([
    { currency: 'INR', amount: 100_000 },
    { currency: 'INR', billing_scheme: 'metered', metric_code: m.code, amount: unit },
  ]);
  return { metric: m, plan: p };
}

async function calls(customer: string, code: string, timestamps: string[]) {
  const res = await acme.http.POST('/v1/usage/events/batch', {
    body: { events: timestamps.map((timestamp) => ({ transaction_id: uid('tx'), customer_id: customer, metric_code: code, timestamp })) },
  });
  expect(res.status, res.text).toBe(202);
  expect(res.body.data.rejected).toEqual([]);
}

type Line = { amount: number; quantity: number; period_start: string | null; period_end: string | null };

describe('the final usage of an ending subscription is billed', () => {
  it('cancel_at_period_end: the run ends it with a final invoice of the last period’s usage, no next fee', async () => {
    t.clock.set('2032-02-01T00:00:00Z');
    const { metric: m, plan: p } = await meteredPlan();
    const customer = await createCustomer(acme);
    const sub = await subscribe(acme, { customer_id: customer, plan_id: p.id });
    await calls(customer, m.code, ['2032-02-03T00:00:00Z', '2032-02-10T00:00:00Z', '2032-02-28T23:00:00Z', '2032-03-01T00:00:00Z']);
    t.clock.set('2032-02-15T00:00:00Z');
    const cancel = await acme.http.POST('/v1/subscriptions/{id}/cancel', { path: { id: sub.id }, body: { at_period_end: true } });
    expect(cancel.status, cancel.text).toBe(200);

    // The upcoming invoice previews that final invoice (usage so far, no fee).
    const upcoming = await acme.http.GET('/v1/subscriptions/{id}/upcoming-invoice', { path: { id: sub.id } });
    expect(upcoming.status, upcoming.text).toBe(200);
    expect(upcoming.body.data.billing_reason).toBe('subscription_final');
    expect(upcoming.body.data.lines.map((l: Line) => l.amount)).toEqual([30]);

    await travelTo(t, '2032-03-01T00:00:00Z');
    const ended = await getSubscription(acme, sub.id);
    expect(ended.status).toBe('canceled');
    const invoices = await invoicesOf(acme, sub.id);
    expect(invoices.map((i) => i.billing_reason)).toEqual(['subscription_create', 'subscription_final']);
    const final = invoices[1];
    expect(ended.latest_invoice_id).toBe(final.id);
    expect(final.status).toBe('open');
    expect(final.period_start).toBe('2032-02-01T00:00:00.000Z');
    expect(final.period_end).toBe('2032-03-01T00:00:00.000Z');
    // 3 calls in [Feb 1, Mar 1) at 0.10, GST 18 % on top; the call at Mar 1 is not in it.
    expect(final.lines.map((l: Line) => [l.quantity, l.amount])).toEqual([[3, 30]]);
    expect(final.total).toBe(30 + Math.round(30 * 0.09) * 2);

    // A second run at a later instant issues nothing more.
    await travelTo(t, '2032-04-01T00:00:00Z');
    expect(await invoicesOf(acme, sub.id)).toHaveLength(2);
  });

  it('cancel_at_period_end with no usage: ends without an invoice', async () => {
    t.clock.set('2032-05-01T00:00:00Z');
    const { plan: p } = await meteredPlan();
    const customer = await createCustomer(acme);
    const sub = await subscribe(acme, { customer_id: customer, plan_id: p.id });
    expect((await acme.http.POST('/v1/subscriptions/{id}/cancel', { path: { id: sub.id }, body: { at_period_end: true } })).status).toBe(200);
    await travelTo(t, '2032-06-01T00:00:00Z');
    expect((await getSubscription(acme, sub.id)).status).toBe('canceled');
    expect((await invoicesOf(acme, sub.id)).map((i) => i.billing_reason)).toEqual(['subscription_create']);
  });

  it('an immediate cancel invoices the usage of the period so far, with or without proration', async () => {
    t.clock.set('2032-07-01T00:00:00Z');
    const { metric: m, plan: p } = await meteredPlan(25);
    for (const prorate of [false, true]) {
      const customer = await createCustomer(acme);
      const sub = await subscribe(acme, { customer_id: customer, plan_id: p.id });
      await calls(customer, m.code, ['2032-07-02T00:00:00Z', '2032-07-05T00:00:00Z']);
      t.clock.set('2032-07-10T00:00:00Z');
      const cancel = await acme.http.POST('/v1/subscriptions/{id}/cancel', { path: { id: sub.id }, body: { at_period_end: false, prorate } });
      expect(cancel.status, cancel.text).toBe(200);
      expect(cancel.body.data.status).toBe('canceled');
      const invoices = await invoicesOf(acme, sub.id);
      expect(invoices.map((i) => i.billing_reason)).toEqual(['subscription_create', 'subscription_final']);
      const final = invoices[1];
      expect(cancel.body.data.latest_invoice_id).toBe(final.id);
      expect(final.period_start).toBe('2032-07-01T00:00:00.000Z');
      expect(final.period_end).toBe('2032-07-10T00:00:00.000Z');
      expect(final.lines.map((l: Line) => [l.quantity, l.amount, l.period_end])).toEqual([[2, 50, '2032-07-10T00:00:00.000Z']]);
      // Nothing more at the period's end.
      await travelTo(t, '2032-08-01T00:00:00Z');
      expect(await invoicesOf(acme, sub.id)).toHaveLength(2);
      t.clock.set('2032-07-01T00:00:00Z');
    }
  });

  it('a trial’s usage stays free when a trialing subscription is canceled', async () => {
    t.clock.set('2032-09-01T00:00:00Z');
    const { metric: m, plan: p } = await meteredPlan();
    const customer = await createCustomer(acme);
    const sub = await subscribe(acme, { customer_id: customer, plan_id: p.id, trial_days: 14 });
    await calls(customer, m.code, ['2032-09-02T00:00:00Z']);
    t.clock.set('2032-09-05T00:00:00Z');
    expect((await acme.http.POST('/v1/subscriptions/{id}/cancel', { path: { id: sub.id }, body: { at_period_end: false } })).status).toBe(200);
    expect(await invoicesOf(acme, sub.id)).toHaveLength(0);
  });
});

describe('one metric is metered by one subscription per customer', () => {
  it('refuses (409) a second running subscription metering the same metric, at creation and at a plan change', async () => {
    t.clock.set('2032-10-01T00:00:00Z');
    const { metric: m, plan: first } = await meteredPlan();
    // Another plan metering the same metric, and one metering another metric.
    const same = await plan([
      { currency: 'INR', amount: 50_000 },
      { currency: 'INR', billing_scheme: 'metered', metric_code: m.code, amount: 5 },
    ]);
    const { plan: elsewhere } = await meteredPlan();
    const flat = await plan([{ currency: 'INR', amount: 20_000 }]);
    const customer = await createCustomer(acme);
    const sub = await subscribe(acme, { customer_id: customer, plan_id: first.id });

    for (const planId of [first.id, same.id]) {
      const res = await acme.http.POST('/v1/subscriptions', { body: { customer_id: customer, plan_id: planId } });
      expect(res.status, res.text).toBe(409);
      expect(res.error!.reason).toBe('metric_already_metered');
      expect(res.error!.message).toContain(m.code);
      expect(res.error!.message).toContain(sub.id);
    }
    // A trialing subscription counts too: it meters once its trial ends.
    const trial = await acme.http.POST('/v1/subscriptions', { body: { customer_id: customer, plan_id: same.id, trial_days: 7 } });
    expect(trial.status).toBe(409);

    // Other metrics, a plan without metering and another customer are fine.
    const other = await subscribe(acme, { customer_id: customer, plan_id: elsewhere.id });
    const plain = await subscribe(acme, { customer_id: customer, plan_id: flat.id });
    await subscribe(acme, { customer_id: await createCustomer(acme), plan_id: same.id });

    // A plan change onto a plan metering m is refused, with or without proration; nothing changed.
    for (const [id, prorate] of [
      [other.id, true],
      [plain.id, false],
    ] as const) {
      const change = await acme.http.POST('/v1/subscriptions/{id}/change-plan', { path: { id: id }, body: { plan_id: same.id, prorate } });
      expect(change.status, change.text).toBe(409);
      expect(change.error!.reason).toBe('metric_already_metered');
    }
    expect((await getSubscription(acme, other.id)).plan_id).toBe(elsewhere.id);
    // The subscription metering m may itself move to another plan metering m.
    const own = await acme.http.POST('/v1/subscriptions/{id}/change-plan', { path: { id: sub.id }, body: { plan_id: same.id, prorate: false } });
    expect(own.status, own.text).toBe(200);

    // Once it is canceled, m is free for another subscription.
    expect((await acme.http.POST('/v1/subscriptions/{id}/cancel', { path: { id: sub.id }, body: { at_period_end: false } })).status).toBe(200);
    const change = await acme.http.POST('/v1/subscriptions/{id}/change-plan', { path: { id: plain.id }, body: { plan_id: first.id, prorate: false } });
    expect(change.status, change.text).toBe(200);
  });
  it('refuses (409) a metered price that would make two running subscriptions of one customer meter one metric; the plan stays as it was', async () => {
    t.clock.set('2032-11-01T00:00:00Z');
    const { metric: m, plan: metered } = await meteredPlan();
    const flat = await plan([{ currency: 'INR', amount: 20_000 }]);
    const customer = await createCustomer(acme);
    await subscribe(acme, { customer_id: customer, plan_id: metered.id });
    const plain = await subscribe(acme, { customer_id: customer, plan_id: flat.id });

    const add = await acme.http.POST('/v1/plans/{id}/prices', {
      path: { id: flat.id },
      body: { currency: 'INR', billing_scheme: 'metered', metric_code: m.code, amount: 5 },
    });
    expect(add.status, add.text).toBe(409);
    expect(add.error!.reason).toBe('metric_already_metered');
    expect(add.error!.message).toContain(plain.id);
    expect(
      (await acme.http.GET('/v1/plans/{id}', { path: { id: flat.id } })).body.data.prices.map((p: { billing_scheme: string }) => p.billing_scheme),
    ).toEqual(['per_unit']);

    // The same price on a plan whose subscribers meter nothing else is added.
    const lone = await plan([{ currency: 'INR', amount: 20_000 }]);
    await subscribe(acme, { customer_id: await createCustomer(acme), plan_id: lone.id });
    const fine = await acme.http.POST('/v1/plans/{id}/prices', {
      path: { id: lone.id },
      body: { currency: 'INR', billing_scheme: 'metered', metric_code: m.code, amount: 5 },
    });
    expect(fine.status, fine.text).toBe(201);
  });
});

describe('pure usage plans (metered prices only)', () => {
  it('is created and subscribed without an invoice, renews with usage lines only, issues nothing when nothing is due', async () => {
    t.clock.set('2033-01-01T00:00:00Z');
    const m = await metric();
    const p = await plan([{ currency: 'INR', billing_scheme: 'metered', metric_code: m.code, amount: 200 }]);
    const customer = await createCustomer(acme);
    const sub = await subscribe(acme, { customer_id: customer, plan_id: p.id });
    expect(sub).toMatchObject({ status: 'active', currency: 'INR', price_id: null, latest_invoice_id: null });
    expect(await invoicesOf(acme, sub.id)).toHaveLength(0);

    await calls(customer, m.code, ['2033-01-05T00:00:00Z', '2033-01-06T00:00:00Z']);
    t.clock.set('2033-01-20T00:00:00Z');
    const usage = await acme.http.GET('/v1/subscriptions/{id}/usage', { path: { id: sub.id } });
    expect(usage.status, usage.text).toBe(200);
    expect(usage.body.data.metrics).toEqual([{ metric_code: m.code, quantity: 2, amount: 400, unpriced_quantity: 0, dimensions: [] }]);
    const upcoming = await acme.http.GET('/v1/subscriptions/{id}/upcoming-invoice', { path: { id: sub.id } });
    expect(upcoming.status, upcoming.text).toBe(200);
    expect(upcoming.body.data.lines.map((l: Line) => l.amount)).toEqual([400]);

    await travelTo(t, '2033-02-01T00:00:00Z');
    let invoices = await invoicesOf(acme, sub.id);
    expect(invoices).toHaveLength(1);
    expect(invoices[0].billing_reason).toBe('subscription_cycle');
    expect(invoices[0].lines.map((l: Line) => [l.quantity, l.amount, l.period_start])).toEqual([[2, 400, '2033-01-01T00:00:00.000Z']]);
    expect(invoices[0].total).toBe(400 + Math.round(400 * 0.09) * 2);
    expect((await getSubscription(acme, sub.id)).latest_invoice_id).toBe(invoices[0].id);

    // February: no usage → the period advances, no invoice (not even a zero one).
    const empty = await acme.http.GET('/v1/subscriptions/{id}/upcoming-invoice', { path: { id: sub.id } });
    expect(empty.status, empty.text).toBe(200);
    expect(empty.body.data.lines).toEqual([]);
    expect(empty.body.data.total).toBe(0);
    await travelTo(t, '2033-03-01T00:00:00Z');
    invoices = await invoicesOf(acme, sub.id);
    expect(invoices).toHaveLength(1);
    const after = await getSubscription(acme, sub.id);
    expect(after.current_period_start).toBe('2033-03-01T00:00:00.000Z');
    expect(after.latest_invoice_id).toBe(invoices[0].id);

    // Seats mean nothing on it.
    const seats = await acme.api('PATCH', `/v1/subscriptions/${sub.id}`, { quantity: 3 });
    expect(seats.status).toBe(400);
  });

  it('a plan change between a fixed plan and a pure usage plan', async () => {
    t.clock.set('2033-04-01T00:00:00Z');
    const { plan: fixed } = await meteredPlan();
    const m = await metric();
    const usageOnly = await plan([{ currency: 'INR', billing_scheme: 'metered', metric_code: m.code, amount: 100 }]);
    const customer = await createCustomer(acme);
    const sub = await subscribe(acme, { customer_id: customer, plan_id: fixed.id });
    t.clock.set('2033-04-16T00:00:00Z');
    const change = await acme.http.POST('/v1/subscriptions/{id}/change-plan', { path: { id: sub.id }, body: { plan_id: usageOnly.id, prorate: true } });
    expect(change.status, change.text).toBe(200);
    expect(change.body.data.invoice).toBeNull();
    expect(change.body.data.proration.new_charge).toBe(0);
    expect(change.body.data.proration.unused_credit).toBeGreaterThan(0);
    expect(change.body.data.subscription.price_id).toBeNull();
    await calls(customer, m.code, ['2033-04-20T00:00:00Z']);
    await travelTo(t, '2033-05-01T00:00:00Z');
    const renewal = (await invoicesOf(acme, sub.id)).at(-1);
    expect(renewal.billing_reason).toBe('subscription_cycle');
    expect(renewal.lines.map((l: Line) => l.amount)).toEqual([100]);
  });
});

describe('proration credits only what was paid in advance', () => {
  it('a prorated cancel after a renewal with usage lines credits the unused share of the fee, not of the usage', async () => {
    t.clock.set('2033-06-01T00:00:00Z');
    const { metric: m, plan: p } = await meteredPlan(1_000);
    const customer = await createCustomer(acme);
    const sub = await subscribe(acme, { customer_id: customer, plan_id: p.id });
    await calls(
      customer,
      m.code,
      Array.from({ length: 30 }, (_, i) => `2033-06-${String(i + 1).padStart(2, '0')}T12:00:00Z`),
    );
    await travelTo(t, '2033-07-01T00:00:00Z');
    const renewal = (await invoicesOf(acme, sub.id)).at(-1);
    expect(renewal.lines.map((l: Line) => l.amount)).toEqual([30_000, 100_000]);
    t.clock.set('2033-07-17T00:00:00Z'); // 15 of 31 days left
    const cancel = await acme.http.POST('/v1/subscriptions/{id}/cancel', { path: { id: sub.id }, body: { at_period_end: false, prorate: true } });
    expect(cancel.status, cancel.text).toBe(200);
    const fee = 100_000 + Math.round(100_000 * 0.09) * 2;
    expect(cancel.body.data.proration!.unused_value).toBe(Math.round((fee * 15) / 31));
  });
});

describe('proration onto tiered and package prices', () => {
  const tiers: PlanPrice = {
    currency: 'INR',
    billing_scheme: 'tiered',
    tiers_mode: 'graduated',
    tiers: [
      { up_to: 5, unit_amount: 1000 },
      { up_to: null, unit_amount: 600, flat_amount: 200 },
    ],
  };

  it('a prorated plan change onto a tiered price charges the rest of the period of its total for the quantity', async () => {
    t.clock.set('2034-01-01T00:00:00Z');
    const simple = await plan([{ currency: 'INR', amount: 100 }]);
    const tiered = await plan([tiers]);
    const sub = await subscribe(acme, { customer_id: await createCustomer(acme), plan_id: simple.id, quantity: 8 });
    t.clock.set('2034-01-17T00:00:00Z'); // 15 of 31 days left
    const change = await acme.http.POST('/v1/subscriptions/{id}/change-plan', { path: { id: sub.id }, body: { plan_id: tiered.id, prorate: true } });
    expect(change.status, change.text).toBe(200);
    // 8 units: 5 × 10.00 + 3 × 6.00 + 2.00 = 70.00 for the month; 15/31 of it.
    const charge = Math.round((7000 * 15) / 31);
    expect(change.body.data.proration.new_charge).toBe(charge);
    const [line] = change.body.data.invoice!.lines;
    expect([line!.quantity, line!.amount]).toEqual([1, charge]);
    expect(line!.description).toContain('(prorated)');
    expect(line!.description).toContain('8 units (graduated tiers');
  });

  it('a prorated seat change on a tiered price charges the new quantity’s total for the rest of the period', async () => {
    t.clock.set('2034-01-01T00:00:00Z');
    const tiered = await plan([tiers]);
    const sub = await subscribe(acme, { customer_id: await createCustomer(acme), plan_id: tiered.id, quantity: 8 });
    t.clock.set('2034-01-17T00:00:00Z');
    const res = await acme.http.PATCH('/v1/subscriptions/{id}', { path: { id: sub.id }, body: { quantity: 10 } });
    expect(res.status, res.text).toBe(200);
    // 10 units: 5 × 10.00 + 5 × 6.00 + 2.00 = 82.00 for the month; 15/31 of it.
    const charge = Math.round((8200 * 15) / 31);
    expect(res.body.data.proration.new_charge).toBe(charge);
    expect(res.body.data.invoice!.lines.map((l: Line) => [l.quantity, l.amount])).toEqual([[1, charge]]);
    expect(res.body.data.proration.unused_credit).toBeGreaterThan(0);
  });
});
