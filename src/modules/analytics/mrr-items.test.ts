import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKosh, type Tenant, type TestKosh } from '../../../test/support/harness.js';
import type { components } from '../../../clients/typescript/src/schema.js';
import { dataOf as ok } from '../../../test/support/typed-api.js';
import { monthlyRecurringRevenue } from './mrr.js';

/**
 * MRR counts subscription items (add-ons, decision 0470) beside the plan's fee (decision 0560).
 * A ₹1,000.00/month plan and a ₹199.99/month add-on, 3 of them on each subscription (59 997 paise):
 *   S1 without a coupon                         → 100 000 + 59 997 = 159 997
 *   S2 with 20 % forever (every line)           → 100 000 − 20 000 = 80 000; 59 997 − 11 999.4 → 11 999 = 47 998; 127 998
 *   S3 with 10 % forever, only on the base plan → 100 000 − 10 000 = 90 000; the add-on is not covered: 59 997; 149 997
 *   S4 with ₹300 off forever                    → 159 997 − 30 000 = 129 997
 * Total 159 997 + 127 998 + 149 997 + 129 997 = 567 989.
 */
let t: TestKosh;
let tenant: Tenant;
const subs: string[] = [];

beforeAll(async () => {
  t = await startTestKosh();
  tenant = await t.registerTenant();
  const basic = (await ok(tenant.http.POST('/v1/plans', { body: { name: 'basic', code: 'basic', interval_unit: 'month', amount: 100_000, currency: 'INR' } })))
    .id;
  const addOn = (
    await ok(tenant.http.POST('/v1/plans', { body: { name: 'support', code: 'support', interval_unit: 'month', amount: 19_999, currency: 'INR' } }))
  ).prices[0]!.id;
  await ok(tenant.http.POST('/v1/coupons', { body: { code: 'ALL20', percent_off: 20, duration: 'forever' } }));
  await ok(tenant.http.POST('/v1/coupons', { body: { code: 'BASIC10', percent_off: 10, duration: 'forever', plan_ids: [basic] } }));
  await ok(tenant.http.POST('/v1/coupons', { body: { code: 'OFF300', amount_off: 30_000, currency: 'INR', duration: 'forever' } }));
  for (const [i, coupon] of [undefined, 'ALL20', 'BASIC10', 'OFF300'].entries()) {
    const customer = (await ok(tenant.http.POST('/v1/customers', { body: { email: `s${i}@mrr-items.test` } }))).id;
    const sub = await ok(tenant.http.POST('/v1/subscriptions', { body: { customer_id: customer, plan_id: basic, ...(coupon ? { coupon } : {}) } }));
    await ok(tenant.http.POST('/v1/subscriptions/{id}/items', { path: { id: sub.id }, body: { price_id: addOn, quantity: 3, proration_behavior: 'none' } }));
    subs.push(sub.id);
  }
}, 120_000);
afterAll(() => t?.close());

describe('MRR with subscription items', () => {
  it('adds each add-on’s price × quantity, the coupon taken off the lines it covers', async () => {
    const report = await ok(tenant.http.GET('/v1/analytics/mrr', { query: { currency: 'INR' } }));
    expect(report.months.at(-1)).toMatchObject({ mrr: 567_989, subscriptions: 4 });
    // The TypeScript twin agrees, subscription by subscription.
    const base = { amount: 100_000, quantity: 1, intervalUnit: 'month' as const, intervalCount: 1, status: 'active' };
    const items = (covered: boolean) => [{ amount: 19_999, quantity: 3, covered }];
    expect([
      monthlyRecurringRevenue({ ...base, items: items(false) }),
      monthlyRecurringRevenue({ ...base, items: items(true), coupon: { percentOffBp: 2000 } }),
      monthlyRecurringRevenue({ ...base, items: items(false), coupon: { percentOffBp: 1000 } }),
      monthlyRecurringRevenue({ ...base, items: items(true), coupon: { amountOff: 30_000 } }),
    ]).toEqual([159_997, 127_998, 149_997, 129_997]);
  });

  it('records the removal of an add-on as a contraction in the snapshot', async () => {
    await ok(tenant.http.POST('/v1/analytics/snapshots'));
    t.clock.advanceDays(1); // a day later, in the same month
    const items = await ok(tenant.http.GET('/v1/subscriptions/{id}/items', { path: { id: subs[0]! } }));
    const addOn = items.find((i: { kind: string }) => i.kind === 'add_on');
    await ok(
      tenant.http.DELETE('/v1/subscriptions/{id}/items/{item_id}', { path: { id: subs[0]!, item_id: addOn!.id! }, query: { proration_behavior: 'none' } }),
    );
    // S1 loses its 59 997: 567 989 − 59 997 = 507 992.
    expect((await ok(tenant.http.GET('/v1/analytics/mrr', { query: { currency: 'INR' } }))).months.at(-1)).toMatchObject({ mrr: 507_992 });
    await ok(tenant.http.POST('/v1/analytics/snapshots'));
    const waterfall = (await ok(tenant.http.GET('/v1/analytics/mrr/waterfall', { query: { currency: 'INR' } }))) as components['schemas']['MrrWaterfall'];
    // The month: 567 989 new (four subscriptions with their add-ons), 59 997 contraction, ending 507 992.
    expect(waterfall.months.at(-1)).toMatchObject({ new: 567_989, contraction: 59_997, net_change: 507_992, ending_mrr: 507_992 });
  });
});
