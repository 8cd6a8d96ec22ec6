import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBillingRun } from '../../src/flows/subscriptions/run-billing.js';
import { createSubscriptionRecord } from '../../src/modules/subscriptions/index.js';
import { startTestKosh, type Tenant, type TestKosh } from '../support/harness.js';
import { createCustomer, createPlan, eventTypesOf, getSubscription, invoicesOf, karnatakaTenant, pay, retire, subscribe, travelTo } from './helpers.js';

/**
 * Time-travel scenarios (STYLE habit 9, Kill Bill's beatrix): the clock moves across month ends,
 * a leap year and trial ends; the worker's billing run does the rest. Every invoice, period and
 * status is asserted, and re-running the billing run at the same instant creates nothing.
 */
let t: TestKosh;
let acme: Tenant;

beforeAll(async () => {
  t = await startTestKosh({ clock: undefined });
  t.clock.set('2028-01-31T09:30:00Z');
  acme = await karnatakaTenant(t);
});
afterAll(() => t.close());

type Inv = { number: string; billing_reason: string; period_start: string; period_end: string; total: number; status: string };
const periods = (invoices: Inv[]) => invoices.map((i) => [i.billing_reason, i.period_start.slice(0, 10), i.period_end.slice(0, 10)]);
const sequence = (number: string) => Number(number.slice(-6));

async function countRows(table: 'invoices' | 'events' | 'journal_entries'): Promise<number> {
  const row = await t.database.db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Runs the billing run again at the same instant: it must find nothing to do and write nothing. */
async function expectRerunChangesNothing(): Promise<void> {
  const before = await Promise.all([countRows('invoices'), countRows('events'), countRows('journal_entries')]);
  const report = await runBillingRun(t.database.db, t.clock.now());
  expect(report).toMatchObject({ renewed: 0, trials_ended: 0, ended: 0, failed: 0, past_due: 0, unpaid: 0, recovered: 0 });
  await t.kosh.worker.drain();
  expect(await Promise.all([countRows('invoices'), countRows('events'), countRows('journal_entries')])).toEqual(before);
}

describe('the billing run', () => {
  describe('month ends across a leap year', () => {
    it('bills Jan 31 → Feb 29 2028 → Mar 31 → Apr 30 → May 31: clamped, never drifting, each period once', async () => {
      const plan = await createPlan(acme, { amount: 100_000 });
      const customer = await createCustomer(acme);
      const sub = await subscribe(acme, { customer_id: customer, plan_id: plan.id });
      expect(sub).toMatchObject({ current_period_start: '2028-01-31T09:30:00.000Z', current_period_end: '2028-02-29T09:30:00.000Z' });
      await pay(acme, (await invoicesOf(acme, sub.id))[0]);

      const stops = [
        ['2028-02-29T09:30:00Z', '2028-03-31T09:30:00.000Z'],
        ['2028-03-31T09:30:00Z', '2028-04-30T09:30:00.000Z'],
        ['2028-04-30T09:30:00Z', '2028-05-31T09:30:00.000Z'],
        ['2028-05-31T09:30:00Z', '2028-06-30T09:30:00.000Z'],
      ];
      for (const [at, end] of stops) {
        // One millisecond early: nothing is due yet.
        await travelTo(t, new Date(new Date(at!).getTime() - 1).toISOString());
        expect((await getSubscription(acme, sub.id)).current_period_end).toBe(new Date(at!).toISOString());
        await travelTo(t, at!);
        const now = await getSubscription(acme, sub.id);
        expect(now).toMatchObject({ status: 'active', current_period_start: new Date(at!).toISOString(), current_period_end: end });
        const invoices = await invoicesOf(acme, sub.id);
        const latest = invoices.at(-1)!;
        expect(latest).toMatchObject({ id: now.latest_invoice_id, billing_reason: 'subscription_cycle', status: 'open', subtotal: 100_000, total: 118_000 });
        expect(latest.issued_at).toBe(new Date(at!).toISOString());
        await pay(acme, latest);
        await expectRerunChangesNothing();
      }

      const invoices: Inv[] = await invoicesOf(acme, sub.id);
      expect(periods(invoices)).toEqual([
        ['subscription_create', '2028-01-31', '2028-02-29'],
        ['subscription_cycle', '2028-02-29', '2028-03-31'],
        ['subscription_cycle', '2028-03-31', '2028-04-30'],
        ['subscription_cycle', '2028-04-30', '2028-05-31'],
        ['subscription_cycle', '2028-05-31', '2028-06-30'],
      ]);
      // Numbers are gapless, in issue order.
      const numbers = invoices.map((i) => sequence(i.number));
      expect(numbers).toEqual(numbers.map((_, i) => numbers[0]! + i));
      expect(invoices.every((i) => i.status === 'paid')).toBe(true);
      expect(await eventTypesOf(acme, sub.id)).toEqual(['subscription.created', ...stops.map(() => 'subscription.renewed')]);
      await retire(acme, sub.id);
    });
  });

  describe('catching up', () => {
    it.each([
      ['day', 3, '2028-06-30T09:30:00Z', ['2028-06-30', '2028-07-03', '2028-07-06', '2028-07-09']],
      ['week', 2, '2028-06-30T09:30:00Z', ['2028-06-30', '2028-07-14', '2028-07-28', '2028-08-11']],
      ['month', 3, '2028-08-31T09:30:00Z', ['2028-08-31', '2028-11-30', '2029-02-28', '2029-05-31']],
      ['year', 1, '2028-02-29T09:30:00Z', ['2028-02-29', '2029-02-28', '2030-02-28', '2031-02-28']],
    ] as const)('invoices every missed %s × %i period once, in order, when the clock jumps', async (unit, count, start, starts) => {
      t.clock.set(start);
      const plan = await createPlan(acme, { interval_unit: unit, interval_count: count });
      const sub = await subscribe(acme, { customer_id: await createCustomer(acme), plan_id: plan.id });
      // Jump to just after the 4th period starts: three renewals in one drain.
      await travelTo(t, new Date(new Date(`${starts[3]}T09:30:00Z`).getTime() + 60_000).toISOString());
      const invoices: Inv[] = await invoicesOf(acme, sub.id);
      expect(invoices.map((i) => i.period_start.slice(0, 10))).toEqual(starts);
      expect(invoices.map((i) => i.billing_reason)).toEqual(['subscription_create', 'subscription_cycle', 'subscription_cycle', 'subscription_cycle']);
      expect((await getSubscription(acme, sub.id)).current_period_start.slice(0, 10)).toBe(starts[3]);
      await expectRerunChangesNothing();
      await retire(acme, sub.id);
    });
  });

  describe('trials', () => {
    it('turns trialing into active at trial end with its first invoice, then bills from the trial end', async () => {
      t.clock.set('2029-01-10T00:00:00Z');
      const plan = await createPlan(acme, { amount: 50_000, trial_days: 21 });
      const sub = await subscribe(acme, { customer_id: await createCustomer(acme), plan_id: plan.id });
      expect(sub).toMatchObject({ status: 'trialing', trial_end: '2029-01-31T00:00:00.000Z', current_period_end: '2029-01-31T00:00:00.000Z' });
      await travelTo(t, '2029-01-30T23:59:59Z');
      expect((await getSubscription(acme, sub.id)).status).toBe('trialing');
      await travelTo(t, '2029-01-31T00:00:00Z');
      const active = await getSubscription(acme, sub.id);
      expect(active).toMatchObject({ status: 'active', current_period_start: '2029-01-31T00:00:00.000Z', current_period_end: '2029-02-28T00:00:00.000Z' });
      await expectRerunChangesNothing();
      await pay(acme, (await invoicesOf(acme, sub.id))[0]);
      await travelTo(t, '2029-02-28T00:00:00Z');
      await travelTo(t, '2029-03-31T00:00:00Z');
      expect(periods(await invoicesOf(acme, sub.id))).toEqual([
        ['subscription_cycle', '2029-01-31', '2029-02-28'],
        ['subscription_cycle', '2029-02-28', '2029-03-31'],
        ['subscription_cycle', '2029-03-31', '2029-04-30'],
      ]);
      expect((await eventTypesOf(acme, sub.id)).slice(0, 3)).toEqual(['subscription.created', 'subscription.trial_ended', 'subscription.renewed']);
      await retire(acme, sub.id);
    });

    it('ends a trial set to cancel at period end without invoicing anything', async () => {
      t.clock.set('2029-05-01T00:00:00Z');
      const plan = await createPlan(acme, { trial_days: 7 });
      const sub = await subscribe(acme, { customer_id: await createCustomer(acme), plan_id: plan.id });
      expect((await acme.http.POST('/v1/subscriptions/{id}/cancel', { path: { id: sub.id } })).status).toBe(200);
      await travelTo(t, '2029-05-08T00:00:00Z');
      expect(await getSubscription(acme, sub.id)).toMatchObject({ status: 'canceled', ended_at: '2029-05-08T00:00:00.000Z', cancel_at_period_end: true });
      expect(await invoicesOf(acme, sub.id)).toEqual([]);
    });
  });

  describe('cancellation at period end', () => {
    it('ends the subscription at its period end with no invoice; reactivated, it renews instead', async () => {
      t.clock.set('2029-06-15T12:00:00Z');
      const plan = await createPlan(acme);
      const customer = await createCustomer(acme);
      const leaving = await subscribe(acme, { customer_id: customer, plan_id: plan.id });
      const staying = await subscribe(acme, { customer_id: customer, plan_id: plan.id });
      for (const sub of [leaving, staying]) await pay(acme, (await invoicesOf(acme, sub.id))[0]);
      await acme.http.POST('/v1/subscriptions/{id}/cancel', { path: { id: leaving.id }, body: { at_period_end: true } });
      await acme.http.POST('/v1/subscriptions/{id}/cancel', { path: { id: staying.id }, body: {} });
      t.clock.set('2029-07-01T00:00:00Z');
      expect((await acme.http.POST('/v1/subscriptions/{id}/reactivate', { path: { id: staying.id } })).body.data.cancel_at_period_end).toBe(false);
      await travelTo(t, '2029-07-15T12:00:00Z');
      expect(await getSubscription(acme, leaving.id)).toMatchObject({ status: 'canceled', ended_at: '2029-07-15T12:00:00.000Z' });
      expect(await invoicesOf(acme, leaving.id)).toHaveLength(1);
      expect((await eventTypesOf(acme, leaving.id)).at(-1)).toBe('subscription.canceled');
      expect(await getSubscription(acme, staying.id)).toMatchObject({ status: 'active', current_period_end: '2029-08-15T12:00:00.000Z' });
      expect(await invoicesOf(acme, staying.id)).toHaveLength(2);
      const staysTypes = await eventTypesOf(acme, staying.id);
      expect(staysTypes.indexOf('subscription.cancel_scheduled')).toBeGreaterThan(-1);
      expect(staysTypes.indexOf('subscription.reactivated')).toBeGreaterThan(staysTypes.indexOf('subscription.cancel_scheduled'));
      expect(await eventTypesOf(acme, leaving.id)).toContain('subscription.cancel_scheduled');
      // Too late to reactivate a canceled one.
      const late = await acme.http.POST('/v1/subscriptions/{id}/reactivate', { path: { id: leaving.id } });
      expect(late.status).toBe(409);
      expect(late.error!.message).toBe('cannot reactivate a subscription whose status is canceled');
      await expectRerunChangesNothing();
      await retire(acme, staying.id);
    });
  });

  describe('delinquency', () => {
    it('moves to past_due when an invoice passes its due date unpaid, and back to active once it is paid', async () => {
      t.clock.set('2029-09-01T00:00:00Z');
      const plan = await createPlan(acme);
      const sub = await subscribe(acme, { customer_id: await createCustomer(acme), plan_id: plan.id });
      const [first] = await invoicesOf(acme, sub.id);
      expect(first.due_date).toBe('2029-10-01T00:00:00.000Z'); // the tenant's 30 days
      await travelTo(t, '2029-09-30T23:59:59Z');
      expect((await getSubscription(acme, sub.id)).status).toBe('active');
      await travelTo(t, '2029-10-01T00:00:00Z'); // due: renewed too (the renewal does not settle the old invoice)
      expect(await getSubscription(acme, sub.id)).toMatchObject({ status: 'past_due', current_period_start: '2029-10-01T00:00:00.000Z' });
      await expectRerunChangesNothing();
      await pay(acme, first);
      await travelTo(t, '2029-10-01T00:01:00Z');
      expect((await getSubscription(acme, sub.id)).status).toBe('active');
      expect(await eventTypesOf(acme, sub.id)).toEqual(['subscription.created', 'subscription.renewed', 'subscription.past_due', 'subscription.recovered']);
      await retire(acme, sub.id);
    });

    it('moves to unpaid when an invoice is written off as uncollectible, keeps billing, and recovers when it is paid', async () => {
      t.clock.set('2029-11-01T00:00:00Z');
      const plan = await createPlan(acme);
      const sub = await subscribe(acme, { customer_id: await createCustomer(acme), plan_id: plan.id });
      const [first] = await invoicesOf(acme, sub.id);
      expect((await acme.http.POST('/v1/invoices/{id}/mark-uncollectible', { path: { id: first.id } })).status).toBe(200);
      await travelTo(t, '2029-11-01T00:01:00Z');
      expect((await getSubscription(acme, sub.id)).status).toBe('unpaid');
      await travelTo(t, '2029-12-01T00:00:00Z');
      expect(await getSubscription(acme, sub.id)).toMatchObject({ status: 'unpaid', current_period_start: '2029-12-01T00:00:00.000Z' });
      await pay(acme, first);
      await travelTo(t, '2029-12-01T00:01:00Z');
      expect((await getSubscription(acme, sub.id)).status).toBe('active');
      const events = (await acme.http.GET('/v1/events', { query: { object_id: sub.id, limit: 100 } })).body.data;
      const moves = events.filter((e) => e.type === 'subscription.unpaid' || e.type === 'subscription.recovered').reverse();
      expect(moves.map((e) => [e.type, e.data.object.status])).toEqual([
        ['subscription.unpaid', 'unpaid'],
        ['subscription.recovered', 'active'],
      ]);
      await retire(acme, sub.id);
    });
  });

  describe('pause', () => {
    it('bills nothing while paused; resumed after its period lapsed, a new period starts and is invoiced at once', async () => {
      t.clock.set('2030-01-10T00:00:00Z');
      const plan = await createPlan(acme);
      const sub = await subscribe(acme, { customer_id: await createCustomer(acme), plan_id: plan.id });
      await pay(acme, (await invoicesOf(acme, sub.id))[0]);
      expect((await acme.http.POST('/v1/subscriptions/{id}/pause', { path: { id: sub.id } })).status).toBe(200);
      await travelTo(t, '2030-03-20T00:00:00Z');
      expect(await invoicesOf(acme, sub.id)).toHaveLength(1);
      const resumed = await acme.http.POST('/v1/subscriptions/{id}/resume', { path: { id: sub.id } });
      expect(resumed.body.data).toMatchObject({
        status: 'active',
        current_period_start: '2030-03-20T00:00:00.000Z',
        current_period_end: '2030-04-20T00:00:00.000Z',
      });
      expect(periods(await invoicesOf(acme, sub.id))).toEqual([
        ['subscription_create', '2030-01-10', '2030-02-10'],
        ['subscription_cycle', '2030-03-20', '2030-04-20'],
      ]);
      await pay(acme, (await invoicesOf(acme, sub.id))[1]);
      await travelTo(t, '2030-04-20T00:00:00Z');
      expect((await getSubscription(acme, sub.id)).current_period_start).toBe('2030-04-20T00:00:00.000Z');
      expect(await eventTypesOf(acme, sub.id)).toEqual(['subscription.created', 'subscription.paused', 'subscription.resumed', 'subscription.renewed']);
      await retire(acme, sub.id);
    });
  });

  describe('subscriptions stated by another flow (gifts, the importer)', () => {
    it('keeps the given period, invoices nothing at creation, and continues the schedule from its end', async () => {
      t.clock.set('2030-08-10T00:00:00Z');
      const plan = await createPlan(acme, { amount: 100_000 });
      const customer = await createCustomer(acme);
      const { row } = await t.database.db.transaction().execute((tx) =>
        createSubscriptionRecord(
          { tx, tenantId: acme.tenantId, now: t.clock.now() },
          {
            customerId: customer,
            planId: plan.id,
            status: 'active',
            currentPeriodStart: new Date('2030-07-31T00:00:00Z'),
            currentPeriodEnd: new Date('2030-08-31T00:00:00Z'),
            externalId: 'legacy-42',
          },
        ),
      );
      expect(await getSubscription(acme, row.id)).toMatchObject({
        status: 'active',
        external_id: 'legacy-42',
        current_period_start: '2030-07-31T00:00:00.000Z',
        current_period_end: '2030-08-31T00:00:00.000Z',
        latest_invoice_id: null,
      });
      expect(await invoicesOf(acme, row.id)).toEqual([]);
      await travelTo(t, '2030-08-31T00:00:00Z');
      await pay(acme, (await invoicesOf(acme, row.id))[0]);
      await travelTo(t, '2030-09-30T00:00:00Z');
      expect(periods(await invoicesOf(acme, row.id))).toEqual([
        ['subscription_cycle', '2030-08-31', '2030-09-30'],
        ['subscription_cycle', '2030-09-30', '2030-10-31'],
      ]);
      // The same external id twice is refused.
      await expect(
        t.database.db.transaction().execute((tx) =>
          createSubscriptionRecord(
            { tx, tenantId: acme.tenantId, now: t.clock.now() },
            {
              customerId: customer,
              planId: plan.id,
              status: 'active',
              currentPeriodStart: new Date('2030-09-01T00:00:00Z'),
              currentPeriodEnd: new Date('2030-10-01T00:00:00Z'),
              externalId: 'legacy-42',
            },
          ),
        ),
      ).rejects.toThrow(/already exists/);
      await retire(acme, row.id);
    });
  });

  describe('what a renewal books', () => {
    it('is the same invoice as one issued alone: GST by place of supply, number, balanced entry, events, credit spent, webhooks queued', async () => {
      t.clock.set('2030-05-01T00:00:00Z');
      const tenant = await karnatakaTenant(t);
      const hook = await tenant.http.POST('/v1/webhooks', {
        body: { url: 'https://hooks.example.test/kosh', events: ['subscription.renewed', 'invoice.finalized'] },
      });
      expect(hook.status, hook.text).toBe(201);
      const plan = await createPlan(tenant, { amount: 100_000 });
      const local = await createCustomer(tenant);
      const mumbai = (
        await tenant.http.POST('/v1/customers', { body: { email: 'mh@renewal.test', name: 'MH', billing_address: { state_code: '27', country: 'IN' } } })
      ).body.data.id;
      const a = await subscribe(tenant, { customer_id: local, plan_id: plan.id });
      const b = await subscribe(tenant, { customer_id: mumbai, plan_id: plan.id });
      for (const sub of [a, b]) await pay(tenant, (await invoicesOf(tenant, sub.id))[0]);
      // Goodwill credit the renewal must spend, as finalizeInvoiceWithCredit would.
      expect((await tenant.http.POST('/v1/credit-notes', { body: { customer_id: local, amount: 10_000, currency: 'INR', reason: 'goodwill' } })).status).toBe(
        201,
      );

      await travelTo(t, '2030-06-01T00:00:00Z');
      const [createA, renewalA] = await invoicesOf(tenant, a.id);
      const [createB, renewalB] = await invoicesOf(tenant, b.id);
      expect(renewalA).toMatchObject({
        tax_type: 'intra_state',
        cgst_amount: 9_000,
        sgst_amount: 9_000,
        igst_amount: 0,
        total: 118_000,
        amount_credited: 10_000,
        amount_due: 108_000,
      });
      expect(renewalB).toMatchObject({ tax_type: 'inter_state', place_of_supply: '27', igst_amount: 18_000, total: 118_000, amount_due: 118_000 });
      // Same shape as the invoice issued through the one-by-one path at creation.
      const shape = (i: Record<string, unknown>) => Object.keys(i).sort();
      expect(shape(renewalA)).toEqual(shape(createA));
      expect(renewalA.supplier).toEqual(createA.supplier);
      expect(renewalB.customer_details).toEqual(createB.customer_details);
      expect(sequence(renewalB.number)).toBe(sequence(renewalA.number) + 1);
      for (const inv of [renewalA, renewalB]) {
        const entries = (await tenant.http.GET('/v1/invoices/{id}/journal-entries', { path: { id: inv.id } })).body.data;
        const finalized = entries.find((e: { kind: string }) => e.kind === 'invoice.finalized');
        const sum = (k: 'debit' | 'credit') => finalized!.lines.reduce((n: number, l) => n + l[k], 0);
        expect([sum('debit'), sum('credit')]).toEqual([inv.total, inv.total]);
        expect(await eventTypesOf(tenant, inv.id)).toEqual(['invoice.created', 'invoice.finalized']);
      }
      const renewed = await tenant.http.GET('/v1/events', { query: { type: 'subscription.renewed', object_id: a.id } });
      expect(renewed.body.data).toHaveLength(1);
      const deliveries = await tenant.http.GET('/v1/events/{id}/deliveries', { path: { id: renewed.body.data[0]!.id } });
      expect(deliveries.status, deliveries.text).toBe(200);
      expect(deliveries.body.data).toHaveLength(1);
      await retire(tenant, a.id, b.id);
    });
  });

  describe('a subscription that cannot be renewed', () => {
    it('is skipped and reported while the rest of its batch is renewed', async () => {
      t.clock.set('2030-03-01T00:00:00Z');
      const tenant = await karnatakaTenant(t);
      const plan = await createPlan(tenant, {
        prices: [
          { amount: 100_000, currency: 'INR' },
          { amount: 1_500, currency: 'USD' },
        ],
      });
      const customer = await createCustomer(tenant);
      const entity = (await tenant.http.GET('/v1/entities')).body.data[0]!.id;
      await tenant.http.PUT('/v1/entities/{id}/exchange-rates', { path: { id: entity }, body: { currency: 'USD', rate: '83' } });
      const inr = [await subscribe(tenant, { customer_id: customer, plan_id: plan.id }), await subscribe(tenant, { customer_id: customer, plan_id: plan.id })];
      const usd = await subscribe(tenant, { customer_id: customer, plan_id: plan.id, currency: 'USD' });
      // The plan loses its USD price behind the API's back: the USD subscription cannot be priced.
      await t.database.db.updateTable('subscriptions').set({ price_id: null }).where('tenant_id', '=', tenant.tenantId).where('id', '=', usd.id).execute();
      await t.database.db.deleteFrom('prices').where('tenant_id', '=', tenant.tenantId).where('plan_id', '=', plan.id).where('currency', '=', 'USD').execute();
      const logged: string[] = [];
      const report = await runBillingRun(t.database.db, new Date('2030-04-01T00:00:00Z'), {
        log: (message, fields) => logged.push(`${message} ${fields?.subscriptionId}`),
      });
      expect(report).toMatchObject({ renewed: 2, failed: 1 });
      expect(logged).toEqual([`subscription renewal failed ${usd.id}`]);
      for (const sub of inr) expect(await invoicesOf(tenant, sub.id)).toHaveLength(2);
      expect(await invoicesOf(tenant, usd.id)).toHaveLength(1);
      expect((await getSubscription(tenant, usd.id)).current_period_end).toBe('2030-04-01T00:00:00.000Z');
      // Tried again by the next run, still alone.
      expect(await runBillingRun(t.database.db, new Date('2030-04-01T00:00:00Z'))).toMatchObject({ renewed: 0, failed: 1 });
      await retire(tenant, usd.id, ...inr.map((s) => s.id));
    });
  });

  describe('exactly once', () => {
    it('invoices each due period once when runs race, and the database refuses a second invoice for a period', async () => {
      t.clock.set('2030-06-01T00:00:00Z');
      const fresh = await karnatakaTenant(t); // nothing else of this tenant is due
      const plan = await createPlan(fresh);
      const customer = await createCustomer(fresh);
      const subs = [];
      for (let i = 0; i < 12; i++) subs.push(await subscribe(fresh, { customer_id: customer, plan_id: plan.id }));
      t.clock.set('2030-07-01T00:00:00Z');
      const reports = await Promise.all([1, 2, 3].map(() => runBillingRun(t.database.db, t.clock.now(), { batchSize: 5 })));
      expect(reports.reduce((n, r) => n + r.failed, 0)).toBe(0);
      for (const sub of subs) expect(periods(await invoicesOf(fresh, sub.id))).toHaveLength(2);
      const all = await fresh.http.GET('/v1/invoices', { query: { limit: 1000 } });
      expect(all.body.total_count).toBe(24);

      // The unique key, not the code, is the guarantee.
      const [, cycle] = await invoicesOf(fresh, subs[0].id);
      const row = await t.database.db.selectFrom('invoices').selectAll().where('id', '=', cycle.id).executeTakeFirstOrThrow();
      const copy = {
        ...row,
        id: '01900000-0000-7000-8000-000000000001',
        number: null,
        status: 'draft' as const,
        supplier: null,
        customer_details: null,
        metadata: '{}',
        last_payment_error: null,
        shipping_bill: null,
      };
      await expect(t.database.db.insertInto('invoices').values(copy).execute()).rejects.toThrow(/invoices_subscription_period/);
    });
  });
});
