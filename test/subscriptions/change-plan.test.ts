import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestKosh, type Tenant, type TestKosh } from '../support/harness.js';
import { createCustomer, createPlan, getSubscription, invoicesOf, karnatakaTenant, pay, subscribe, travelTo } from './helpers.js';

/**
 * Plan changes, to the day (docs/subscriptions.md "Plan changes"). Every case starts a monthly
 * 1 000.00 + 18% GST subscription on 2026-04-01 (April: 30 days) and changes it on 2026-04-11,
 * with 20 of the 30 days unused: the unused credit is 118 000 × 20 / 30 = 78 666.67 → 78 667.
 */
let t: TestKosh;
let acme: Tenant;
let basic: { id: string }; // 1 000.00 a month
let pro: { id: string }; // 2 000.00 a month
let lite: { id: string }; // 300.00 a month
let yearly: { id: string }; // 10 000.00 a year
let customer: string;

beforeAll(async () => {
  t = await startTestKosh();
  acme = await karnatakaTenant(t);
  basic = await createPlan(acme, { amount: 100_000 });
  pro = await createPlan(acme, { amount: 200_000 });
  lite = await createPlan(acme, { amount: 30_000 });
  yearly = await createPlan(acme, { amount: 1_000_000, interval_unit: 'year' });
  customer = await createCustomer(acme);
});
afterAll(() => t.close());
// Cases go back to April 2026; a case that travels picks a minute of its own, because the worker
// enqueues the billing run once per minute slot (a slot already run is not run again).
beforeEach(() => t.clock.set('2026-04-01T00:00:00Z'));

async function paidSubscription(paid = true) {
  const sub = await subscribe(acme, { customer_id: await createCustomer(acme), plan_id: basic.id });
  const [invoice] = await invoicesOf(acme, sub.id);
  if (paid) await pay(acme, invoice);
  t.clock.set('2026-04-11T00:00:00Z');
  return { sub, invoice };
}

async function counts() {
  const n = async (table: 'invoices' | 'credit_notes' | 'events' | 'journal_entries') =>
    Number(
      (
        await t.database.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  return { invoices: await n('invoices'), credit_notes: await n('credit_notes'), events: await n('events'), journal: await n('journal_entries') };
}

describe('subscriptions', () => {
  describe('change plan', () => {
    it('upgrades mid-period: credit note for the unused old days, the new plan for the rest on one invoice, the credit spent on it', async () => {
      const { sub, invoice: old } = await paidSubscription();
      const res = await acme.http.POST('/v1/subscriptions/{id}/change-plan', { path: { id: sub.id }, body: { plan_id: pro.id } });
      expect(res.status, res.text).toBe(200);
      const change = res.body.data;
      expect(change.preview).toBe(false);
      expect(change.proration).toEqual({
        prorated: true,
        changed_at: '2026-04-11T00:00:00.000Z',
        period_start: '2026-04-11T00:00:00.000Z',
        period_end: '2026-05-01T00:00:00.000Z',
        remaining_days: 20,
        period_days: 30,
        unused_value: 78_667,
        unused_credit: 78_667,
        credit_capped: false,
        new_charge: 133_333, // 200 000 × 20 / 30, net
      });
      expect(change.credit_note).toMatchObject({ invoice_id: old.id, amount: 78_667, status: 'used', balance: 0 });
      // The credit note reverses the old invoice's GST pro rata: 78 667 gross of which 12 000 tax.
      expect(change.credit_note!.subtotal + change.credit_note!.tax_amount).toBe(78_667);
      expect(change.invoice).toMatchObject({
        billing_reason: 'subscription_update',
        subscription_id: sub.id,
        status: 'open',
        subtotal: 133_333,
        cgst_amount: 12_000,
        sgst_amount: 12_000,
        total: 157_333,
        amount_credited: 78_667,
        amount_due: 78_666,
        period_start: '2026-04-11T00:00:00.000Z',
        period_end: '2026-05-01T00:00:00.000Z',
      });
      expect(change.invoice!.lines).toEqual([expect.objectContaining({ plan_id: pro.id, unit_amount: 133_333, quantity: 1 })]);
      expect(change.subscription).toMatchObject({
        plan_id: pro.id,
        status: 'active',
        current_period_start: '2026-04-01T00:00:00.000Z',
        current_period_end: '2026-05-01T00:00:00.000Z',
        latest_invoice_id: change.invoice!.id,
      });
      // The next renewal bills the new plan in full.
      await pay(acme, change.invoice!);
      await travelTo(t, '2026-05-01T00:00:00Z');
      expect((await invoicesOf(acme, sub.id)).at(-1)).toMatchObject({
        billing_reason: 'subscription_cycle',
        subtotal: 200_000,
        period_start: '2026-05-01T00:00:00.000Z',
      });
    });

    it('previews exactly what the change would do, and writes nothing', async () => {
      const { sub } = await paidSubscription();
      const before = await counts();
      const preview = await acme.http.POST('/v1/subscriptions/{id}/change-plan', { path: { id: sub.id }, body: { plan_id: pro.id, preview: true } });
      expect(preview.status, preview.text).toBe(200);
      expect(preview.body.data).toMatchObject({ preview: true, proration: { unused_credit: 78_667, new_charge: 133_333 } });
      expect(preview.body.data.invoice).toMatchObject({ total: 157_333, amount_due: 78_666, tax_amount: 24_000 });
      expect(await counts()).toEqual(before);
      expect(await getSubscription(acme, sub.id)).toMatchObject({ plan_id: basic.id, latest_invoice_id: sub.latest_invoice_id });

      const real = await acme.http.POST('/v1/subscriptions/{id}/change-plan', { path: { id: sub.id }, body: { plan_id: pro.id } });
      const { id: _previewId, created_at: _c, updated_at: _u, lines: previewLines, ...previewInvoice } = preview.body.data.invoice!;
      const { id: _realId, created_at: _c2, updated_at: _u2, lines: realLines, ...realInvoice } = real.body.data.invoice!;
      // Same amounts, same tax, even the same number: the preview's number went back to the series.
      expect(realInvoice).toEqual(previewInvoice);
      expect(realLines.map((l: { amount: number; total: number }) => [l.amount, l.total])).toEqual(
        previewLines.map((l: { amount: number; total: number }) => [l.amount, l.total]),
      );
    });

    it('downgrades: the credit pays the smaller charge in full and the rest stays on the customer balance', async () => {
      const { sub } = await paidSubscription();
      const change = (await acme.http.POST('/v1/subscriptions/{id}/change-plan', { path: { id: sub.id }, body: { plan_id: lite.id } })).body.data;
      // 30 000 × 20 / 30 = 20 000 net + 3 600 GST = 23 600, all of it from the 78 667 credit.
      expect(change.invoice).toMatchObject({ subtotal: 20_000, total: 23_600, amount_credited: 23_600, amount_due: 0, status: 'paid' });
      expect(change.credit_note).toMatchObject({ amount: 78_667, balance: 78_667 - 23_600, status: 'issued' });
    });

    it('to another interval: a new period of the new plan starts now, charged in full, less the credit', async () => {
      const { sub } = await paidSubscription();
      const change = (await acme.http.POST('/v1/subscriptions/{id}/change-plan', { path: { id: sub.id }, body: { plan_id: yearly.id } })).body.data;
      expect(change.subscription).toMatchObject({
        plan_id: yearly.id,
        current_period_start: '2026-04-11T00:00:00.000Z',
        current_period_end: '2027-04-11T00:00:00.000Z',
      });
      expect(change.invoice).toMatchObject({
        subtotal: 1_000_000,
        total: 1_180_000,
        amount_credited: 78_667,
        amount_due: 1_101_333,
        period_end: '2027-04-11T00:00:00.000Z',
      });
      await pay(acme, change.invoice!);
      await travelTo(t, '2027-04-11T00:00:00Z');
      expect((await invoicesOf(acme, sub.id)).at(-1)).toMatchObject({
        billing_reason: 'subscription_cycle',
        period_start: '2027-04-11T00:00:00.000Z',
        period_end: '2028-04-11T00:00:00.000Z',
      });
      await acme.http.POST('/v1/subscriptions/{id}/cancel', { path: { id: sub.id }, body: { at_period_end: false } });
    });

    it('applies the credit to the old invoice while it is still unpaid', async () => {
      const { sub, invoice: old } = await paidSubscription(false);
      const change = (await acme.http.POST('/v1/subscriptions/{id}/change-plan', { path: { id: sub.id }, body: { plan_id: pro.id } })).body.data;
      expect(change.credit_note).toMatchObject({ amount: 78_667, balance: 0, status: 'used' });
      expect((await acme.http.GET('/v1/invoices/{id}', { path: { id: old.id } })).body.data).toMatchObject({
        amount_credited: 78_667,
        amount_due: 118_000 - 78_667,
      });
      expect(change.invoice).toMatchObject({ total: 157_333, amount_due: 157_333 });
    });

    it("credits no more than remains creditable on the period's invoice after an earlier credit note, and says so", async () => {
      const { sub, invoice: old } = await paidSubscription();
      const earlier = await acme.http.POST('/v1/credit-notes', {
        body: { customer_id: sub.customer_id, invoice_id: old.id, amount: 50_000, reason: 'goodwill' },
      });
      expect(earlier.status, earlier.text).toBe(201);
      const res = await acme.http.POST('/v1/subscriptions/{id}/change-plan', { path: { id: sub.id }, body: { plan_id: pro.id } });
      expect(res.status, res.text).toBe(200);
      // Unused: 78 667; the invoice had 118 000 − 50 000 = 68 000 left to credit.
      expect(res.body.data.proration).toMatchObject({ unused_value: 78_667, unused_credit: 68_000, credit_capped: true });
      expect(res.body.data.credit_note).toMatchObject({ invoice_id: old.id, amount: 68_000 });
    });

    it('caps the credit of a prorated cancellation the same way', async () => {
      const { sub, invoice: old } = await paidSubscription();
      await acme.http.POST('/v1/credit-notes', { body: { customer_id: sub.customer_id, invoice_id: old.id, amount: 50_000, reason: 'goodwill' } });
      const res = await acme.http.POST('/v1/subscriptions/{id}/cancel', { path: { id: sub.id }, body: { at_period_end: false, prorate: true } });
      expect(res.status, res.text).toBe(200);
      expect(res.body.data).toMatchObject({
        status: 'canceled',
        proration: { remaining_days: 20, period_days: 30, unused_value: 78_667, unused_credit: 68_000, credit_capped: true },
      });
      expect(res.body.data.proration!.credit_note_id).toEqual(expect.any(String));
    });

    it('without proration changes the plan from the next renewal and charges nothing now', async () => {
      const { sub } = await paidSubscription();
      const before = (await invoicesOf(acme, sub.id)).length;
      const change = (await acme.http.POST('/v1/subscriptions/{id}/change-plan', { path: { id: sub.id }, body: { plan_id: pro.id, prorate: false } })).body
        .data;
      expect(change).toMatchObject({ invoice: null, credit_note: null, proration: { prorated: false, unused_credit: 0, new_charge: 0 } });
      expect(await invoicesOf(acme, sub.id)).toHaveLength(before);
      // Another minute than the other cases: the worker enqueues one billing run per minute slot.
      await travelTo(t, '2026-05-01T00:02:00Z');
      expect((await invoicesOf(acme, sub.id)).at(-1)).toMatchObject({ subtotal: 200_000, period_start: '2026-05-01T00:00:00.000Z' });
    });

    it('swaps the plan of a trialing subscription without invoicing', async () => {
      const sub = await subscribe(acme, { customer_id: customer, plan_id: basic.id, trial_days: 14 });
      const change = (await acme.http.POST('/v1/subscriptions/{id}/change-plan', { path: { id: sub.id }, body: { plan_id: pro.id } })).body.data;
      expect(change).toMatchObject({ invoice: null, credit_note: null, subscription: { status: 'trialing', plan_id: pro.id } });
      await travelTo(t, '2026-04-15T00:03:00Z');
      expect((await invoicesOf(acme, sub.id))[0]).toMatchObject({ subtotal: 200_000, period_start: '2026-04-15T00:00:00.000Z' });
    });

    it('refuses an unknown plan (404), a plan without the currency (400), the same plan (400), a bad body (400)', async () => {
      const sub = await subscribe(acme, { customer_id: customer, plan_id: basic.id });
      const usd = await createPlan(acme, { amount: 1000, currency: 'USD' });
      const unknown = await acme.http.POST('/v1/subscriptions/{id}/change-plan', {
        path: { id: sub.id },
        body: { plan_id: '00000000-0000-7000-8000-000000000000' },
      });
      expect(unknown.status).toBe(404);
      expect(unknown.error!.message).toBe('plan not found');
      const currency = await acme.http.POST('/v1/subscriptions/{id}/change-plan', { path: { id: sub.id }, body: { plan_id: usd.id } });
      expect(currency.status).toBe(400);
      expect(currency.error!.details![0]!.field).toBe('plan_id');
      const same = await acme.http.POST('/v1/subscriptions/{id}/change-plan', { path: { id: sub.id }, body: { plan_id: basic.id } });
      expect(same.status).toBe(400);
      expect((await acme.api('POST', `/v1/subscriptions/${sub.id}/change-plan`, { plan_id: pro.id, prorate: 'yes' })).status).toBe(400);
      expect((await acme.api('POST', `/v1/subscriptions/${sub.id}/change-plan`, {})).status).toBe(400);
      expect((await getSubscription(acme, sub.id)).plan_id).toBe(basic.id);
    });
  });
});
