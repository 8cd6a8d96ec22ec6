import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKosh, type Tenant, type TestKosh } from '../support/harness.js';
import { createCustomer, gstin, invoicesOf, karnatakaTenant, retire, subscribe, travelTo } from '../subscriptions/helpers.js';

/**
 * Minimum commitments (DESIGN §24, decision 0540). Karnataka tenant, Karnataka customers with a
 * GSTIN: every line pays CGST 9 % + SGST 9 % (SAC 998314), each half rounded half-up per line.
 * The plan: a fee of ₹500 a month (50 000 paise, billed in advance) and API calls at ₹2 each
 * (200 paise, billed in arrears). The rule:
 *   true-up = max(0, round_half_up(minimum × committed days ÷ period days) − net billed in scope)
 * on the invoice that bills the period's usage, taxed like the plan's fee, after the coupon.
 */
let t: TestKosh;
let acme: Tenant;
let other: Tenant;
let plan: { id: string; fee: string; calls: string };
let metric: string;

let n = 0;
const uid = (p: string) => `${p}_${Date.now().toString(36)}${(n += 1)}`;

type Line = {
  description: string;
  quantity: number;
  unit_amount: number;
  discount_amount: number;
  amount: number;
  hsn_code: string;
  cgst_amount: number;
  sgst_amount: number;
  price_id: string | null;
  plan_id: string | null;
};
const trueUpOf = (invoice: { lines: Line[] }) => invoice.lines.find((l) => l.description.startsWith('Minimum commitment true-up'));

async function usagePlan(tenant: Tenant) {
  const m = await tenant.http.POST('/v1/billable-metrics', { body: { code: uid('calls'), name: 'API calls', aggregation: 'count' } });
  expect(m.status, m.text).toBe(201);
  const res = await tenant.http.POST('/v1/plans', {
    body: {
      name: 'Platform',
      code: uid('platform'),
      interval_unit: 'month',
      hsn_code: '998314',
      prices: [
        { currency: 'INR', amount: 50_000 },
        { currency: 'INR', billing_scheme: 'metered', metric_code: m.body.data.code, amount: 200 },
      ],
    },
  });
  expect(res.status, res.text).toBe(201);
  const prices = res.body.data.prices as { id: string; billing_scheme: string }[];
  return {
    metric: m.body.data.code as string,
    plan: {
      id: res.body.data.id as string,
      fee: prices.find((p) => p.billing_scheme !== 'metered')!.id,
      calls: prices.find((p) => p.billing_scheme === 'metered')!.id,
    },
  };
}

async function calls(customer: string, count: number, at: string) {
  const res = await acme.http.POST('/v1/usage/events/batch', {
    body: {
      events: Array.from({ length: count }, () => ({ transaction_id: uid('tx'), customer_id: customer, metric_code: metric, timestamp: at, properties: {} })),
    },
  });
  expect(res.body.data, res.text).toMatchObject({ accepted: count, rejected: [] });
}

beforeAll(async () => {
  t = await startTestKosh();
  acme = await karnatakaTenant(t);
  other = await karnatakaTenant(t);
  ({ plan, metric } = await usagePlan(acme));
});
afterAll(() => t.close());

describe('minimum commitments', () => {
  it('is validated: positive minor units, the subscription currency, a price the subscription bills; a foreign subscription is a 404', async () => {
    const customer = await createCustomer(acme);
    const zero = await acme.api('POST', '/v1/subscriptions', { customer_id: customer, plan_id: plan.id, minimum_commitment: { amount: 0 } });
    expect(zero.status, zero.text).toBe(400);
    const sub = await subscribe(acme, { customer_id: customer, plan_id: plan.id, minimum_commitment: { amount: 200_000 } });
    expect(sub.minimum_commitment).toEqual({ amount: 200_000, price_id: null, since: '2026-04-01T00:00:00.000Z' });
    const usd = await acme.api('PUT', `/v1/subscriptions/${sub.id}/minimum-commitment`, { amount: 1_000, currency: 'USD' });
    expect(usd.status, usd.text).toBe(400);
    expect(usd.body.error.details[0].field).toBe('currency');
    // A price of another plan the subscription does not bill.
    const foreignPlan = await acme.http.POST('/v1/plans', {
      body: { name: 'Other', code: uid('other'), interval_unit: 'month', amount: 1_000, currency: 'INR' },
    });
    const notBilled = await acme.api('PUT', `/v1/subscriptions/${sub.id}/minimum-commitment`, { amount: 1_000, price_id: foreignPlan.body.data.prices[0]!.id });
    expect(notBilled.status, notBilled.text).toBe(400);
    expect(notBilled.body.error.details[0].field).toBe('price_id');
    const fractional = await acme.api('PUT', `/v1/subscriptions/${sub.id}/minimum-commitment`, { amount: 10.5 });
    expect(fractional.status, fractional.text).toBe(400);
    // Another tenant's subscription: the same 404 as a missing one.
    const foreign = await other.http.PUT('/v1/subscriptions/{id}/minimum-commitment', { path: { id: sub.id }, body: { amount: 1_000 } });
    expect(foreign.status, foreign.text).toBe(404);
    // On the metered price: kept, and replacing keeps the start.
    const onCalls = await acme.http.PUT('/v1/subscriptions/{id}/minimum-commitment', { path: { id: sub.id }, body: { amount: 30_000, price_id: plan.calls } });
    expect(onCalls.status, onCalls.text).toBe(200);
    expect(onCalls.body.data.minimum_commitment).toEqual({ amount: 30_000, price_id: plan.calls, since: '2026-04-01T00:00:00.000Z' });
    const removed = await acme.http.DELETE('/v1/subscriptions/{id}/minimum-commitment', { path: { id: sub.id } });
    expect(removed.status, removed.text).toBe(200);
    expect(removed.body.data.minimum_commitment).toBeNull();
    const again = await acme.http.DELETE('/v1/subscriptions/{id}/minimum-commitment', { path: { id: sub.id } });
    expect(again.status, again.text).toBe(409);
    await retire(acme, sub.id);
  });

  it('bills the shortfall of a full period on the renewal, taxed like the fee, and nothing when billing is above the minimum', async () => {
    // Both start 1 April (April: 30 days) with ₹2 000 a month committed over the whole subscription.
    const short = await subscribe(acme, { customer_id: await createCustomer(acme), plan_id: plan.id, minimum_commitment: { amount: 200_000 } });
    const above = await subscribe(acme, { customer_id: await createCustomer(acme), plan_id: plan.id, minimum_commitment: { amount: 200_000 } });
    await calls(short.customer_id, 100, '2026-04-10T00:00:00Z'); // 100 × 200 = 20 000
    await calls(above.customer_id, 800, '2026-04-10T00:00:00Z'); // 800 × 200 = 160 000
    // The upcoming invoice shows the true-up the renewal will add, on the usage so far.
    const upcoming = await acme.http.GET('/v1/subscriptions/{id}/upcoming-invoice', { path: { id: short.id } });
    expect(upcoming.status, upcoming.text).toBe(200);
    expect(upcoming.body.data.lines.map((l) => l.amount)).toEqual([20_000, 50_000, 130_000]);
    await travelTo(t, '2026-05-01T00:00:00Z');

    // Short: billed for April = fee 50 000 (April's invoice) + usage 20 000 = 70 000; true-up 200 000 − 70 000 = 130 000.
    const renewal = (await invoicesOf(acme, short.id)).at(-1)!;
    const line = trueUpOf(renewal)!;
    expect(line).toMatchObject({
      description: 'Minimum commitment true-up: INR 2,000.00 committed, INR 700.00 billed, 2026-04-01 to 2026-05-01',
      quantity: 1,
      unit_amount: 130_000,
      amount: 130_000,
      discount_amount: 0,
      hsn_code: '998314',
      plan_id: plan.id,
      cgst_amount: 11_700, // 130 000 × 9 %
      sgst_amount: 11_700,
    });
    // Lines: usage 20 000, May's fee 50 000, true-up 130 000 = 200 000; GST 18 % = 36 000; total 236 000.
    expect(renewal).toMatchObject({ billing_reason: 'subscription_cycle', subtotal: 200_000, tax_amount: 36_000, total: 236_000 });
    expect(renewal.lines.map((l: Line) => l.amount)).toEqual([20_000, 50_000, 130_000]);

    // Above: 50 000 + 160 000 = 210 000 ≥ 200 000: no true-up.
    const aboveRenewal = (await invoicesOf(acme, above.id)).at(-1)!;
    expect(trueUpOf(aboveRenewal)).toBeUndefined();
    expect(aboveRenewal).toMatchObject({ subtotal: 210_000 });
    await retire(acme, short.id, above.id);
  });

  it('prorates a commitment that starts inside a period, and counts only the committed price', async () => {
    // 1 May → 1 June: 31 days.
    const partial = await subscribe(acme, { customer_id: await createCustomer(acme), plan_id: plan.id });
    const perPrice = await subscribe(acme, {
      customer_id: await createCustomer(acme),
      plan_id: plan.id,
      minimum_commitment: { amount: 100_000, price_id: plan.calls },
    });
    await travelTo(t, '2026-05-11T00:00:00Z');
    const set = await acme.http.PUT('/v1/subscriptions/{id}/minimum-commitment', { path: { id: partial.id }, body: { amount: 200_000 } });
    expect(set.status, set.text).toBe(200);
    expect(set.body.data.minimum_commitment!.since).toBe('2026-05-11T00:00:00.000Z');
    await calls(perPrice.customer_id, 100, '2026-05-20T00:00:00Z'); // 20 000 on the calls price
    await travelTo(t, '2026-06-01T00:00:00Z');

    // Partial: 21 of 31 days committed: 200 000 × 21 ÷ 31 = 135 483.87 → 135 484. Billed: May's fee 50 000 (no usage).
    // True-up 135 484 − 50 000 = 85 484; GST 9 % = 7 693.56 → 7 694 a half.
    const partialLine = trueUpOf((await invoicesOf(acme, partial.id)).at(-1)!)!;
    expect(partialLine).toMatchObject({
      description: 'Minimum commitment true-up: INR 1,354.84 committed (21 of 31 days), INR 500.00 billed, 2026-05-01 to 2026-06-01',
      amount: 85_484,
      cgst_amount: 7_694,
      sgst_amount: 7_694,
    });

    // Per price: only the calls count (20 000; the fee's 50 000 does not): true-up 100 000 − 20 000 = 80 000.
    const perPriceLine = trueUpOf((await invoicesOf(acme, perPrice.id)).at(-1)!)!;
    expect(perPriceLine).toMatchObject({ amount: 80_000, hsn_code: '998314', cgst_amount: 7_200, sgst_amount: 7_200 });
    expect(perPriceLine.description).toContain('INR 1,000.00 committed, INR 200.00 billed');
    await retire(acme, partial.id, perPrice.id);
  });

  it('counts billing after the coupon, and the coupon does not reduce the true-up', async () => {
    const coupon = await acme.http.POST('/v1/coupons', { body: { code: uid('half'), percent_off: 50, duration: 'forever' } });
    expect(coupon.status, coupon.text).toBe(201);
    // 1 June → 1 July.
    const sub = await subscribe(acme, {
      customer_id: await createCustomer(acme),
      plan_id: plan.id,
      coupon: coupon.body.data.code,
      minimum_commitment: { amount: 200_000 },
    });
    await calls(sub.customer_id, 250, '2026-06-15T00:00:00Z'); // 250 × 200 = 50 000
    await travelTo(t, '2026-07-01T00:00:00Z');
    // Net billed for June: fee 50 000 − 50 % = 25 000, usage 50 000 − 50 % = 25 000: 50 000. True-up 150 000, undiscounted.
    const renewal = (await invoicesOf(acme, sub.id)).at(-1)!;
    expect(trueUpOf(renewal)).toMatchObject({ amount: 150_000, discount_amount: 0, description: expect.stringContaining('INR 500.00 billed') });
    // Usage 25 000 + July's fee 25 000 + true-up 150 000 = 200 000.
    expect(renewal).toMatchObject({ subtotal: 200_000, discount_amount: 50_000 });
    await retire(acme, sub.id);
  });

  it('prorates to the day of an immediate cancellation, after the credit for the unused time', async () => {
    // 1 July → 1 August: 31 days; ₹3 100 committed.
    const sub = await subscribe(acme, { customer_id: await createCustomer(acme), plan_id: plan.id, minimum_commitment: { amount: 310_000 } });
    await calls(sub.customer_id, 10, '2026-07-05T00:00:00Z'); // 10 × 200 = 2 000
    await travelTo(t, '2026-07-11T00:00:00Z');
    const res = await acme.http.POST('/v1/subscriptions/{id}/cancel', { path: { id: sub.id }, body: { at_period_end: false, prorate: true } });
    expect(res.status, res.text).toBe(200);
    // Unused 21 of 31 days of the invoice's 59 000: 39 967.74 → 39 968 credited. The note reverses
    // each tax half pro rata: 4 500 × 39 968 ÷ 59 000 = 3 048.30 → 3 048, so its taxable part is
    // 39 968 − 2 × 3 048 = 33 872.
    const note = await acme.http.GET('/v1/credit-notes/{id}', { path: { id: res.body.data.proration!.credit_note_id! } });
    expect(note.body.data).toMatchObject({ amount: 39_968, subtotal: 33_872 });
    // Committed: 10 of 31 days: 310 000 × 10 ÷ 31 = 100 000. Billed: fee 50 000 − 33 872 credited + usage 2 000 = 18 128.
    // True-up 100 000 − 18 128 = 81 872, on the final invoice beside the usage.
    const final = (await invoicesOf(acme, sub.id)).at(-1)!;
    expect(final.billing_reason).toBe('subscription_final');
    expect(final.lines.map((l: Line) => l.amount)).toEqual([2_000, 81_872]);
    expect(trueUpOf(final)!.description).toBe(
      'Minimum commitment true-up: INR 1,000.00 committed (10 of 31 days), INR 181.28 billed, 2026-07-01 to 2026-07-11',
    );
  });

  it('is trued up by a test clock advance like any renewal, at the clock’s instants', async () => {
    const clock = await acme.http.POST('/v1/test-clocks', { body: { frozen_time: '2026-01-01T00:00:00.000Z', name: 'Commitments' } });
    expect(clock.status, clock.text).toBe(201);
    const customer = await acme.http.POST('/v1/customers', {
      body: {
        email: `${uid('clock')}@customer.test`,
        name: 'On a clock',
        gstin: gstin('29BBBBB2222B1Z'),
        test_clock_id: clock.body.data.id,
      },
    });
    expect(customer.status, customer.text).toBe(201);
    // January on the clock (31 days); ₹800 committed.
    const sub = await subscribe(acme, { customer_id: customer.body.data.id, plan_id: plan.id, minimum_commitment: { amount: 80_000 } });
    expect(sub.minimum_commitment.since).toBe('2026-01-01T00:00:00.000Z');
    await calls(customer.body.data.id, 20, '2026-01-15T00:00:00Z'); // 20 × 200 = 4 000
    const advanced = await acme.http.POST('/v1/test-clocks/{id}/advance', { path: { id: clock.body.data.id }, body: { to: '2026-03-01T00:00:00.000Z' } });
    expect(advanced.status, advanced.text).toBe(200);
    const invoices = await invoicesOf(acme, sub.id);
    // January: fee 50 000 + usage 4 000 = 54 000 → true-up 26 000 on the 1 February renewal.
    // February: fee 50 000, no usage → true-up 30 000 on the 1 March renewal.
    expect(invoices.map((i: { period_start: string; lines: Line[] }) => [i.period_start, trueUpOf(i)?.amount ?? 0])).toEqual([
      ['2026-01-01T00:00:00.000Z', 0],
      ['2026-02-01T00:00:00.000Z', 26_000],
      ['2026-03-01T00:00:00.000Z', 30_000],
    ]);
    await retire(acme, sub.id);
  });
});
