import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKosh, type Tenant, type TestKosh } from '../../../test/support/harness.js';
import { dataOf as ok } from '../../../test/support/typed-api.js';
import { monthlyRecurringRevenue } from './mrr.js';

/**
 * MRR of the open month is computed on read, net of coupons (issue #34 item 8, decision 0451).
 * A ₹1,000.00/month plan:
 *   S1 with a forever 20 % coupon           → ₹800.00
 *   S2 with a once 50 % coupon              → ₹1,000.00 (a once coupon discounts one invoice, not the recurring revenue)
 *   S3 with ₹250.00 off for 2 months        → ₹750.00, then ₹1,000.00 once the two months are over
 *   S4 on a ₹1,999.00 plan with 20 % forever → ₹1,599.20
 * No snapshot has been taken (the worker never ran): MRR is ₹4,149.20 now, ₹4,399.20 three months on.
 */
let t: TestKosh;
let tenant: Tenant;

async function currentMonth() {
  const report = await ok(tenant.http.GET('/v1/analytics/mrr', { query: { currency: 'INR' } }));
  return report.months.at(-1);
}

beforeAll(async () => {
  t = await startTestKosh();
  tenant = await t.registerTenant();
  const basic = (
    await ok(
      tenant.http.POST('/v1/plans', { body: { name: 'basic', code: 'basic', interval_unit: 'month', interval_count: 1, amount: 100_000, currency: 'INR' } }),
    )
  ).id;
  const team = (
    await ok(
      tenant.http.POST('/v1/plans', { body: { name: 'team', code: 'team', interval_unit: 'month', interval_count: 1, amount: 199_900, currency: 'INR' } }),
    )
  ).id;
  await ok(tenant.http.POST('/v1/coupons', { body: { code: 'FOREVER20', percent_off: 20, duration: 'forever' } }));
  await ok(tenant.http.POST('/v1/coupons', { body: { code: 'ONCE50', percent_off: 50, duration: 'once' } }));
  await ok(
    tenant.http.POST('/v1/coupons', { body: { code: 'TWOMONTHS250', amount_off: 25_000, currency: 'INR', duration: 'repeating', duration_in_months: 2 } }),
  );
  const subscribe = async (i: number, plan: string, coupon: string) => {
    const customer = (await ok(tenant.http.POST('/v1/customers', { body: { email: `s${i}@mrr.test` } }))).id;
    await ok(tenant.http.POST('/v1/subscriptions', { body: { customer_id: customer, plan_id: plan, coupon } }));
  };
  await subscribe(1, basic, 'FOREVER20');
  await subscribe(2, basic, 'ONCE50');
  await subscribe(3, basic, 'TWOMONTHS250');
  await subscribe(4, team, 'FOREVER20');
}, 120_000);
afterAll(() => t?.close());

describe('MRR on read, net of coupons', () => {
  it('counts the open month from the subscriptions as they are, before any snapshot', async () => {
    expect(await currentMonth()).toMatchObject({ mrr: 414_920, subscriptions: 4, customers: 4, snapshot_date: null });
  });

  it('stops discounting a repeating coupon once its months are over', async () => {
    t.clock.advanceDays(92);
    expect(await currentMonth()).toMatchObject({ mrr: 439_920, subscriptions: 4, snapshot_date: null });
  });

  it('takes snapshots net of coupons too', async () => {
    const snap = await ok(tenant.http.POST('/v1/analytics/snapshots'));
    expect(snap.subscriptions).toBe(4);
    t.clock.advanceDays(31);
    const report = await ok(tenant.http.GET('/v1/analytics/mrr', { query: { currency: 'INR' } }));
    // Last month is its snapshot: ₹4,399.20.
    expect(report.months.at(-2)).toMatchObject({ mrr: 439_920 });
  });

  it('computes the same per subscription in TypeScript as the SQL does', () => {
    const month = { quantity: 1, intervalUnit: 'month' as const, intervalCount: 1, status: 'active' };
    expect(monthlyRecurringRevenue({ ...month, amount: 100_000, coupon: { percentOffBp: 2000 } })).toBe(80_000);
    expect(monthlyRecurringRevenue({ ...month, amount: 199_900, coupon: { percentOffBp: 2000 } })).toBe(159_920);
    expect(monthlyRecurringRevenue({ ...month, amount: 100_000, coupon: { amountOff: 25_000 } })).toBe(75_000);
    expect(monthlyRecurringRevenue({ ...month, amount: 10_000, coupon: { amountOff: 25_000 } })).toBe(0);
  });
});
