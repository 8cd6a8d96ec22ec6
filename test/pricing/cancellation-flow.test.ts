import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKosh, type Tenant, type TestKosh } from '../support/harness.js';
import { createCustomer, eventTypesOf, getSubscription, invoicesOf, karnatakaTenant, pay, subscribe } from '../subscriptions/helpers.js';

/**
 * The cancellation flow (DESIGN §24, decision 0381): a preview that writes nothing, a reason and
 * feedback recorded and reported. Karnataka tenant and customers (CGST 9 % + SGST 9 %).
 */
let t: TestKosh;
let acme: Tenant;

beforeAll(async () => {
  t = await startTestKosh();
  acme = await karnatakaTenant(t);
});
afterAll(() => t.close());

let n = 0;
const uid = (p: string) => `${p}-${Date.now().toString(36)}-${++n}`;

/** ₹1 000 a month plus ₹10 a call. */
async function meteredPlan() {
  const metric = await acme.http.POST('/v1/billable-metrics', { body: { name: 'Calls', code: uid('calls'), aggregation: 'count' } });
  expect(metric.status, metric.text).toBe(201);
  const plan = await acme.http.POST('/v1/plans', {
    body: {
      name: 'Usage plan',
      code: uid('plan'),
      interval: 'month',
      hsn_code: '998314',
      prices: [
        { currency: 'INR', amount: 100_000 },
        { currency: 'INR', billing_scheme: 'metered', metric_code: metric.body.data.code, amount: 1_000 },
      ],
    },
  });
  expect(plan.status, plan.text).toBe(201);
  return { metricCode: metric.body.data.code as string, planId: plan.body.data.id as string };
}

async function calls(customer: string, code: string, timestamps: string[]) {
  const res = await acme.http.POST('/v1/usage/events/batch', {
    body: {
      events: timestamps.map((timestamp) => ({ transaction_id: uid('tx'), customer_id: customer, metric_code: code, timestamp })),
    },
  });
  expect(res.status, res.text).toBe(202);
}

const creditNotesOf = async (customer: string) => (await acme.http.GET('/v1/credit-notes', { query: { customer_id: customer } })).body.data as unknown[];

describe('cancellation', () => {
  it('preview answers the credit note, the final usage invoice and the refundable credit, writes nothing, and the real cancel matches it', async () => {
    t.clock.set('2026-04-01T00:00:00Z');
    const { metricCode, planId } = await meteredPlan();
    const customer = await createCustomer(acme);
    const sub = await subscribe(acme, { customer_id: customer, plan_id: planId });
    const [first] = await invoicesOf(acme, sub.id);
    expect(first).toMatchObject({ billing_reason: 'subscription_create', total: 118_000 });
    await pay(acme, first);
    await calls(customer, metricCode, ['2026-04-02T00:00:00Z', '2026-04-03T00:00:00Z', '2026-04-04T00:00:00Z', '2026-04-05T00:00:00Z', '2026-04-06T00:00:00Z']);
    t.clock.set('2026-04-11T00:00:00Z');
    const body = { at_period_end: false, prorate: true, reason: 'too_expensive', feedback: 'We only use it in March.' };

    const preview = await acme.api('POST', `/v1/subscriptions/${sub.id}/cancel`, { ...body, preview: true });
    expect(preview.status, preview.text).toBe(200);
    // Unused time: 20 of April's 30 days of the 118 000 paid: 118 000 × 20 / 30 = 78 666.67 → 78 667.
    // Final usage: 5 calls × 1 000 = 5 000 + GST 450 + 450 = 5 900, paid from the credit note.
    // Left on the note (refundable): 78 667 − 5 900 = 72 767.
    expect(preview.body.data).toMatchObject({
      status: 'canceled',
      cancellation_reason: 'too_expensive',
      proration: { remaining_days: 20, period_days: 30, unused_value: 78_667, unused_credit: 78_667, credit_capped: false },
      preview: {
        credit_note: { invoice_id: first.id, amount: 78_667, balance: 72_767 },
        final_invoice: { billing_reason: 'subscription_final', subtotal: 5_000, tax_amount: 900, total: 5_900, amount_due: 0 },
        refundable_amount: 72_767,
      },
    });

    // Nothing was written: no cancellation, invoice, credit note or event.
    expect(await getSubscription(acme, sub.id)).toMatchObject({ status: 'active', canceled_at: null, cancellation_reason: null });
    expect(await invoicesOf(acme, sub.id)).toHaveLength(1);
    expect(await creditNotesOf(customer)).toHaveLength(0);
    expect(await eventTypesOf(acme, sub.id)).not.toContain('subscription.canceled');

    const real = await acme.api('POST', `/v1/subscriptions/${sub.id}/cancel`, body);
    expect(real.status, real.text).toBe(200);
    expect(real.body.data).toMatchObject({
      status: 'canceled',
      cancellation_reason: 'too_expensive',
      cancellation_feedback: 'We only use it in March.',
      proration: { unused_credit: 78_667, credit_note_id: expect.any(String) },
    });
    expect(real.body.data.preview).toBeUndefined();
    const final = (await invoicesOf(acme, sub.id))[1];
    // The same figures, and the same number: the preview took none.
    expect(final).toMatchObject({ total: 5_900, amount_due: 0, number: preview.body.data.preview!.final_invoice!.number });
    const notes = (await creditNotesOf(customer)) as { amount: number; balance: number }[];
    expect(notes.map((c) => [c.amount, c.balance])).toEqual([[78_667, 72_767]]);

    const events = await acme.http.GET('/v1/events', { query: { type: 'subscription.canceled', object_id: sub.id } });
    expect(events.body.data[0]!.data.object).toMatchObject({ cancellation_reason: 'too_expensive', cancellation_feedback: 'We only use it in March.' });

    // Canceled now: a preview of it is refused like the cancel itself.
    expect((await acme.api('POST', `/v1/subscriptions/${sub.id}/cancel`, { ...body, preview: true })).status).toBe(409);
  });

  it('preview of a cancel at period end changes nothing and produces nothing now; a reactivation clears the reason', async () => {
    t.clock.set('2026-04-01T00:00:00Z');
    const { planId } = await meteredPlan();
    const customer = await createCustomer(acme);
    const sub = await subscribe(acme, { customer_id: customer, plan_id: planId });
    const preview = await acme.http.POST('/v1/subscriptions/{id}/cancel', { path: { id: sub.id }, body: { reason: 'missing_features', preview: true } });
    expect(preview.status, preview.text).toBe(200);
    expect(preview.body.data).toMatchObject({
      status: 'active',
      cancel_at_period_end: true,
      cancellation_reason: 'missing_features',
      preview: { credit_note: null, final_invoice: null, refundable_amount: 0 },
    });
    expect(await getSubscription(acme, sub.id)).toMatchObject({ cancel_at_period_end: false, cancellation_reason: null });

    const scheduled = await acme.http.POST('/v1/subscriptions/{id}/cancel', { path: { id: sub.id }, body: { reason: 'missing_features', feedback: 'No SSO' } });
    expect(scheduled.body.data).toMatchObject({ cancel_at_period_end: true, cancellation_reason: 'missing_features', cancellation_feedback: 'No SSO' });
    const back = await acme.http.POST('/v1/subscriptions/{id}/reactivate', { path: { id: sub.id } });
    expect(back.body.data).toMatchObject({ cancel_at_period_end: false, cancellation_reason: null, cancellation_feedback: null });
    await acme.http.POST('/v1/subscriptions/{id}/cancel', { path: { id: sub.id }, body: { at_period_end: false } });
  });

  it('refuses a reason outside the list, and another tenant’s subscription is a 404', async () => {
    t.clock.set('2026-04-01T00:00:00Z');
    const { planId } = await meteredPlan();
    const sub = await subscribe(acme, { customer_id: await createCustomer(acme), plan_id: planId });
    const bad = await acme.api('POST', `/v1/subscriptions/${sub.id}/cancel`, { reason: 'bored', preview: true });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details[0].field).toBe('reason');
    const stranger = await karnatakaTenant(t);
    expect((await stranger.http.POST('/v1/subscriptions/{id}/cancel', { path: { id: sub.id }, body: { preview: true } })).status).toBe(404);
    await acme.http.POST('/v1/subscriptions/{id}/cancel', { path: { id: sub.id }, body: { at_period_end: false } });
  });
});

describe('GET /v1/analytics/churn-reasons', () => {
  it('counts the cancellations requested in the range by reason, with the feedback', async () => {
    const beta = await karnatakaTenant(t);
    t.clock.set('2026-04-01T00:00:00Z');
    const plan = await beta.http.POST('/v1/plans', { body: { name: 'Basic', code: uid('basic'), interval: 'month', amount: 50_000, currency: 'INR' } });
    expect(plan.status, plan.text).toBe(201);
    const subs = [];
    for (let i = 0; i < 5; i++) subs.push(await subscribe(beta, { customer_id: await createCustomer(beta), plan_id: plan.body.data.id }));
    t.clock.set('2026-04-20T10:00:00Z');
    const cancel = async (id: string, body: Record<string, unknown>) => {
      const res = await beta.http.POST('/v1/subscriptions/{id}/cancel', { path: { id }, body });
      expect(res.status, res.text).toBe(200);
    };
    await cancel(subs[0].id, { at_period_end: false, reason: 'too_expensive', feedback: 'Half the price elsewhere' });
    await cancel(subs[1].id, { at_period_end: false, reason: 'too_expensive' });
    await cancel(subs[2].id, { reason: 'missing_features' }); // at period end: counted when asked
    await cancel(subs[3].id, { at_period_end: false }); // no reason
    await cancel(subs[4].id, { reason: 'unused' });
    expect((await beta.http.POST('/v1/subscriptions/{id}/reactivate', { path: { id: subs[4].id } })).status).toBe(200); // reactivated: not churn

    const april = await beta.http.GET('/v1/analytics/churn-reasons', { query: { from: '2026-04-01', to: '2026-04-30' } });
    expect(april.status, april.text).toBe(200);
    // 4 cancellations stand: 2 too_expensive, 1 missing_features, 1 without a reason; the reactivated one is gone.
    expect(april.body.data.total).toBe(4);
    expect(april.body.data.reasons.slice(0, 3)).toEqual([
      { reason: 'too_expensive', count: 2, offers_accepted: 0 },
      { reason: 'missing_features', count: 1, offers_accepted: 0 },
      { reason: 'unspecified', count: 1, offers_accepted: 0 },
    ]);
    expect(april.body.data.reasons.find((r: { reason: string }) => r.reason === 'unused')).toEqual({ reason: 'unused', count: 0, offers_accepted: 0 });
    expect(april.body.data.feedback).toEqual([
      {
        subscription_id: subs[0].id,
        customer_id: subs[0].customer_id,
        reason: 'too_expensive',
        feedback: 'Half the price elsewhere',
        canceled_at: '2026-04-20T10:00:00.000Z',
      },
    ]);
    // Dates are calendar days in the entity's zone (Asia/Kolkata): 1 April starts at 31 March 18:30 UTC.
    expect(april.body.data.from).toBe('2026-03-31T18:30:00.000Z');
    // 21 April onwards: none.
    expect((await beta.http.GET('/v1/analytics/churn-reasons', { query: { from: '2026-04-21', to: '2026-05-31' } })).body.data.total).toBe(0);
    expect((await beta.http.GET('/v1/analytics/churn-reasons', { query: { from: '2026-04-30', to: '2026-04-01' } })).status).toBe(400);
    expect((await beta.api('GET', '/v1/analytics/churn-reasons?to=2026-04-01')).status).toBe(400);
  });
});
