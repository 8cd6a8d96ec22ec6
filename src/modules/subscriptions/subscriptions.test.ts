import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKosh, type Tenant, type TestKosh } from '../../../test/support/harness.js';
import { describeSecurity } from '../../../test/support/security.js';
import { createCustomer, createPlan, getSubscription, invoicesOf, karnatakaTenant, subscribe } from '../../../test/subscriptions/helpers.js';

let t: TestKosh;
let acme: Tenant;
let other: Tenant;
let monthly: { id: string; code: string };
let customer: string;

beforeAll(async () => {
  t = await startTestKosh(); // the clock starts at 2026-04-01T00:00:00Z
  acme = await karnatakaTenant(t);
  other = await karnatakaTenant(t);
  monthly = await createPlan(acme, { amount: 100_000 });
  customer = await createCustomer(acme);
});
afterAll(() => t.close());

const missing = '00000000-0000-7000-8000-000000000000';

describe('subscriptions', () => {
  describe('create', () => {
    it('starts active and invoices the first period at once (advance billing, GST, number, ledger)', async () => {
      const sub = await subscribe(acme, { customer_id: customer, plan_id: monthly.id, quantity: 2 });
      expect(sub).toMatchObject({
        tenant_id: acme.tenantId,
        customer_id: customer,
        plan_id: monthly.id,
        status: 'active',
        currency: 'INR',
        quantity: 2,
        current_period_start: '2026-04-01T00:00:00.000Z',
        current_period_end: '2026-05-01T00:00:00.000Z',
        cancel_at_period_end: false,
        trial_start: null,
        trial_end: null,
        gift_code: null,
        gifted_by: null,
      });
      const [invoice, ...rest] = await invoicesOf(acme, sub.id);
      expect(rest).toEqual([]);
      expect(invoice).toMatchObject({
        id: sub.latest_invoice_id,
        status: 'open',
        billing_reason: 'subscription_create',
        subscription_id: sub.id,
        period_start: '2026-04-01T00:00:00.000Z',
        period_end: '2026-05-01T00:00:00.000Z',
        subtotal: 200_000,
        cgst_amount: 18_000,
        sgst_amount: 18_000,
        total: 236_000,
        tax_type: 'intra_state',
      });
      expect(invoice.number).toMatch(/^INV-\d{6}$/);
      expect(invoice.lines).toEqual([
        expect.objectContaining({
          quantity: 2,
          unit_amount: 100_000,
          plan_id: monthly.id,
          period_start: '2026-04-01T00:00:00.000Z',
          period_end: '2026-05-01T00:00:00.000Z',
        }),
      ]);
      const journal = await acme.http.GET('/v1/invoices/{id}/journal-entries', { path: { id: invoice.id } });
      expect(journal.body.data.map((e: { kind: string }) => e.kind)).toEqual(['invoice.finalized', 'revenue.deferred']);
      const events = await acme.http.GET('/v1/events', { query: { type: 'subscription.created' } });
      expect(events.body.data.some((e) => e.data.object.id === sub.id && e.data.object.latest_invoice_id === invoice.id)).toBe(true);
    });

    it("starts trialing on the plan's trial days, invoicing nothing until the trial ends", async () => {
      const trialPlan = await createPlan(acme, { trial_days: 14 });
      const sub = await subscribe(acme, { customer_id: customer, plan_id: trialPlan.id });
      expect(sub).toMatchObject({
        status: 'trialing',
        trial_start: '2026-04-01T00:00:00.000Z',
        trial_end: '2026-04-15T00:00:00.000Z',
        current_period_start: '2026-04-01T00:00:00.000Z',
        current_period_end: '2026-04-15T00:00:00.000Z',
        latest_invoice_id: null,
      });
      expect(await invoicesOf(acme, sub.id)).toEqual([]);
      // The request's trial_days overrides the plan's, 0 included.
      const noTrial = await subscribe(acme, { customer_id: customer, plan_id: trialPlan.id, trial_days: 0 });
      expect(noTrial.status).toBe('active');
      const longer = await subscribe(acme, { customer_id: customer, plan_id: monthly.id, trial_days: 30 });
      expect(longer).toMatchObject({ status: 'trialing', trial_end: '2026-05-01T00:00:00.000Z' });
    });

    it("defaults the currency to the tenant's base currency, else the plan's only price", async () => {
      // GST on a dollar invoice is determined in INR (rule 34): the entity keeps a USD rate.
      const entity = (await acme.http.GET('/v1/entities')).body.data[0]!.id;
      await acme.http.PUT('/v1/entities/{id}/exchange-rates', { path: { id: entity }, body: { currency: 'USD', rate: '83' } });
      const twoPrices = await createPlan(acme, {
        prices: [
          { amount: 1500, currency: 'USD' },
          { amount: 100_000, currency: 'INR' },
        ],
      });
      expect((await subscribe(acme, { customer_id: customer, plan_id: twoPrices.id })).currency).toBe('INR');
      expect((await subscribe(acme, { customer_id: customer, plan_id: twoPrices.id, currency: 'usd' })).currency).toBe('USD');
      const usdOnly = await createPlan(acme, { amount: 1500, currency: 'USD' });
      const sub = await subscribe(acme, { customer_id: customer, plan_id: usdOnly.id });
      expect(sub.currency).toBe('USD');
      expect((await invoicesOf(acme, sub.id))[0]).toMatchObject({ currency: 'USD', subtotal: 1500 });
    });

    it('backdates a start and keeps the schedule anchored to it', async () => {
      const sub = await subscribe(acme, { customer_id: customer, plan_id: monthly.id, start_at: '2026-03-31T10:00:00+05:30' });
      expect(sub).toMatchObject({ current_period_start: '2026-03-31T04:30:00.000Z', current_period_end: '2026-04-30T04:30:00.000Z' });
    });

    it('refuses a currency the plan has no price in with 400 naming currency', async () => {
      const res = await acme.http.POST('/v1/subscriptions', { body: { customer_id: customer, plan_id: monthly.id, currency: 'EUR' } });
      expect(res.status).toBe(400);
      expect(res.error).toMatchObject({ code: 'validation_failed', details: [{ field: 'currency' }] });
      expect(res.error!.message).toContain('no price in EUR');
    });

    it("answers 404 for an unknown or another tenant's plan or customer, alike", async () => {
      const theirs = await createPlan(other);
      const theirCustomer = await createCustomer(other);
      for (const [body, what] of [
        [{ customer_id: customer, plan_id: missing }, 'plan'],
        [{ customer_id: customer, plan_id: theirs.id }, 'plan'],
        [{ customer_id: missing, plan_id: monthly.id }, 'customer'],
        [{ customer_id: theirCustomer, plan_id: monthly.id }, 'customer'],
      ] as const) {
        const res = await acme.http.POST('/v1/subscriptions', { body: body });
        expect(res.status).toBe(404);
        expect(res.body).toEqual({ error: { request_id: expect.any(String), code: 'not_found', message: `${what} not found` } });
      }
    });

    it.each<[string, Record<string, unknown>, string]>([
      ['a missing plan_id', { plan_id: undefined }, 'plan_id'],
      ['a bad customer uuid', { customer_id: 'nope' }, 'customer_id'],
      ['quantity 0', { quantity: 0 }, 'quantity'],
      ['a fractional quantity', { quantity: 1.5 }, 'quantity'],
      ['negative trial days', { trial_days: -1 }, 'trial_days'],
      ['a bad start_at', { start_at: 'tomorrow' }, 'start_at'],
      ['a start in the future', { start_at: '2027-01-01T00:00:00Z' }, 'start_at'],
      ['a start backdated over a year', { start_at: '2024-01-01T00:00:00Z' }, 'start_at'],
      ['a bad currency', { currency: 'RUPEES' }, 'currency'],
      ['an amount too large to invoice', { quantity: 1_000_000, plan_id: 'huge' }, 'quantity'],
    ])('refuses %s with 400 naming the field', async (_label, change, field) => {
      const huge = change.plan_id === 'huge' ? (await createPlan(acme, { amount: 9_000_000_000_000 })).id : undefined;
      const res = await acme.http.POST('/v1/subscriptions', {
        body: { customer_id: customer, plan_id: monthly.id, ...change, ...(huge ? { plan_id: huge } : {}) },
      });
      expect(res.status, res.text).toBe(400);
      expect(res.error!.code).toBe('validation_failed');
      expect(res.error!.details!.map((d: { field: string }) => d.field)).toContain(field);
    });
  });

  describe('list and get', () => {
    it('filters by status, customer_id and plan_id', async () => {
      const planB = await createPlan(acme);
      const buyer = await createCustomer(acme);
      const a = await subscribe(acme, { customer_id: buyer, plan_id: planB.id });
      const b = await subscribe(acme, { customer_id: buyer, plan_id: planB.id, trial_days: 3 });
      const byCustomer = await acme.http.GET('/v1/subscriptions', { query: { customer_id: buyer } });
      expect(byCustomer.body).toMatchObject({ object: 'list', total_count: 2, has_more: false });
      expect(byCustomer.body.data.map((s: { id: string }) => s.id)).toEqual([b.id, a.id]);
      const trialing = await acme.http.GET('/v1/subscriptions', { query: { plan_id: planB.id, status: 'trialing' } });
      expect(trialing.body.data.map((s: { id: string }) => s.id)).toEqual([b.id]);
      // @ts-expect-error a status the API does not know: refused with 400
      expect((await acme.http.GET('/v1/subscriptions', { query: { status: 'sleeping' } })).status).toBe(400);
      expect((await other.http.GET('/v1/subscriptions', { query: { customer_id: buyer } })).body.total_count).toBe(0);
    });

    it('answers 404 for a missing or foreign id and 400 for a malformed one', async () => {
      const sub = await subscribe(acme, { customer_id: customer, plan_id: monthly.id });
      expect(await getSubscription(acme, sub.id)).toEqual(sub);
      expect((await other.http.GET('/v1/subscriptions/{id}', { path: { id: sub.id } })).body).toEqual({
        error: { request_id: expect.any(String), code: 'not_found', message: 'subscription not found' },
      });
      expect((await acme.http.GET('/v1/subscriptions/{id}', { path: { id: missing } })).status).toBe(404);
      expect((await acme.http.GET('/v1/subscriptions/{id}', { path: { id: 'xyz' } })).status).toBe(400);
    });
  });

  describe('lifecycle actions', () => {
    it('pauses and resumes within the period, then refuses illegal moves with 409 naming the status', async () => {
      const sub = await subscribe(acme, { customer_id: customer, plan_id: monthly.id });
      const paused = await acme.http.POST('/v1/subscriptions/{id}/pause', { path: { id: sub.id } });
      expect(paused.body.data).toMatchObject({ status: 'paused', paused_at: '2026-04-01T00:00:00.000Z' });
      const again = await acme.http.POST('/v1/subscriptions/{id}/pause', { path: { id: sub.id } });
      expect(again.status).toBe(409);
      expect(again.error).toMatchObject({
        code: 'conflict',
        reason: 'invalid_subscription_state',
        message: 'cannot pause a subscription whose status is paused',
      });
      const resumed = await acme.http.POST('/v1/subscriptions/{id}/resume', { path: { id: sub.id } });
      expect(resumed.body.data).toMatchObject({ status: 'active', paused_at: null, current_period_end: sub.current_period_end });
      expect(await invoicesOf(acme, sub.id)).toHaveLength(1);
      expect((await acme.http.POST('/v1/subscriptions/{id}/resume', { path: { id: sub.id } })).error!.message).toBe(
        'cannot resume a subscription whose status is active',
      );
    });

    it('cancels at period end by default, and reactivate undoes it', async () => {
      const sub = await subscribe(acme, { customer_id: customer, plan_id: monthly.id });
      const scheduled = await acme.http.POST('/v1/subscriptions/{id}/cancel', { path: { id: sub.id } });
      expect(scheduled.status).toBe(200);
      expect(scheduled.body.data).toMatchObject({ status: 'active', cancel_at_period_end: true, canceled_at: '2026-04-01T00:00:00.000Z', ended_at: null });
      const twice = await acme.http.POST('/v1/subscriptions/{id}/cancel', { path: { id: sub.id }, body: { at_period_end: true } });
      expect(twice.error).toMatchObject({ code: 'conflict', reason: 'cancellation_pending' });
      expect((await acme.http.POST('/v1/subscriptions/{id}/pause', { path: { id: sub.id } })).error!.reason).toBe('cancellation_pending');
      const undone = await acme.http.POST('/v1/subscriptions/{id}/reactivate', { path: { id: sub.id } });
      expect(undone.body.data).toMatchObject({ status: 'active', cancel_at_period_end: false, canceled_at: null });
      expect((await acme.http.POST('/v1/subscriptions/{id}/reactivate', { path: { id: sub.id } })).error!.reason).toBe('no_pending_cancellation');
    });

    it('cancels now, and then refuses resume, pause, reactivate, change-plan and cancel with 409 naming canceled', async () => {
      const sub = await subscribe(acme, { customer_id: customer, plan_id: monthly.id });
      const target = await createPlan(acme);
      const canceled = await acme.http.POST('/v1/subscriptions/{id}/cancel', { path: { id: sub.id }, body: { at_period_end: false } });
      expect(canceled.body.data).toMatchObject({ status: 'canceled', canceled_at: '2026-04-01T00:00:00.000Z', ended_at: '2026-04-01T00:00:00.000Z' });
      for (const [action, body] of [
        ['resume', undefined],
        ['pause', undefined],
        ['reactivate', undefined],
        ['change-plan', { plan_id: target.id }],
        ['cancel', { at_period_end: false }],
      ] as const) {
        const res = await acme.api('POST', `/v1/subscriptions/${sub.id}/${action}`, body);
        expect(res.status, action).toBe(409);
        expect(res.body.error.code).toBe('conflict');
        expect(res.body.error.message).toContain('canceled');
      }
      // No credit was asked for: none issued.
      expect((await acme.http.GET('/v1/credit-notes', { query: { invoice_id: sub.latest_invoice_id } })).body.total_count).toBe(0);
    });

    it('refuses prorate with a cancellation at period end (400)', async () => {
      const sub = await subscribe(acme, { customer_id: customer, plan_id: monthly.id });
      const res = await acme.http.POST('/v1/subscriptions/{id}/cancel', { path: { id: sub.id }, body: { prorate: true } });
      expect(res.status).toBe(400);
      expect(res.error!.details![0]!.field).toBe('prorate');
    });

    it('credits the unused part of the paid period when canceling now with prorate', async () => {
      const sub = await subscribe(acme, { customer_id: customer, plan_id: monthly.id });
      const [invoice] = await invoicesOf(acme, sub.id);
      await acme.http.POST('/v1/payments/offline', {
        body: {
          customer_id: customer,
          invoice_id: invoice.id,
          amount: invoice.total,
          currency: 'INR',
          payment_type: 'bank_transfer',
        },
      });
      t.clock.set('2026-04-11T00:00:00Z'); // 20 of the 30 days of April unused
      try {
        const res = await acme.http.POST('/v1/subscriptions/{id}/cancel', { path: { id: sub.id }, body: { at_period_end: false, prorate: true } });
        expect(res.status, res.text).toBe(200);
        const notes = await acme.http.GET('/v1/credit-notes', { query: { invoice_id: invoice.id } });
        expect(notes.body.data).toHaveLength(1);
        // 118 000 × 20 / 30 = 78 666.67 → 78 667, GST reversed pro rata on the invoice.
        expect(notes.body.data[0]).toMatchObject({ amount: 78_667, balance: 78_667, status: 'issued', customer_id: customer });
        expect(notes.body.data[0]!.cgst_amount + notes.body.data[0]!.sgst_amount).toBe(notes.body.data[0]!.tax_amount);
      } finally {
        t.clock.set('2026-04-01T00:00:00Z');
      }
    });

    it("answers 404 for another tenant's subscription on every action", async () => {
      const sub = await subscribe(acme, { customer_id: customer, plan_id: monthly.id });
      for (const action of ['pause', 'resume', 'reactivate', 'cancel']) {
        const res = await other.api('POST', `/v1/subscriptions/${sub.id}/${action}`);
        expect(res.status, action).toBe(404);
      }
      expect((await getSubscription(acme, sub.id)).status).toBe('active');
    });
  });
});

describeSecurity('subscriptions', { include: (r) => r.path.startsWith('/v1/subscriptions') });
