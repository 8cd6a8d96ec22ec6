import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKosh, type Tenant, type TestKosh } from '../../../test/support/harness.js';
import type { operations } from '../../../clients/typescript/src/schema.js';
import { dataOf as ok, type SuccessBody } from '../../../test/support/typed-api.js';
import { gstinFor } from '../../../test/support/billing.js';
import { monthlyRecurringRevenue } from './mrr.js';

/**
 * Revenue analytics against hand-computed figures. One tenant lives through April–June 2026:
 *   04-01  C1 basic monthly ₹1 000 · C2 yearly ₹12 000 (= ₹1 000/month) · C3 weekly ₹300
 *          (= ₹1 300/month) · C4 basic × 3 seats · C5 basic with a 14-day trial (no MRR yet)
 *          → MRR 6 300.00, four new
 *   04-20  C5's trial converted (new 1 000.00) · C1 upgraded to pro ₹2 000 (expansion 1 000.00)
 *          → MRR 8 300.00
 *   05-10  C1 back to basic (contraction 1 000.00) · C3 canceled (churn 1 300.00) · C2 paused
 *          (churn 1 000.00) → MRR 5 000.00
 *   06-05  C2 resumed (reactivation 1 000.00) → MRR 6 000.00
 */
let t: TestKosh;
let tenant: Tenant;

// The waterfall and the aging report answer the report, or, asked for a `bucket`, the list of rows
// behind it: Report and reportOf, List and listOf take the shape the query asks for.
type Waterfall = SuccessBody<operations['getAnalyticsMrrWaterfall']>;
type Report<B> = B extends { object: 'list' } ? never : B extends { data: infer D } ? D : never;
type List<B> = B extends { object: 'list'; data: infer D } ? D : never;
const reportOf = <R extends { body: unknown }>(res: R) => res as Omit<R, 'body'> & { body: Exclude<R['body'], { object: 'list' }> };
const listOf = <R extends { body: unknown }>(res: R) => res as Omit<R, 'body'> & { body: Extract<R['body'], { object: 'list' }> };

const subs: Record<string, string> = {};
const customers: Record<string, string> = {};
const plans: Record<string, string> = {};

async function at(instant: string) {
  t.clock.set(new Date(instant));
  await t.kosh.worker.drain();
}

async function snapshot() {
  const res = await tenant.http.POST('/v1/analytics/snapshots');
  expect(res.status).toBe(200);
  return res.body.data;
}

beforeAll(async () => {
  t = await startTestKosh();
  tenant = await t.registerTenant();
  const plan = async (code: string, interval_unit: 'month' | 'year' | 'week', amount: number) =>
    (plans[code] = (await ok(tenant.http.POST('/v1/plans', { body: { name: code, code, interval_unit, interval_count: 1, amount, currency: 'INR' } }))).id);
  await plan('basic', 'month', 100000);
  await plan('pro', 'month', 200000);
  await plan('yearly', 'year', 1200000);
  await plan('weekly', 'week', 30000);
  for (const c of ['C1', 'C2', 'C3', 'C4', 'C5'])
    customers[c] = (await ok(tenant.http.POST('/v1/customers', { body: { email: `${c.toLowerCase()}@analytics.test`, name: c } }))).id;
  const subscribe = async (c: string, plan: string, extra: Record<string, unknown> = {}) =>
    (subs[c] = (await ok(tenant.http.POST('/v1/subscriptions', { body: { customer_id: customers[c]!, plan_id: plans[plan]!, ...extra } }))).id);

  await at('2026-04-01T09:00:00Z');
  await subscribe('C1', 'basic');
  await subscribe('C2', 'yearly');
  await subscribe('C3', 'weekly');
  await subscribe('C4', 'basic', { quantity: 3 });
  await subscribe('C5', 'basic', { trial_days: 14 });
  await snapshot();

  await at('2026-04-20T09:00:00Z');
  await ok(tenant.http.POST('/v1/subscriptions/{id}/change-plan', { path: { id: subs.C1! }, body: { plan_id: plans.pro! } }));
  await snapshot();

  await at('2026-05-10T09:00:00Z');
  await ok(tenant.http.POST('/v1/subscriptions/{id}/change-plan', { path: { id: subs.C1! }, body: { plan_id: plans.basic! } }));
  await ok(tenant.http.POST('/v1/subscriptions/{id}/cancel', { path: { id: subs.C3! }, body: { at_period_end: false } }));
  await ok(tenant.http.POST('/v1/subscriptions/{id}/pause', { path: { id: subs.C2! } }));
  await snapshot();

  await at('2026-06-05T09:00:00Z');
  await ok(tenant.http.POST('/v1/subscriptions/{id}/resume', { path: { id: subs.C2! } }));
  await snapshot();
}, 120_000);

afterAll(async () => {
  await t?.close();
});

describe('analytics', () => {
  describe('GET /v1/analytics/mrr', () => {
    it('answers MRR at each month end, normalized by interval, trials and pauses excluded', async () => {
      const mrr = await ok(tenant.http.GET('/v1/analytics/mrr', { query: { from: '2026-03', to: '2026-06' } }));
      expect(mrr.currency).toBe('INR');
      expect(mrr.months.map((m: { month: string; mrr: number; customers: number }) => [m.month, m.mrr, m.customers])).toEqual([
        ['2026-03', 0, 0],
        ['2026-04', 830000, 5],
        ['2026-05', 500000, 3],
        ['2026-06', 600000, 4],
      ]);
    });

    it('computes in SQL exactly what the documented rule computes', async () => {
      const rows = await t.database.db.selectFrom('mrr_current').select(['subscription_id', 'mrr']).where('tenant_id', '=', tenant.tenantId).execute();
      const expected: Record<string, number> = {
        [subs.C1!]: monthlyRecurringRevenue({ amount: 100000, quantity: 1, intervalUnit: 'month', intervalCount: 1, status: 'active' }),
        [subs.C2!]: monthlyRecurringRevenue({ amount: 1200000, quantity: 1, intervalUnit: 'year', intervalCount: 1, status: 'active' }),
        [subs.C3!]: 0,
        [subs.C4!]: monthlyRecurringRevenue({ amount: 100000, quantity: 3, intervalUnit: 'month', intervalCount: 1, status: 'active' }),
        [subs.C5!]: 100000,
      };
      expect(Object.fromEntries(rows.map((r) => [r.subscription_id, r.mrr]))).toEqual(expected);
    });

    it('keeps past days as they were, however often the snapshot runs again', async () => {
      const before = (await ok(tenant.http.GET('/v1/analytics/mrr/waterfall', { query: { from: '2026-04', to: '2026-06' } }))) as Report<Waterfall>;
      await snapshot();
      await snapshot();
      await ok(tenant.http.POST('/v1/subscriptions/{id}/pause', { path: { id: subs.C4! } }));
      const after = (await ok(tenant.http.GET('/v1/analytics/mrr/waterfall', { query: { from: '2026-04', to: '2026-05' } }))) as Report<Waterfall>;
      expect(after.months).toEqual(before.months.slice(0, 2));
      // Today's snapshot is refreshed, not stacked: pausing then resuming C4 today leaves only
      // today's one real movement (C2's reactivation).
      expect((await snapshot()).movements).toBe(2);
      await ok(tenant.http.POST('/v1/subscriptions/{id}/resume', { path: { id: subs.C4! } }));
      expect((await snapshot()).movements).toBe(1);
      expect(((await ok(tenant.http.GET('/v1/analytics/mrr/waterfall', { query: { from: '2026-04', to: '2026-06' } }))) as Report<Waterfall>).months).toEqual(
        before.months,
      );
    });

    it('answers CSV for ?format=csv and Accept: text/csv', async () => {
      const res = await tenant.http.GET('/v1/analytics/mrr', { query: { from: '2026-04', to: '2026-05', format: 'csv' } });
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/csv/);
      expect(res.text.trim().split('\n')).toEqual([
        'month,currency,mrr,subscriptions,customers,snapshot_date',
        '2026-04,INR,830000,5,5,2026-04-20',
        '2026-05,INR,500000,3,3,2026-05-10',
      ]);
      const accept = await tenant.http.GET('/v1/analytics/invoice-aging', { headers: { accept: 'text/csv' } });
      expect(accept.headers['content-type']).toMatch(/^text\/csv/);
      expect(accept.text.split('\n')[0]).toBe('bucket,currency,amount,count');
    });
  });

  describe('GET /v1/analytics/mrr/waterfall', () => {
    it('splits each month into new, expansion, contraction, churned and reactivated, starting + movements = ending', async () => {
      const w = (await ok(tenant.http.GET('/v1/analytics/mrr/waterfall', { query: { from: '2026-04', to: '2026-06' } }))) as Report<Waterfall>;
      const pick = (m: (typeof w.months)[number]) => [m.starting_mrr, m.new, m.expansion, m.contraction, m.churned, m.reactivated, m.ending_mrr];
      expect(w.months.map(pick)).toEqual([
        [0, 730000, 100000, 0, 0, 0, 830000],
        [830000, 0, 0, 100000, 230000, 0, 500000],
        [500000, 0, 0, 0, 0, 100000, 600000],
      ]);
      expect(w.months[1]!.counts).toEqual({ new: 0, expansion: 0, contraction: 1, churned: 2, reactivated: 0 });
    });

    it('lists the subscriptions behind a bucket', async () => {
      const res = listOf(await tenant.http.GET('/v1/analytics/mrr/waterfall', { query: { bucket: 'churned', month: '2026-05' } }));
      expect(res.status).toBe(200);
      expect(res.body.object).toBe('list');
      expect(res.body.total_count).toBe(2);
      expect(new Set(res.body.data.map((m: { subscription_id: string }) => m.subscription_id))).toEqual(new Set([subs.C2, subs.C3]));
      expect(res.body.data.find((m: { subscription_id: string }) => m.subscription_id === subs.C3)).toMatchObject({
        previous_mrr: 130000,
        mrr: 0,
        change: -130000,
        effective_date: '2026-05-10',
      });
      const reactivated = (await ok(tenant.http.GET('/v1/analytics/mrr/waterfall', { query: { bucket: 'reactivated', month: '2026-06' } }))) as List<Waterfall>;
      expect(reactivated.map((m: { subscription_id: string }) => m.subscription_id)).toEqual([subs.C2]);
      // Pages and cursors (the movement's id).
      const page1 = listOf(await tenant.http.GET('/v1/analytics/mrr/waterfall', { query: { bucket: 'churned', month: '2026-05', limit: 1 } }));
      expect(page1.body).toMatchObject({ has_more: true, total_count: 2 });
      const page2 = listOf(
        await tenant.http.GET('/v1/analytics/mrr/waterfall', {
          query: { bucket: 'churned', month: '2026-05', limit: 1, starting_after: page1.body.data[0]!.id },
        }),
      );
      expect(page2.body).toMatchObject({ has_more: false, total_count: 2 });
      expect(page2.body.data.map((m: { id: string }) => m.id)).toEqual([res.body.data.find((m: { id: string }) => m.id !== page1.body.data[0]!.id)!.id]);
      const back = listOf(
        await tenant.http.GET('/v1/analytics/mrr/waterfall', {
          query: { bucket: 'churned', month: '2026-05', ending_before: page2.body.data[0]!.id },
        }),
      );
      expect(back.body.data.map((m: { id: string }) => m.id)).toEqual([page1.body.data[0]!.id]);
    });
  });

  describe('GET /v1/analytics/churn', () => {
    it('answers logo churn, gross revenue churn and net revenue retention', async () => {
      const churn = await ok(tenant.http.GET('/v1/analytics/churn', { query: { from: '2026-05', to: '2026-05' } }));
      expect(churn.months[0]).toEqual({
        month: '2026-05',
        customers_start: 5,
        customers_churned: 2,
        logo_churn_rate: 0.4,
        starting_mrr: 830000,
        churned_mrr: 230000,
        contraction_mrr: 100000,
        expansion_mrr: 0,
        gross_revenue_churn_rate: 0.3976, // 330 000 / 830 000
        net_revenue_retention: 0.6024, // 500 000 / 830 000
      });
    });
  });

  describe('GET /v1/analytics/cohorts', () => {
    it('follows the April cohort month by month', async () => {
      const report = await ok(tenant.http.GET('/v1/analytics/cohorts', { query: { from: '2026-04', to: '2026-06' } }));
      expect(report.cohorts).toHaveLength(1);
      const april = report.cohorts[0]!;
      expect(april).toMatchObject({ cohort: '2026-04', customers: 5, mrr: 830000 });
      expect(
        april.months.map((m: { month: string; customers: number; mrr: number; customer_retention: number | null }) => [
          m.month,
          m.customers,
          m.mrr,
          m.customer_retention,
        ]),
      ).toEqual([
        ['2026-04', 5, 830000, 1],
        ['2026-05', 3, 500000, 0.6],
        ['2026-06', 4, 600000, 0.8],
      ]);
    });
  });

  describe('bad input', () => {
    it.each([
      ['from after to', '/v1/analytics/mrr?from=2026-06&to=2026-01'],
      ['a range over 10 years', '/v1/analytics/mrr?from=2010-01&to=2026-01'],
      ['an unknown currency', '/v1/analytics/mrr?currency=XYZ'],
      ['a malformed month', '/v1/analytics/churn?from=2026-13'],
      ['a malformed date', '/v1/analytics/cohorts?to=2026-02-30'],
      ['a bucket without a month', '/v1/analytics/mrr/waterfall?bucket=churned'],
      ['an unknown bucket', '/v1/analytics/mrr/waterfall?bucket=lost&month=2026-05'],
      ['an unknown aging bucket', '/v1/analytics/invoice-aging?bucket=old'],
    ])('refuses %s with 400', async (_, url) => {
      const res = await tenant.api('GET', url);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('validation_failed');
    });
  });
});

describe('GET /v1/analytics/invoice-aging', () => {
  it('buckets what is still due on open invoices by days past due, with the invoices behind each bucket', async () => {
    const other = await t.registerTenant({ gstin: gstinFor('29') }); // registered for GST: its invoices carry 18 %
    t.clock.set(new Date('2026-06-30T12:00:00Z'));
    const customer = (await other.http.POST('/v1/customers', { body: { email: 'aging@analytics.test', name: 'Aging' } })).body.data.id;
    const invoice = async (amount: number, due: string) => {
      const res = await other.http.POST('/v1/invoices', {
        body: {
          customer_id: customer,
          currency: 'INR',
          due_date: due,
          lines: [{ description: 'Work', quantity: 1, unit_amount: amount, hsn_code: '998314' }],
        },
      });
      expect(res.status).toBe(201);
      return res.body.data;
    };
    const current = await invoice(10000, '2026-07-15T00:00:00Z'); // not yet due
    await invoice(20000, '2026-06-20T00:00:00Z'); // 10 days
    const d45 = await invoice(30000, '2026-05-16T00:00:00Z'); // 45 days
    await invoice(40000, '2026-04-16T00:00:00Z'); // 75 days
    await invoice(50000, '2026-01-01T00:00:00Z'); // 180 days
    const paid = await invoice(60000, '2026-05-16T00:00:00Z');
    await other.http.POST('/v1/payments/offline', {
      body: { customer_id: customer, invoice_id: paid.id, payment_type: 'bank_transfer', amount: paid.amount_due },
    });

    const res = reportOf(await other.http.GET('/v1/analytics/invoice-aging', { query: { currency: 'INR' } }));
    expect(res.status).toBe(200);
    const due = (base: number) => base + Math.round(base * 0.18); // ₹ + 18 % IGST/CGST+SGST
    expect(res.body.data.buckets).toEqual([
      { bucket: 'current', amount: current.amount_due, count: 1 },
      { bucket: '1_30', amount: due(20000), count: 1 },
      { bucket: '31_60', amount: d45.amount_due, count: 1 },
      { bucket: '61_90', amount: due(40000), count: 1 },
      { bucket: '90_plus', amount: due(50000), count: 1 },
    ]);
    expect(res.body.data.total).toBe(due(10000) + due(20000) + due(30000) + due(40000) + due(50000));

    const bucket = listOf(await other.http.GET('/v1/analytics/invoice-aging', { query: { bucket: '31_60' } }));
    expect(bucket.body.data).toEqual([expect.objectContaining({ invoice_id: d45.id, days_past_due: 45, amount_due: d45.amount_due, bucket: '31_60' })]);

    // The bucket lists page by due date: every bucket edge (0, 1, 30, 31, 60, 61, 90, 91 days past
    // due, at the start and the end of the due day) lands in the list the summary counts it in.
    const today = Date.UTC(2026, 5, 30);
    for (const days of [0, 1, 30, 31, 60, 61, 90, 91]) {
      await invoice(1000, new Date(today - days * 86_400_000).toISOString());
      await invoice(1000, new Date(today - days * 86_400_000 + 86_399_000).toISOString());
    }
    const summary = reportOf(await other.http.GET('/v1/analytics/invoice-aging', { query: { currency: 'INR' } })).body.data.buckets;
    expect(summary.map((b) => b.count)).toEqual([3, 5, 5, 5, 3]);
    for (const { bucket: name, count } of summary) {
      const list = listOf(await other.http.GET('/v1/analytics/invoice-aging', { query: { bucket: name, limit: 1000 } }));
      expect(list.body, name).toMatchObject({ total_count: count, has_more: false });
      expect(list.body.data, name).toHaveLength(count);
      const days = list.body.data.map((r: { days_past_due: number }) => r.days_past_due);
      expect(days, name).toEqual([...days].sort((a: number, b: number) => b - a));
    }
    // Cursor pages walk the same list.
    const all = listOf(await other.http.GET('/v1/analytics/invoice-aging', { query: { bucket: '1_30' } })).body.data.map(
      (r: { invoice_id: string }) => r.invoice_id,
    );
    const first = listOf(await other.http.GET('/v1/analytics/invoice-aging', { query: { bucket: '1_30', limit: 2 } }));
    expect(first.body).toMatchObject({ has_more: true, total_count: 5 });
    const next = listOf(await other.http.GET('/v1/analytics/invoice-aging', { query: { bucket: '1_30', limit: 2, starting_after: all[1] } }));
    expect(next.body.data.map((r: { invoice_id: string }) => r.invoice_id)).toEqual(all.slice(2, 4));
    const previous = listOf(await other.http.GET('/v1/analytics/invoice-aging', { query: { bucket: '1_30', limit: 2, ending_before: all[4] } }));
    expect(previous.body.data.map((r: { invoice_id: string }) => r.invoice_id)).toEqual(all.slice(2, 4));
  });
});
