import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKosh, type Tenant, type TestKosh } from '../support/harness.js';
import { createCustomer, createInvoice } from '../support/billing.js';

/**
 * Revenue timing (issue #34 item 7): the revenue report and the daily recognition use the
 * entity's calendar months (Asia/Kolkata here), as the journal, the periods and GSTR-1 do; and a
 * second credit note crediting the rest of a service period (a plan change) releases all that is
 * still deferred — the unrecognized share is the time still to come, not recognized ÷ amount.
 */
let t: TestKosh;
let tenant: Tenant;

async function revenue() {
  const res = await tenant.http.GET('/v1/finance/revenue');
  expect(res.status, res.text).toBe(200);
  return res.body.data;
}

beforeAll(async () => {
  t = await startTestKosh();
  tenant = await t.registerTenant();
  const [entity] = (await tenant.http.GET('/v1/entities')).body.data;
  expect(entity!.time_zone).toBe('Asia/Kolkata');
});
afterAll(() => t.close());

describe('revenue in the entity’s months', () => {
  it('puts an invoice of 01:30 IST on 1 February in February, not in January (UTC)', async () => {
    t.clock.set('2026-01-31T20:00:00Z'); // 1 February 01:30 IST
    const invoice = await createInvoice(tenant, await createCustomer(tenant), [100_000]);
    expect(invoice.subtotal).toBe(100_000);
    const r = await revenue();
    expect(r.months).toEqual([{ month: '2026-02', recognized: 100_000 }]);
  });

  it('recognizes a service day in the month it starts in the entity’s zone', async () => {
    // A monthly ₹2,800.00 plan from 28 February 20:00 UTC = 1 March 01:30 IST: a period of 28 days
    // of ₹100.00. On 2 March 21:00 UTC two days have passed, both March days in IST (in UTC the
    // first starts on 28 February and would be February's): ₹200.00 in March.
    t.clock.set('2026-02-28T20:00:00Z');
    const plan = await tenant.http.POST('/v1/plans', {
      body: { name: 'Monthly', code: 'monthly-ist', interval_unit: 'month', amount: 280_000, currency: 'INR' },
    });
    expect(plan.status, plan.text).toBe(201);
    const sub = await tenant.http.POST('/v1/subscriptions', { body: { customer_id: await createCustomer(tenant), plan_id: plan.body.data.id } });
    expect(sub.status, sub.text).toBe(201);
    t.clock.set('2026-03-02T21:00:00Z');
    await t.kosh.worker.drain();
    const r = await revenue();
    expect(r.months).toEqual([
      { month: '2026-02', recognized: 100_000 },
      { month: '2026-03', recognized: 20_000 },
    ]);
  });
});

describe('a period credited in two notes (plan change)', () => {
  it('releases everything still deferred when the rest of the period is credited', async () => {
    // ₹3,000.00 for 30 days from 1 April 05:30 IST; on day 15 a note credits ₹1,500.00 and another
    // the other ₹1,500.00 (the invoice is fully credited). Each note's part still to come is 15/30:
    // ₹750.00 + ₹750.00 = the ₹1,500.00 deferred. (recognized ÷ amount gave the second note
    // ₹1,500.00 × 750/2,250 = ₹500.00 and left ₹250.00 deferred for a plan no longer served.)
    const fresh = await t.registerTenant();
    t.clock.set('2026-04-01T00:00:00Z');
    const plan = await fresh.http.POST('/v1/plans', {
      body: { name: 'Monthly', code: 'monthly-30', interval_unit: 'month', amount: 300_000, currency: 'INR' },
    });
    const customer = await createCustomer(fresh);
    const sub = await fresh.http.POST('/v1/subscriptions', { body: { customer_id: customer, plan_id: plan.body.data.id } });
    expect(sub.status, sub.text).toBe(201);
    const [invoice] = (await fresh.http.GET('/v1/invoices', { query: { subscription_id: sub.body.data.id } })).body.data;
    expect(invoice).toMatchObject({ subtotal: 300_000, total: 300_000 });
    t.clock.set('2026-04-16T00:30:00Z');
    await t.kosh.worker.drain(); // 15 of 30 days recognized: ₹1,500.00
    for (const amount of [150_000, 150_000]) {
      const note = await fresh.http.POST('/v1/credit-notes', { body: { customer_id: customer, invoice_id: invoice!.id, amount } });
      expect(note.status, note.text).toBe(201);
    }
    const r = (await fresh.http.GET('/v1/finance/revenue')).body.data;
    expect(r.deferred_total).toBe(0);
    expect(r.recognized_total).toBe(0);
  });
});
