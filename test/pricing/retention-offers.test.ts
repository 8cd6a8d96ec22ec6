import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKosh, type ApiResponse, type Tenant, type TestKosh } from '../support/harness.js';
import { openPortalSession } from '../support/portal.js';
import { createCustomer, createPlan, eventTypesOf, getSubscription, invoicesOf, karnatakaTenant, pay, subscribe, travelTo } from '../subscriptions/helpers.js';

/**
 * Retention offers (DESIGN §24, decision 0560): a coupon the portal offers a customer who starts to
 * cancel for one of the offer's reasons. Karnataka tenant and customers (CGST 9 % + SGST 9 %); a
 * ₹1,000 monthly plan from 1 April 2026, paid; the customer acts on 11 April. The offered coupon
 * STAY20 takes 20 % off for 3 months.
 */
let t: TestKosh;

type Session = { cookie: string; csrf: string };

async function setup(): Promise<{ acme: Tenant; plan: { id: string }; coupon: { id: string; code: string } }> {
  t.clock.set('2026-04-01T00:00:00Z');
  const acme = await karnatakaTenant(t);
  const plan = await createPlan(acme, { amount: 100_000 });
  const res = await acme.http.POST('/v1/coupons', {
    body: { code: 'STAY20', name: 'Stay with us', percent_off: 20, duration: 'repeating', duration_in_months: 3 },
  });
  expect(res.status, res.text).toBe(201);
  return { acme, plan, coupon: res.body.data };
}

async function offer(acme: Tenant, body: Record<string, unknown>): Promise<ApiResponse> {
  return acme.api('POST', '/v1/retention-offers', body);
}

const signInAs = (acme: Tenant, customerId: string): Promise<Session> => openPortalSession(t, acme, customerId);

function portal(method: 'GET' | 'POST', url: string, s: Session, body?: unknown): Promise<ApiResponse> {
  return t.call({
    method,
    url,
    headers: { cookie: s.cookie, ...(s.csrf ? { 'x-csrf-token': s.csrf } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
  });
}

function form(url: string, s: Session, fields: Record<string, string>): Promise<ApiResponse> {
  return t.call({
    method: 'POST',
    url,
    headers: { cookie: s.cookie, 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ csrf_token: s.csrf, ...fields }).toString(),
  });
}

/** A paid ₹1,180 subscription from 1 April, the clock then at 11 April, and its customer signed in to the portal. */
async function subscribed(acme: Tenant, planId: string) {
  t.clock.set('2026-04-01T00:00:00Z');
  const customer = await createCustomer(acme);
  const sub = await subscribe(acme, { customer_id: customer, plan_id: planId });
  const [invoice] = await invoicesOf(acme, sub.id);
  expect(invoice).toMatchObject({ total: 118_000 });
  await pay(acme, invoice);
  t.clock.set('2026-04-11T00:00:00Z');
  return { customer, sub, session: await signInAs(acme, customer) };
}

beforeAll(async () => {
  t = await startTestKosh();
});
afterAll(() => t?.close());

describe('retention offers', () => {
  describe('POST /v1/retention-offers', () => {
    it('offers a coupon for chosen reasons; a reason has at most one active offer; the coupon must exist and be active', async () => {
      const { acme, coupon } = await setup();
      const created = await offer(acme, { coupon: 'STAY20', reasons: ['too_expensive', 'unused'], message: 'Stay: 20% off for three months.' });
      expect(created.status, created.text).toBe(201);
      expect(created.body.data).toMatchObject({
        object: 'retention_offer',
        coupon_id: coupon.id,
        coupon_code: 'STAY20',
        reasons: ['too_expensive', 'unused'],
        message: 'Stay: 20% off for three months.',
        active: true,
        times_accepted: 0,
      });
      const id = created.body.data.id;

      const taken = await offer(acme, { coupon: coupon.id, reasons: ['unused', 'other'] });
      expect(taken.status, taken.text).toBe(409);
      expect(taken.body.error.reason).toBe('retention_reason_taken');
      expect(taken.body.error.message).toContain(id);
      expect((await offer(acme, { coupon: 'NO-SUCH', reasons: ['other'] })).status).toBe(404);
      expect((await offer(acme, { coupon: 'STAY20', reasons: [] })).status).toBe(400);
      expect((await offer(acme, { coupon: 'STAY20', reasons: ['other', 'other'] })).status).toBe(400);
      const off = await acme.http.POST('/v1/coupons', { body: { code: 'OFF', percent_off: 10, duration: 'once' } });
      await acme.http.PATCH('/v1/coupons/{id}', { path: { id: off.body.data.id }, body: { active: false } });
      const inactive = await offer(acme, { coupon: 'OFF', reasons: ['other'] });
      expect(inactive.status, inactive.text).toBe(409);
      expect(inactive.body.error.reason).toBe('coupon_inactive');

      // Deactivated, its reasons are free again; reactivating it then collides.
      const patched = await acme.http.PATCH('/v1/retention-offers/{id}', { path: { id }, body: { active: false } });
      expect(patched.status, patched.text).toBe(200);
      expect(patched.body.data.active).toBe(false);
      const second = await offer(acme, { coupon: 'STAY20', reasons: ['unused'] });
      expect(second.status, second.text).toBe(201);
      const back = await acme.http.PATCH('/v1/retention-offers/{id}', { path: { id }, body: { active: true } });
      expect(back.status).toBe(409);
      expect((await acme.http.PATCH('/v1/retention-offers/{id}', { path: { id }, body: { active: true, reasons: ['too_expensive'] } })).status).toBe(200);

      const active = await acme.http.GET('/v1/retention-offers', { query: { active: 'true' } });
      expect(active.body.data.map((o: { id: string }) => o.id).sort()).toEqual([id, second.body.data.id].sort());
      expect((await acme.http.GET('/v1/retention-offers/{id}', { path: { id } })).body.data.reasons).toEqual(['too_expensive']);
      expect(await eventTypesOf(acme, id)).toEqual(['retention_offer.created', 'retention_offer.updated', 'retention_offer.updated']); // the refused reactivation wrote nothing
    });
  });

  describe('in the portal', () => {
    it('shows the offer for its reason, and accepting it discounts the next invoices instead of cancelling (once per subscription)', async () => {
      const { acme, plan, coupon } = await setup();
      const made = await offer(acme, { coupon: 'STAY20', reasons: ['too_expensive', 'unused'] });
      const { sub, session } = await subscribed(acme, plan.id);

      const shown = await portal('GET', `/portal/api/subscriptions/${sub.id}/retention-offer?reason=too_expensive`, session);
      expect(shown.status, shown.text).toBe(200);
      expect(shown.body.data).toEqual({
        id: made.body.data.id,
        object: 'retention_offer',
        reason: 'too_expensive',
        message: null,
        coupon: { name: 'Stay with us', percent_off: 20, amount_off: null, currency: null, duration: 'repeating', duration_in_months: 3 },
      });
      // No offer answers this reason.
      expect((await portal('GET', `/portal/api/subscriptions/${sub.id}/retention-offer?reason=missing_features`, session)).body.data).toBeNull();

      const accepted = await portal('POST', `/portal/api/subscriptions/${sub.id}/retention-offer`, session, {
        reason: 'too_expensive',
        feedback: 'Pricey for us',
      });
      expect(accepted.status, accepted.text).toBe(200);
      // 3 months from 11 April: the discount ends 11 July.
      expect(accepted.body.data).toMatchObject({
        id: sub.id,
        status: 'active',
        cancel_at_period_end: false,
        discount: { coupon_id: coupon.id, start: '2026-04-11T00:00:00.000Z', end: '2026-07-11T00:00:00.000Z' },
        retention_offer: { id: made.body.data.id, reason: 'too_expensive' },
      });
      expect(await getSubscription(acme, sub.id)).toMatchObject({ status: 'active', cancel_at_period_end: false, canceled_at: null });
      expect(await eventTypesOf(acme, sub.id)).toEqual(expect.arrayContaining(['subscription.discount_applied', 'subscription.retention_offer_accepted']));

      // Once per subscription: not shown again, and refused.
      expect((await portal('GET', `/portal/api/subscriptions/${sub.id}/retention-offer?reason=unused`, session)).body.data).toBeNull();
      const again = await portal('POST', `/portal/api/subscriptions/${sub.id}/retention-offer`, session, { reason: 'unused' });
      expect(again.status).toBe(409);
      expect(again.body.error.reason).toBe('retention_offer_unavailable');
      expect((await acme.http.GET('/v1/retention-offers/{id}', { path: { id: made.body.data.id } })).body.data.times_accepted).toBe(1);

      // The May renewal: 100 000 − 20 % = 80 000; GST 9 % a half = 7 200 + 7 200; total 94 400.
      await travelTo(t, '2026-05-01T00:00:00Z');
      const renewal = (await invoicesOf(acme, sub.id)).at(-1);
      expect(renewal).toMatchObject({
        billing_reason: 'subscription_cycle',
        discount_amount: 20_000,
        subtotal: 80_000,
        cgst_amount: 7_200,
        sgst_amount: 7_200,
        total: 94_400,
      });

      // The churn-reasons report counts the customer kept, beside (not among) the cancellations.
      const report = await acme.http.GET('/v1/analytics/churn-reasons', { query: { from: '2026-04-01', to: '2026-04-30' } });
      expect(report.status, report.text).toBe(200);
      expect(report.body.data).toMatchObject({ total: 0, offers_accepted: 1 });
      expect(report.body.data.reasons).toContainEqual({ reason: 'too_expensive', count: 0, offers_accepted: 1 });
      await acme.http.POST('/v1/subscriptions/{id}/cancel', { path: { id: sub.id }, body: { at_period_end: false } });
    });

    it('shows the offer on the cancellation page; accepting keeps the subscription, declining cancels as before', async () => {
      const { acme, plan } = await setup();
      await offer(acme, { coupon: 'STAY20', reasons: ['unused'], message: 'We would hate to see you go.' });

      const keeper = await subscribed(acme, plan.id);
      const preview = await form(`/portal/subscriptions/${keeper.sub.id}/cancel`, keeper.session, { step: 'preview', reason: 'unused' });
      expect(preview.status, preview.text).toBe(200);
      expect(preview.text).toContain('We would hate to see you go.');
      expect(preview.text).toContain('<strong>Stay with us</strong>: 20% off for 3 months.');
      expect(preview.text).toContain(`action="/portal/subscriptions/${keeper.sub.id}/retention-offer"`);
      expect(preview.text).toContain('No thanks, cancel');
      const kept = await form(`/portal/subscriptions/${keeper.sub.id}/retention-offer`, keeper.session, { reason: 'unused', feedback: 'Busy quarter' });
      expect(kept.status, kept.text).toBe(303);
      expect(kept.headers.location).toBe('/portal?notice=offer_accepted');
      expect(await getSubscription(acme, keeper.sub.id)).toMatchObject({ status: 'active', cancel_at_period_end: false });

      // A reason without an offer: the cancellation as before.
      const leaver = await subscribed(acme, plan.id);
      const plain = await form(`/portal/subscriptions/${leaver.sub.id}/cancel`, leaver.session, { step: 'preview', reason: 'switched_service' });
      expect(plain.text).not.toContain('An offer to stay');
      expect(plain.text).toContain('Confirm cancellation');

      // Declining the offer: "No thanks, cancel" confirms the cancellation (at period end, the tenant's default).
      const decliner = await subscribed(acme, plan.id);
      const shown = await form(`/portal/subscriptions/${decliner.sub.id}/cancel`, decliner.session, { step: 'preview', reason: 'unused' });
      expect(shown.text).toContain('An offer to stay');
      const declined = await form(`/portal/subscriptions/${decliner.sub.id}/cancel`, decliner.session, { step: 'confirm', reason: 'unused' });
      expect(declined.status, declined.text).toBe(303);
      expect(await getSubscription(acme, decliner.sub.id)).toMatchObject({ cancel_at_period_end: true, cancellation_reason: 'unused' });

      const report = await acme.http.GET('/v1/analytics/churn-reasons', { query: { from: '2026-04-01', to: '2026-04-30' } });
      expect(report.body.data).toMatchObject({ total: 1, offers_accepted: 1 });
      expect(report.body.data.reasons[0]).toEqual({ reason: 'unused', count: 1, offers_accepted: 1 });
    });

    it('offers nothing where the tenant disables portal cancellation, nor to a subscription with a discount in force', async () => {
      const { acme, plan } = await setup();
      await offer(acme, { coupon: 'STAY20', reasons: ['too_expensive'] });
      const discounted = await subscribed(acme, plan.id);
      const other = await acme.http.POST('/v1/coupons', { body: { code: 'LOYAL5', percent_off: 5, duration: 'forever' } });
      expect(
        (await acme.http.POST('/v1/subscriptions/{id}/discount', { path: { id: discounted.sub.id }, body: { coupon: other.body.data.code } })).status,
      ).toBe(200);
      expect(
        (await portal('GET', `/portal/api/subscriptions/${discounted.sub.id}/retention-offer?reason=too_expensive`, discounted.session)).body.data,
      ).toBeNull();
      const refused = await portal('POST', `/portal/api/subscriptions/${discounted.sub.id}/retention-offer`, discounted.session, { reason: 'too_expensive' });
      expect(refused.status).toBe(409);
      expect(refused.body.error.message).toContain('already has a discount');

      expect((await acme.http.PATCH('/v1/settings', { body: { portal_cancellation: 'disabled' } })).status).toBe(200);
      const plain = await subscribed(acme, plan.id);
      const disabled = await portal('GET', `/portal/api/subscriptions/${plain.sub.id}/retention-offer?reason=too_expensive`, plain.session);
      expect(disabled.status).toBe(403);
      expect(disabled.body.error.reason).toBe('portal_action_disabled');
    });
  });
});
