import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestKosh, type ApiResponse, type Tenant, type TestKosh } from '../../../test/support/harness.js';
import { openPortalSession } from '../../../test/support/portal.js';
import { createCustomer, createPlan, getSubscription, gstin, invoicesOf, karnatakaTenant, pay, subscribe } from '../../../test/subscriptions/helpers.js';

/**
 * The portal's self-service actions (issue #33, decision 0500), each the API's own flow. Every case
 * starts a monthly 1 000.00 + 18% GST subscription (Karnataka to Karnataka: CGST 9% + SGST 9%) on
 * 2026-04-01 and acts on 2026-04-11: 20 of April's 30 days are unused, so the unused part of the
 * paid 1 180.00 is 118 000 × 20 / 30 = 78 666.67 → 78 667 paise.
 */
let t: TestKosh;
let acme: Tenant;
let basic: { id: string; name: string }; // 1 000.00 a month
let pro: { id: string; name: string }; // 2 000.00 a month

type Session = { cookie: string; csrf: string };

const signInAs = (customerId: string): Promise<Session> => openPortalSession(t, acme, customerId);

function portal(method: 'GET' | 'POST' | 'PATCH', url: string, s: Session, body?: unknown): Promise<ApiResponse> {
  return t.call({
    method,
    url,
    headers: { cookie: s.cookie, ...(s.csrf ? { 'x-csrf-token': s.csrf } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
  });
}

async function settings(patch: Record<string, unknown>) {
  const res = await acme.http.PATCH('/v1/settings', { body: patch });
  expect(res.status, res.text).toBe(200);
  return res.body.data;
}

/** A paid (or open) subscription of a new customer on 2026-04-01, the clock then at 2026-04-11. */
async function subscribed(options: { paid?: boolean; quantity?: number } = {}) {
  const customer = await createCustomer(acme);
  const sub = await subscribe(acme, { customer_id: customer, plan_id: basic.id, quantity: options.quantity ?? 1 });
  const [invoice] = await invoicesOf(acme, sub.id);
  if (options.paid ?? true) await pay(acme, invoice);
  t.clock.set('2026-04-11T00:00:00Z');
  return { customer, sub, invoice, session: await signInAs(customer) };
}

beforeAll(async () => {
  t = await startTestKosh();
  acme = await karnatakaTenant(t);
  basic = await createPlan(acme, { amount: 100_000 });
  pro = await createPlan(acme, { amount: 200_000 });
});
afterAll(() => t?.close());
beforeEach(async () => {
  t.clock.set('2026-04-01T00:00:00Z');
  await settings({ portal_cancellation: 'at_period_end', portal_plan_change: false, portal_quantity_change: false, portal_billing_details: true });
});

describe('portal self-service', () => {
  it('answers the tenant portal permissions; the defaults are cancel at period end and billing details only', async () => {
    const fresh = await t.registerTenant();
    const defaults = (await fresh.http.GET('/v1/settings')).body.data;
    expect(defaults).toMatchObject({
      portal_cancellation: 'at_period_end',
      portal_plan_change: false,
      portal_quantity_change: false,
      portal_billing_details: true,
    });
    const { session } = await subscribed();
    expect((await portal('GET', '/portal/api/permissions', session)).body.data).toEqual({
      cancellation: 'at_period_end',
      plan_change: false,
      quantity_change: false,
      billing_details: true,
    });
    const bad = await acme.api('PATCH', '/v1/settings', { portal_cancellation: 'whenever' });
    expect(bad.status).toBe(400);
  });

  it('pays any open invoice, not only an overdue one, through the hosted checkout; another customer’s invoice is a 404', async () => {
    const { invoice, session } = await subscribed({ paid: false });
    // Issued 2026-04-01, due 30 days later: open and not overdue on 2026-04-11.
    expect(invoice).toMatchObject({ status: 'open', amount_due: 118_000, due_date: '2026-05-01T00:00:00.000Z' });
    const page = await t.call({ method: 'GET', url: '/portal', headers: { cookie: session.cookie } });
    expect(page.text).toContain(`action="/portal/invoices/${invoice.id}/pay"`);
    expect(page.text).toContain('₹1,180.00');
    expect(page.text).not.toContain('INR 1,180.00');
    const res = await portal('POST', `/portal/api/invoices/${invoice.id}/checkout`, session);
    expect(res.status, res.text).toBe(201);
    expect(res.body.data.url).toMatch(/\/checkout\//);
    const checkout = await t.call({ method: 'GET', url: new URL(res.body.data.url).pathname + new URL(res.body.data.url).search });
    expect(checkout.text).toContain('₹1,180.00');
    const other = await subscribed({ paid: false });
    expect((await portal('POST', `/portal/api/invoices/${other.invoice.id}/checkout`, session)).status).toBe(404);
  });

  it('changes seats only where the tenant allows, with the API’s proration, previewed first', async () => {
    const { sub, session } = await subscribed();
    const refused = await portal('POST', `/portal/api/subscriptions/${sub.id}/quantity`, session, { quantity: 2 });
    expect(refused.status).toBe(403);
    expect(refused.body.error.reason).toBe('portal_action_disabled');
    await settings({ portal_quantity_change: true });

    const preview = await portal('POST', `/portal/api/subscriptions/${sub.id}/quantity`, session, { quantity: 2, preview: true });
    expect(preview.status, preview.text).toBe(200);
    const api = await acme.http.PATCH('/v1/subscriptions/{id}', { path: { id: sub.id }, body: { quantity: 2, preview: true } });
    // The same flow: the same figures as the API's own preview (ids aside, which a rolled-back preview draws anew).
    expect(preview.body.data.proration).toEqual(api.body.data.proration);
    expect(preview.body.data.proration).toMatchObject({
      previous_quantity: 1,
      quantity: 2,
      remaining_days: 20,
      period_days: 30,
      unused_value: 78_667,
      new_charge: 133_334,
    });
    // A seat for the rest of April: 100 000 × 20 / 30 = 66 666.67 → 66 667; two seats 133 334 net;
    // GST 9% each half: 12 000.06 → 12 000 twice; total 157 334, less the 78 667 credit: 78 667 due.
    expect(preview.body.data.invoice).toMatchObject({
      subtotal: 133_334,
      cgst_amount: 12_000,
      sgst_amount: 12_000,
      total: 157_334,
      amount_credited: 78_667,
      amount_due: 78_667,
    });
    expect((await getSubscription(acme, sub.id)).quantity).toBe(1);

    const done = await portal('POST', `/portal/api/subscriptions/${sub.id}/quantity`, session, { quantity: 2 });
    expect(done.status, done.text).toBe(200);
    const after = await getSubscription(acme, sub.id);
    expect(after.quantity).toBe(2);
    expect((await invoicesOf(acme, sub.id)).at(-1)).toMatchObject({ billing_reason: 'subscription_update', total: 157_334, amount_due: 78_667 });
  });

  it('changes the plan only where the tenant allows, offering active plans in its currency, prorated as the API', async () => {
    const { sub, session } = await subscribed();
    expect((await portal('GET', `/portal/api/subscriptions/${sub.id}/plans`, session)).body.data).toEqual([]);
    expect((await portal('POST', `/portal/api/subscriptions/${sub.id}/change-plan`, session, { plan_id: pro.id })).status).toBe(403);
    await settings({ portal_plan_change: true });
    const choices = (await portal('GET', `/portal/api/subscriptions/${sub.id}/plans`, session)).body.data;
    expect(choices).toContainEqual({ id: pro.id, name: pro.name, amount: 200_000, interval: 'month' });
    expect(choices.map((c: { id: string }) => c.id)).not.toContain(basic.id);

    const preview = await portal('POST', `/portal/api/subscriptions/${sub.id}/change-plan`, session, { plan_id: pro.id, preview: true });
    expect(preview.status, preview.text).toBe(200);
    // 200 000 × 20 / 30 = 133 333 net for the rest of April; the unused 78 667 credited on it.
    expect(preview.body.data).toMatchObject({
      preview: true,
      proration: { unused_credit: 78_667, new_charge: 133_333 },
      invoice: { total: 157_333, amount_due: 78_666 },
    });
    expect((await getSubscription(acme, sub.id)).plan_id).toBe(basic.id);
    const done = await portal('POST', `/portal/api/subscriptions/${sub.id}/change-plan`, session, { plan_id: pro.id });
    expect(done.status, done.text).toBe(200);
    expect((await getSubscription(acme, sub.id)).plan_id).toBe(pro.id);
    // A plan the portal does not offer (the one it is on now) is refused.
    expect((await portal('POST', `/portal/api/subscriptions/${sub.id}/change-plan`, session, { plan_id: pro.id })).status).toBe(400);
  });

  it('cancels at period end by default, with a reason and feedback, recorded as the API records them', async () => {
    const { sub, session } = await subscribed();
    const preview = await portal('POST', `/portal/api/subscriptions/${sub.id}/cancel`, session, { reason: 'too_expensive', preview: true });
    expect(preview.status, preview.text).toBe(200);
    expect(preview.body.data).toMatchObject({
      cancel_at_period_end: true,
      current_period_end: '2026-05-01T00:00:00.000Z',
      preview: { credit_note: null, final_invoice: null, refundable_amount: 0 },
    });
    expect((await getSubscription(acme, sub.id)).cancel_at_period_end).toBe(false);
    const done = await portal('POST', `/portal/api/subscriptions/${sub.id}/cancel`, session, { reason: 'too_expensive', feedback: 'Cheaper elsewhere' });
    expect(done.status, done.text).toBe(200);
    expect(await getSubscription(acme, sub.id)).toMatchObject({
      status: 'active',
      cancel_at_period_end: true,
      cancellation_reason: 'too_expensive',
      cancellation_feedback: 'Cheaper elsewhere',
    });
    // The audit log names the customer as the actor; the preview wrote nothing, so one record.
    const audit = (await acme.http.GET('/v1/audit-log', { query: { object_id: sub.id, action: 'subscription.cancel' } })).body.data;
    expect(audit).toEqual([
      expect.objectContaining({
        actor: { type: 'customer', id: sub.customer_id, label: 'customer portal' },
        action: 'subscription.cancel',
        object_type: 'subscription',
        object_id: sub.id,
      }),
    ]);
  });

  it('cancels now with the unused time credited where the tenant says so; the preview shows the credit and writes nothing', async () => {
    await settings({ portal_cancellation: 'immediately' });
    const { sub, session, customer } = await subscribed();
    const preview = await portal('POST', `/portal/api/subscriptions/${sub.id}/cancel`, session, { reason: 'missing_features', preview: true });
    expect(preview.status, preview.text).toBe(200);
    expect(preview.body.data.proration).toMatchObject({ remaining_days: 20, period_days: 30, unused_value: 78_667, unused_credit: 78_667 });
    expect(preview.body.data.preview).toMatchObject({ final_invoice: null, refundable_amount: 78_667 });
    expect(preview.body.data.preview.credit_note).toMatchObject({ amount: 78_667 });
    expect((await getSubscription(acme, sub.id)).status).toBe('active');

    const done = await portal('POST', `/portal/api/subscriptions/${sub.id}/cancel`, session, { reason: 'missing_features' });
    expect(done.status, done.text).toBe(200);
    expect(await getSubscription(acme, sub.id)).toMatchObject({ status: 'canceled', cancellation_reason: 'missing_features' });
    const balance = (await acme.http.GET('/v1/customers/{id}/balance', { path: { id: customer } })).body.data;
    expect(balance.balances).toEqual([expect.objectContaining({ currency: 'INR', available: 78_667 })]);

    // The credit note and the statement: the note's PDF, and 786.67 issued, closing at 786.67.
    const notes = (await portal('GET', '/portal/api/credit-notes', session)).body.data;
    expect(notes).toEqual([expect.objectContaining({ amount: 78_667, customer_id: customer })]);
    const pdf = await portal('GET', `/portal/api/credit-notes/${notes[0].id}/pdf`, session);
    expect(pdf.status).toBe(200);
    expect(pdf.headers['content-type']).toBe('application/pdf');
    const statement = await portal('GET', '/portal/api/statement', session);
    expect(statement.status).toBe(200);
    expect(statement.headers['content-type']).toBe('text/csv; charset=utf-8');
    const lines = statement.text.trim().split('\r\n');
    expect(lines[0]).toBe('date,type,document,number,currency,amount,balance');
    expect(lines.slice(1).map((l) => l.split(',').slice(1))).toEqual([
      ['credit_note_issued', 'credit_note', notes[0].number, 'INR', '786.67', '786.67'],
      ['closing_balance', '', '', 'INR', '', '786.67'],
    ]);
    // Another customer's note is a 404.
    const other = await subscribed();
    expect((await portal('GET', `/portal/api/credit-notes/${notes[0].id}/pdf`, other.session)).status).toBe(404);
  });

  it('refuses to cancel where the tenant disabled it', async () => {
    await settings({ portal_cancellation: 'disabled' });
    const { sub, session } = await subscribed();
    const res = await portal('POST', `/portal/api/subscriptions/${sub.id}/cancel`, session, { reason: 'other' });
    expect(res.status).toBe(403);
    expect(res.body.error.reason).toBe('portal_action_disabled');
  });

  it('updates GSTIN, billing address and billing e-mail, validated as the API validates', async () => {
    const { customer, session } = await subscribed();
    const wrong = await portal('PATCH', '/portal/api/billing-details', session, { gstin: '29BBBBB2222B1ZZ' });
    const apiWrong = await acme.api('PATCH', `/v1/customers/${customer}`, { gstin: '29BBBBB2222B1ZZ' });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error.message).toBe(apiWrong.body.error.message);
    const valid = gstin('27AAPFU0939F1Z');
    const address = { line1: '4th floor, MG Road', city: 'Pune', state_code: '27', postal_code: '411001', country: 'IN' };
    const res = await portal('PATCH', '/portal/api/billing-details', session, { gstin: valid, billing_address: address, email: 'accounts@buyer.example.in' });
    expect(res.status, res.text).toBe(200);
    const stored = (await acme.http.GET('/v1/customers/{id}', { path: { id: customer } })).body.data;
    expect(stored).toMatchObject({ gstin: valid, email: 'accounts@buyer.example.in', billing_address: { ...address, line2: null } });
    const audit = (await acme.http.GET('/v1/audit-log', { query: { object_id: customer, action: 'customer.update' } })).body.data;
    expect(audit.map((a) => a.actor)).toEqual([{ type: 'customer', id: customer, label: 'customer portal' }]);
    // Fields outside billing details are not accepted.
    expect((await portal('PATCH', '/portal/api/billing-details', session, { name: 'Someone else' })).status).toBe(400);
    await settings({ portal_billing_details: false });
    expect((await portal('PATCH', '/portal/api/billing-details', session, { email: 'x@buyer.example.in' })).status).toBe(403);
  });
});
