/**
 * Test clocks (DESIGN §24, decision 0440) over HTTP: a customer on a clock is billed only when the
 * clock advances, at the clock's instants, by the worker's own code; other customers are not.
 * Figures worked by hand: a monthly ₹1,000 plan with GST 18 % (CGST 9 % + SGST 9 %, the customer
 * and the tenant both in Karnataka) is ₹1,000 + ₹90 + ₹90 = ₹1,180 an invoice (118 000 paise).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKosh, type Tenant, type TestKosh } from '../support/harness.js';
import { createPlan, gstin, invoicesOf, karnatakaTenant, pay, subscribe } from '../subscriptions/helpers.js';

const REAL_NOW = '2026-11-27T12:00:00.000Z';
const FROZEN = '2026-01-01T00:00:00.000Z';

let t: TestKosh;
let tenant: Tenant;
let counter = 0;

async function clockCustomer(clockId: string | null): Promise<string> {
  counter += 1;
  const res = await tenant.http.POST('/v1/customers', {
    body: {
      email: `clock-${counter}@customer.test`,
      name: 'Customer',
      gstin: gstin('29BBBBB2222B1Z'),
      ...(clockId ? { test_clock_id: clockId } : {}),
    },
  });
  expect(res.status, res.text).toBe(201);
  expect(res.body.data.test_clock_id).toBe(clockId);
  return res.body.data.id;
}

async function newClock(frozen = FROZEN): Promise<string> {
  const res = await tenant.http.POST('/v1/test-clocks', { body: { frozen_time: frozen, name: 'A year ahead' } });
  expect(res.status, res.text).toBe(201);
  expect(res.body.data).toMatchObject({ object: 'test_clock', status: 'ready', frozen_time: frozen, customer_count: 0 });
  return res.body.data.id;
}

async function advance(clockId: string, to: string) {
  const res = await tenant.http.POST('/v1/test-clocks/{id}/advance', { path: { id: clockId }, body: { to } });
  expect(res.status, res.text).toBe(200);
  return res.body.data;
}

beforeAll(async () => {
  t = await startTestKosh();
  t.clock.set(REAL_NOW);
  tenant = await karnatakaTenant(t);
});
afterAll(async () => {
  await t?.close();
});

describe('test clocks', () => {
  describe('advance', () => {
    it('bills three monthly renewals of ₹1,180 at the clock’s instants, and leaves a customer off the clock alone', async () => {
      const plan = await createPlan(tenant, { amount: 100_000 });
      const clock = await newClock();
      const onClock = await clockCustomer(clock);
      const offClock = await clockCustomer(null);

      // The subscription starts at the clock's time, not the real one: its first period is January.
      const sub = await subscribe(tenant, { customer_id: onClock, plan_id: plan.id });
      expect(sub.current_period_start).toBe(FROZEN);
      expect(sub.current_period_end).toBe('2026-02-01T00:00:00.000Z');
      const other = await subscribe(tenant, { customer_id: offClock, plan_id: plan.id });
      expect(other.current_period_end).toBe('2026-12-27T12:00:00.000Z');

      // The real worker at the real time (November) does not renew the clock's subscription, though its period ended in February.
      await t.kosh.worker.drain();
      expect(await invoicesOf(tenant, sub.id)).toHaveLength(1);

      const ready = await advance(clock, '2026-04-01T00:00:00.000Z');
      expect(ready).toMatchObject({ status: 'ready', frozen_time: '2026-04-01T00:00:00.000Z', advancing_to: null, customer_count: 1 });

      const invoices = await invoicesOf(tenant, sub.id);
      expect(invoices.map((i: { billing_reason: string }) => i.billing_reason)).toEqual([
        'subscription_create',
        'subscription_cycle',
        'subscription_cycle',
        'subscription_cycle',
      ]);
      // ₹1,000 + CGST ₹90 + SGST ₹90 = ₹1,180 each, issued at 1 February, 1 March and 1 April for the month ahead.
      for (const invoice of invoices) {
        expect(invoice).toMatchObject({ subtotal: 100_000, cgst_amount: 9_000, sgst_amount: 9_000, igst_amount: 0, total: 118_000 });
      }
      expect(
        invoices.slice(1).map((i: { issued_at: string; period_start: string; period_end: string }) => [i.issued_at, i.period_start, i.period_end]),
      ).toEqual([
        ['2026-02-01T00:00:00.000Z', '2026-02-01T00:00:00.000Z', '2026-03-01T00:00:00.000Z'],
        ['2026-03-01T00:00:00.000Z', '2026-03-01T00:00:00.000Z', '2026-04-01T00:00:00.000Z'],
        ['2026-04-01T00:00:00.000Z', '2026-04-01T00:00:00.000Z', '2026-05-01T00:00:00.000Z'],
      ]);
      const after = (await tenant.http.GET('/v1/subscriptions/{id}', { path: { id: sub.id } })).body.data;
      expect(after.current_period_start).toBe('2026-04-01T00:00:00.000Z');
      expect(after.current_period_end).toBe('2026-05-01T00:00:00.000Z');

      // The customer off the clock: still its one invoice and its period, untouched by the advance.
      expect(await invoicesOf(tenant, other.id)).toHaveLength(1);
      expect((await tenant.http.GET('/v1/subscriptions/{id}', { path: { id: other.id } })).body.data.current_period_end).toBe('2026-12-27T12:00:00.000Z');

      // The events of the advance (and so their webhooks) carry the clock; created at the clock's instant.
      const events = (await tenant.http.GET('/v1/events', { query: { object_id: invoices[1].id } })).body.data;
      const finalized = events.find((e: { type: string }) => e.type === 'invoice.finalized');
      expect(finalized).toMatchObject({ test_clock_id: clock, created_at: '2026-02-01T00:00:00.000Z' });
      const readyEvents = (await tenant.http.GET('/v1/events', { query: { type: 'test_clock.ready', object_id: clock } })).body.data;
      expect(readyEvents).toHaveLength(1);
    });

    it('ends a 14-day trial at the clock’s 15 January with its first ₹1,180 invoice', async () => {
      const plan = await createPlan(tenant, { amount: 100_000, trial_days: 14 });
      const clock = await newClock();
      const customer = await clockCustomer(clock);
      const sub = await subscribe(tenant, { customer_id: customer, plan_id: plan.id });
      expect(sub).toMatchObject({ status: 'trialing', trial_end: '2026-01-15T00:00:00.000Z' });
      expect(await invoicesOf(tenant, sub.id)).toHaveLength(0);

      await advance(clock, '2026-01-20T00:00:00.000Z');
      const after = (await tenant.http.GET('/v1/subscriptions/{id}', { path: { id: sub.id } })).body.data;
      expect(after).toMatchObject({ status: 'active', current_period_start: '2026-01-15T00:00:00.000Z', current_period_end: '2026-02-15T00:00:00.000Z' });
      const invoices = await invoicesOf(tenant, sub.id);
      expect(invoices).toHaveLength(1);
      expect(invoices[0]).toMatchObject({ issued_at: '2026-01-15T00:00:00.000Z', total: 118_000, period_start: '2026-01-15T00:00:00.000Z' });
    });

    it('runs the dunning campaign of a declined renewal charge at the clock’s hours: e-mail at once, retry after 24 h', async () => {
      const plan = await createPlan(tenant, { amount: 100_000, trial_days: 14 });
      const clock = await newClock();
      const customer = await clockCustomer(clock);
      expect((await tenant.http.POST('/v1/customers/{id}/payment-methods', { path: { id: customer }, body: { token: 'tok_chargeDeclined' } })).status).toBe(
        201,
      );
      const sub = await subscribe(tenant, { customer_id: customer, plan_id: plan.id, collection_method: 'charge_automatically' });

      // 15 January: the trial ends, the ₹1,180 invoice is charged and declined; the default campaign
      // e-mails at once (step 1) and retries 24 h later, on 16 January (step 2, declined again).
      await advance(clock, '2026-01-17T00:00:00.000Z');
      const [invoice] = await invoicesOf(tenant, sub.id);
      expect(invoice).toMatchObject({ total: 118_000, status: 'open', amount_due: 118_000, last_payment_error: { code: 'card_declined' } });
      const run = (await tenant.http.GET('/v1/dunning-executions', { query: { invoice_id: invoice.id } })).body.data[0]!;
      expect(run).toMatchObject({ status: 'active', steps_done: 2, started_at: '2026-01-15T00:00:00.000Z' });
      const channels = run.actions.map((a: { channel: string; executed_at: string }) => [a.channel, a.executed_at]);
      expect(channels).toEqual([
        ['email', '2026-01-15T00:00:00.000Z'],
        ['retry_payment', '2026-01-16T00:00:00.000Z'],
      ]);
      // The third step (an e-mail at 72 h) waits for the clock to reach 18 January.
      expect(run.next_step_at).toBe('2026-01-18T00:00:00.000Z');
    });
  });

  describe('sweeps beyond billing', () => {
    it('expires a clock customer’s credit note and grant and recognizes its revenue only when the clock reaches the day; the real worker does the same for a customer off the clock', async () => {
      const plan = await createPlan(tenant, { amount: 100_000 });
      const clock = await newClock(REAL_NOW);
      const onClock = await clockCustomer(clock);
      const offClock = await clockCustomer(null);
      const expiresAt = '2026-12-10T00:00:00.000Z';
      const setUp = async (customer: string) => {
        const sub = await subscribe(tenant, { customer_id: customer, plan_id: plan.id });
        const note = await tenant.http.POST('/v1/credit-notes', {
          body: {
            customer_id: customer,
            amount: 11_800,
            tax_reversal: false,
            reason: 'goodwill',
            expires_at: expiresAt,
          },
        });
        expect(note.status, note.text).toBe(201);
        expect(note.body.data.status).toBe('issued');
        const grant = await tenant.http.POST('/v1/customers/{id}/credit-grants', {
          path: { id: customer },
          body: {
            amount: 5_000,
            currency: 'INR',
            category: 'promotional',
            expires_at: expiresAt,
          },
        });
        expect(grant.status, grant.text).toBe(201);
        const [invoice] = await invoicesOf(tenant, sub.id);
        return { note: note.body.data.id as string, grant: grant.body.data.id as string, invoice: invoice.id as string };
      };
      const on = await setUp(onClock);
      const off = await setUp(offClock);
      const statuses = async (of: { note: string; grant: string; invoice: string }, customer: string) => {
        const note = (await tenant.http.GET('/v1/credit-notes/{id}', { path: { id: of.note } })).body.data.status;
        const grants = (await tenant.http.GET('/v1/customers/{id}/credit-grants', { path: { id: customer } })).body.data;
        const schedule = await t.database.db
          .selectFrom('revenue_schedules')
          .select(['recognized_days'])
          .where('tenant_id', '=', tenant.tenantId)
          .where('invoice_id', '=', of.invoice)
          .executeTakeFirstOrThrow();
        return { note, grant: grants.find((g: { id: string }) => g.id === of.grant)!.status, recognized_days: Number(schedule.recognized_days) };
      };
      expect(await statuses(on, onClock)).toEqual({ note: 'issued', grant: 'active', recognized_days: 0 });

      // The real worker on 15 December: the customer off the clock's note and grant expire (10 December
      // passed) and its revenue is recognized for the whole days since 27 November 12:00 — day d is
      // recognized once period_start + (d + 1) days ≤ now: 27 Nov 12:00 + 17 days = 14 Dec 12:00 ≤
      // 15 Dec 00:00 < 15 Dec 12:00, so 17 days. The clock's customer is untouched.
      t.clock.set('2026-12-15T00:00:00.000Z');
      try {
        await t.kosh.worker.drain();
        expect(await statuses(off, offClock)).toEqual({ note: 'expired', grant: 'expired', recognized_days: 17 });
        expect(await statuses(on, onClock)).toEqual({ note: 'issued', grant: 'active', recognized_days: 0 });

        // The clock to 5 December: 7 whole days (27 Nov 12:00 + 8 days = 5 Dec 12:00 > 5 Dec 00:00), nothing expired yet.
        await advance(clock, '2026-12-05T00:00:00.000Z');
        expect(await statuses(on, onClock)).toEqual({ note: 'issued', grant: 'active', recognized_days: 7 });
        // Then to 15 December, as the real worker did for the other customer.
        await advance(clock, '2026-12-15T00:00:00.000Z');
        expect(await statuses(on, onClock)).toEqual({ note: 'expired', grant: 'expired', recognized_days: 17 });
        const expired = (await tenant.http.GET('/v1/events', { query: { type: 'credit_note.expired', object_id: on.note } })).body.data;
        expect(expired).toHaveLength(1);
        expect(expired[0]).toMatchObject({ test_clock_id: clock });
      } finally {
        t.clock.set(REAL_NOW);
      }
    });
  });

  describe('actions on a clock customer', () => {
    it('prorates an add-on from the clock’s time, ten days in, not from the real time (preview and change alike)', async () => {
      const plan = await createPlan(tenant, { amount: 100_000 });
      const addOn = await tenant.http.POST('/v1/plans', {
        body: {
          name: 'Priority support',
          code: `support-clock-${counter}`,
          interval_unit: 'month',
          amount: 20_000,
          currency: 'INR',
          hsn_code: '998315',
        },
      });
      expect(addOn.status, addOn.text).toBe(201);
      const clock = await newClock();
      const customer = await clockCustomer(clock);
      const sub = await subscribe(tenant, { customer_id: customer, plan_id: plan.id }); // 1 January → 1 February: 31 days
      const [first] = await invoicesOf(tenant, sub.id);
      expect(first).toMatchObject({ total: 118_000 });
      await pay(tenant, first);
      await advance(clock, '2026-01-11T00:00:00.000Z');

      // The real time is 27 November, long after this period ended; the clock's is 11 January: 21 of 31 days remain.
      // Credit: the paid 118 000 × 21 / 31 = 79 935.48 → 79 935.
      // Charge: plan 100 000 × 21 / 31 = 67 741.94 → 67 742; add-on 20 000 × 21 / 31 = 13 548.39 → 13 548, × 3 = 40 644.
      // Net 108 386. GST: 67 742 × 9 % = 6 096.78 → 6 097 a half; 40 644 × 9 % = 3 657.96 → 3 658 a half.
      // Tax 2 × 6 097 + 2 × 3 658 = 19 510; total 127 896; the credit is spent on it: due 127 896 − 79 935 = 47 961.
      const proration = {
        prorated: true,
        changed_at: '2026-01-11T00:00:00.000Z',
        period_start: '2026-01-11T00:00:00.000Z',
        period_end: '2026-02-01T00:00:00.000Z',
        remaining_days: 21,
        period_days: 31,
        unused_value: 79_935,
        unused_credit: 79_935,
        credit_capped: false,
        new_charge: 108_386,
      };
      const body = { price_id: addOn.body.data.prices[0]!.id, quantity: 3 };
      const preview = await tenant.http.POST('/v1/subscriptions/{id}/items', { path: { id: sub.id }, body: { ...body, preview: true } });
      expect(preview.status, preview.text).toBe(200);
      expect(preview.body.data).toMatchObject({ preview: true, proration });
      const added = await tenant.http.POST('/v1/subscriptions/{id}/items', { path: { id: sub.id }, body });
      expect(added.status, added.text).toBe(200);
      expect(added.body.data.proration).toEqual(proration);
      expect(added.body.data.item.created_at).toBe('2026-01-11T00:00:00.000Z');
      expect(added.body.data.invoice).toMatchObject({
        billing_reason: 'subscription_update',
        issued_at: '2026-01-11T00:00:00.000Z',
        subtotal: 108_386,
        cgst_amount: 9_755,
        sgst_amount: 9_755,
        total: 127_896,
        amount_credited: 79_935,
        amount_due: 47_961,
      });

      // Removing it at the clock's 21 January (11 of 31 days left) credits the update invoice's unused part from then.
      await advance(clock, '2026-01-21T00:00:00.000Z');
      const removed = await tenant.http.DELETE('/v1/subscriptions/{id}/items/{item_id}', {
        path: { id: sub.id, item_id: added.body.data.item.id! },
        query: { preview: 'true' },
      });
      expect(removed.status, removed.text).toBe(200);
      expect(removed.body.data.proration).toMatchObject({ changed_at: '2026-01-21T00:00:00.000Z', remaining_days: 11, period_days: 31 });

      // A one-off charge for the clock customer is recorded at the clock's time too.
      const charge = await tenant.http.POST('/v1/customers/{id}/pending-charges', {
        path: { id: customer },
        body: { description: 'Workshop', amount: 50_000, hsn_code: '998313' },
      });
      expect(charge.status, charge.text).toBe(201);
      expect(charge.body.data.created_at).toBe('2026-01-21T00:00:00.000Z');
    });
  });

  describe('pausing, resuming and reactivating a clock customer', () => {
    it('records the pause at the clock’s 10 March, restarts the lapsed period at its 1 May with a ₹1,180 invoice dated then, and reactivates against the clock’s period', async () => {
      const plan = await createPlan(tenant, { amount: 100_000 });
      const clock = await newClock('2026-03-10T00:00:00.000Z');
      const customer = await clockCustomer(clock);
      const sub = await subscribe(tenant, { customer_id: customer, plan_id: plan.id }); // 10 March → 10 April
      const [first] = await invoicesOf(tenant, sub.id);
      await pay(tenant, first);

      // The real time is 27 November; the pause happens at the clock's 10 March.
      const paused = await tenant.http.POST('/v1/subscriptions/{id}/pause', { path: { id: sub.id } });
      expect(paused.status, paused.text).toBe(200);
      expect(paused.body.data).toMatchObject({ status: 'paused', paused_at: '2026-03-10T00:00:00.000Z', updated_at: '2026-03-10T00:00:00.000Z' });
      const pausedEvents = (await tenant.http.GET('/v1/events', { query: { type: 'subscription.paused', object_id: sub.id } })).body.data;
      expect(pausedEvents.map((e: { created_at: string }) => e.created_at)).toEqual(['2026-03-10T00:00:00.000Z']);

      // Paused, the period that ended on 10 April is not renewed; resumed at the clock's 1 May, a new
      // month starts then (1 May → 1 June) and is invoiced at once: ₹1,000 + 9 % + 9 % = ₹1,180.
      await advance(clock, '2026-05-01T00:00:00.000Z');
      expect(await invoicesOf(tenant, sub.id)).toHaveLength(1);
      const resumed = await tenant.http.POST('/v1/subscriptions/{id}/resume', { path: { id: sub.id } });
      expect(resumed.status, resumed.text).toBe(200);
      expect(resumed.body.data).toMatchObject({
        status: 'active',
        paused_at: null,
        current_period_start: '2026-05-01T00:00:00.000Z',
        current_period_end: '2026-06-01T00:00:00.000Z',
      });
      const invoices = await invoicesOf(tenant, sub.id);
      expect(invoices).toHaveLength(2);
      const restart = invoices.find((i: { id: string }) => i.id === resumed.body.data.latest_invoice_id);
      expect(restart).toMatchObject({ billing_reason: 'subscription_cycle', issued_at: '2026-05-01T00:00:00.000Z', subtotal: 100_000, total: 118_000 });

      // Cancelled at period end and reactivated at the clock's 1 May, before that period ends on 1 June
      // (by the real time, 27 November, it would have ended: 409 period_ended).
      const scheduled = await tenant.http.POST('/v1/subscriptions/{id}/cancel', { path: { id: sub.id }, body: { at_period_end: true } });
      expect(scheduled.status, scheduled.text).toBe(200);
      expect(scheduled.body.data).toMatchObject({ cancel_at_period_end: true, canceled_at: '2026-05-01T00:00:00.000Z' });
      const reactivated = await tenant.http.POST('/v1/subscriptions/{id}/reactivate', { path: { id: sub.id } });
      expect(reactivated.status, reactivated.text).toBe(200);
      expect(reactivated.body.data).toMatchObject({ status: 'active', cancel_at_period_end: false, canceled_at: null, updated_at: '2026-05-01T00:00:00.000Z' });
    });
  });

  describe('cancelling a clock customer', () => {
    it('cancels at the clock’s time: the unused part of the period is counted from the clock’s 11 January, preview and cancel alike', async () => {
      const plan = await createPlan(tenant, { amount: 100_000 });
      const clock = await newClock();
      const customer = await clockCustomer(clock);
      const sub = await subscribe(tenant, { customer_id: customer, plan_id: plan.id }); // 1 January → 1 February: 31 days
      const [first] = await invoicesOf(tenant, sub.id);
      await pay(tenant, first);
      await advance(clock, '2026-01-11T00:00:00.000Z');
      // 21 of 31 days unused: 118 000 × 21 / 31 = 79 935.48 → 79 935 credited.
      const body = { at_period_end: false, prorate: true, reason: 'unused' } as const;
      const preview = await tenant.http.POST('/v1/subscriptions/{id}/cancel', { path: { id: sub.id }, body: { ...body, preview: true } });
      expect(preview.status, preview.text).toBe(200);
      expect(preview.body.data.proration).toMatchObject({ remaining_days: 21, period_days: 31, unused_credit: 79_935 });
      const done = await tenant.http.POST('/v1/subscriptions/{id}/cancel', { path: { id: sub.id }, body });
      expect(done.status, done.text).toBe(200);
      expect(done.body.data).toMatchObject({ status: 'canceled', canceled_at: '2026-01-11T00:00:00.000Z', ended_at: '2026-01-11T00:00:00.000Z' });
      expect(done.body.data.proration).toMatchObject({ remaining_days: 21, unused_credit: 79_935 });
    });
  });

  describe('guards', () => {
    it('refuses an advance to the past, an unknown clock for a customer, and answers 404 for a missing clock', async () => {
      const clock = await newClock();
      const back = await tenant.api('POST', `/v1/test-clocks/${clock}/advance`, { to: '2025-12-01T00:00:00Z' });
      expect(back.status).toBe(400);
      const missing = '0196f0c2-5b1e-7c3a-9d41-3a0c8e2f1b77';
      expect((await tenant.http.POST('/v1/customers', { body: { email: 'nobody@customer.test', test_clock_id: missing } })).status).toBe(404);
      expect((await tenant.http.GET('/v1/test-clocks/{id}', { path: { id: missing } })).status).toBe(404);
      const list = await tenant.http.GET('/v1/test-clocks', { query: { limit: 100 } });
      expect(list.body.data.some((c: { id: string }) => c.id === clock)).toBe(true);
      const deleted = await tenant.http.DELETE('/v1/test-clocks/{id}', { path: { id: clock } });
      expect(deleted.body.data).toEqual({ id: clock, object: 'test_clock', deleted: true });
      expect((await tenant.http.GET('/v1/test-clocks/{id}', { path: { id: clock } })).status).toBe(404);
    });

    it('refuses a second advance (and a delete) with 409 while one runs', async () => {
      const clock = await newClock();
      const plan = await createPlan(tenant, { amount: 100_000 });
      await subscribe(tenant, { customer_id: await clockCustomer(clock), plan_id: plan.id });
      // An advance in progress (its start committed, its work running elsewhere): the clock says advancing.
      await t.database.db
        .updateTable('test_clocks')
        .set({ status: 'advancing', advancing_to: new Date('2026-06-01T00:00:00Z') })
        .where('id', '=', clock)
        .execute();
      const second = await tenant.http.POST('/v1/test-clocks/{id}/advance', { path: { id: clock }, body: { to: '2026-07-01T00:00:00Z' } });
      expect(second.status).toBe(409);
      expect(second.error!.reason).toBe('test_clock_advancing');
      expect((await tenant.http.DELETE('/v1/test-clocks/{id}', { path: { id: clock } })).status).toBe(409);
      // Once it is over (here: failed part-way), advancing again resumes from the clock's time.
      await t.database.db.updateTable('test_clocks').set({ status: 'internal_failure', advancing_to: null }).where('id', '=', clock).execute();
      expect((await advance(clock, '2026-02-01T00:00:00.000Z')).status).toBe('ready');
    });
  });
});

describe('test clocks in live mode', () => {
  it('are refused with 400', async () => {
    const live = await startTestKosh({ env: { KOSH_MODE: 'live', KOSH_ADMIN_TOKEN: 'admin-token-for-the-live-deployment-0123456789' } });
    try {
      const liveTenant = await live.registerTenant({}, { authorization: 'Bearer admin-token-for-the-live-deployment-0123456789' });
      const res = await liveTenant.api('POST', '/v1/test-clocks', { frozen_time: FROZEN });
      expect(res.status).toBe(400);
      expect(res.body.error.reason).toBe('test_clock_live_mode');
      const customer = await liveTenant.api('POST', '/v1/customers', { email: 'x@customer.test', test_clock_id: '0196f0c2-5b1e-7c3a-9d41-3a0c8e2f1b77' });
      expect(customer.status).toBe(400);
    } finally {
      await live.close();
    }
  });
});
