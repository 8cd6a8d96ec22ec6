/**
 * A signed gateway webhook proves who sent it, not how much was paid (DESIGN §20, decision 0242):
 * a payment is applied only when its amount and currency are what Kosh asked for — the pending
 * attempt's (Razorpay, a mandate debit) or the hosted checkout session's (Stripe Checkout).
 * Otherwise nothing is applied, the event is kept for review and `payment.mismatch` is emitted;
 * the right payment, announced afterwards, still pays the invoice once.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCustomer, createInvoice, gstinFor } from '../support/billing.js';
import { startTestKosh, type Tenant, type TestKosh } from '../support/harness.js';
import { startRazorpayServer, type RazorpayServer } from '../support/razorpay-server.js';
import { startStripeServer, type StripeServer } from '../support/stripe-server.js';

const HOUR = 3_600_000;
let stripe: StripeServer;
let razorpay: RazorpayServer;
let t: TestKosh;
let tenant: Tenant;
const connections = { stripe: '', razorpay: '' };

beforeAll(async () => {
  stripe = await startStripeServer();
  razorpay = await startRazorpayServer();
  t = await startTestKosh({ env: { KOSH_STRIPE_API_BASE: stripe.url, KOSH_RAZORPAY_API_BASE: razorpay.url } });
  tenant = await t.registerTenant({ gstin: gstinFor('29') });
  for (const [provider, credentials, currency] of [
    ['stripe', { secret_key: stripe.secretKey, webhook_secret: stripe.webhookSecret }, 'USD'],
    ['razorpay', { key_id: razorpay.keyId, key_secret: razorpay.keySecret, webhook_secret: razorpay.webhookSecret }, 'INR'],
  ] as const) {
    const res = await tenant.http.POST('/v1/gateway-connections', { body: { provider, credentials, currencies: [currency] } });
    expect(res.status, res.text).toBe(201);
    connections[provider] = res.body.data.id;
  }
});
afterAll(async () => {
  await t?.close();
  await stripe?.close();
  await razorpay?.close();
});

async function deliver(provider: 'stripe' | 'razorpay', delivery: { rawBody: Buffer; headers: Record<string, string> }) {
  const res = await t.kosh.app.inject({
    method: 'POST',
    url: `/webhooks/gateways/${provider}/${connections[provider]}`,
    headers: { ...delivery.headers, 'content-type': 'application/json' },
    payload: delivery.rawBody,
  });
  expect(res.statusCode, res.body).toBe(200);
}

async function invoiceNow(id: string) {
  return (await tenant.http.GET('/v1/invoices/{id}', { path: { id } })).body.data;
}

async function paymentsOf(invoiceId: string) {
  return (await tenant.http.GET('/v1/payments', { query: { invoice_id: invoiceId } })).body.data as { amount: number; currency: string }[];
}

/** The `payment.mismatch` events about an invoice, ordered by reason. */
async function mismatchesOf(invoiceId: string) {
  const events = (await tenant.http.GET('/v1/events', { query: { type: 'payment.mismatch', limit: 100 } })).body.data as {
    data: { object: Record<string, unknown> };
  }[];
  return events
    .map((e) => e.data.object)
    .filter((o) => o.invoice_id === invoiceId)
    .sort((a, b) => String(a.reason).localeCompare(String(b.reason)));
}

async function reviewedEvents(connectionId: string) {
  const rows = await sql<{ event_id: string; review: { reason: string } }>`
    SELECT event_id, review FROM gateway_events WHERE tenant_id = ${tenant.tenantId} AND connection_id = ${connectionId} AND review IS NOT NULL
    ORDER BY received_at, event_id`.execute(t.database.db);
  return rows.rows;
}

describe('a signed payment webhook whose amount or currency is not what Kosh asked for', () => {
  it('Razorpay: "100 USD" captured for a pending ₹ debit pays nothing; the ₹ capture afterwards pays the invoice once', async () => {
    const customer = await createCustomer(tenant, { email: 'asha@example.in', phone: '+919900000001', billing_address: { state_code: '29', country: 'IN' } });
    const { tokenId } = razorpay.addToken({ email: 'asha@example.in', contact: '+919900000001', method: 'card', outcome: { kind: 'pending' } });
    const saved = await tenant.http.POST('/v1/customers/{id}/payment-methods', { path: { id: customer }, body: { token: tokenId } });
    expect(saved.status, saved.text).toBe(201);
    const invoice = await createInvoice(tenant, customer, [100_000], { auto_finalize: true });
    expect(invoice.total).toBe(118_000);
    expect((await tenant.http.POST('/v1/invoices/{id}/pay', { path: { id: invoice.id }, body: { payment_method_id: saved.body.data.id } })).status).toBe(200);
    t.clock.advance(25 * HOUR); // the RBI pre-debit notice, then the debit
    await t.kosh.worker.drain();
    const debit = razorpay.requests.find((r) => r.method === 'POST' && r.path === '/v1/payments/create/recurring')!;
    const paymentId = [...razorpay.payments.values()].find((p) => p.order_id === (debit.body as { order_id: string }).order_id)!.id;
    const captured = razorpay.settlePayment(paymentId, 'captured');

    await deliver('razorpay', razorpay.webhook('payment.captured', { payment: { ...captured, amount: 10_000, currency: 'USD' } }, { eventId: 'evt_usd' }));
    await deliver('razorpay', razorpay.webhook('payment.captured', { payment: { ...captured, amount: 100_000 } }, { eventId: 'evt_short' }));
    expect(await invoiceNow(invoice.id)).toMatchObject({ status: 'open', amount_paid: 0, amount_due: 118_000 });
    expect(await paymentsOf(invoice.id)).toEqual([]);
    const [attempt] = (await tenant.http.GET('/v1/invoices/{id}/payment-attempts', { path: { id: invoice.id } })).body.data;
    expect(attempt!.status).toBe('pending');
    expect(await mismatchesOf(invoice.id)).toEqual([
      // Razorpay events are known by what the signature covers (event, payment id, body hash), not by the unsigned event-id header.
      expect.objectContaining({
        event_id: expect.stringMatching(/^payment\.captured:/),
        reason: 'amount_mismatch',
        received: { amount: 100_000, currency: 'INR' },
      }),
      expect.objectContaining({
        object: 'gateway_event',
        provider: 'razorpay',
        event_id: expect.stringMatching(/^payment\.captured:/),
        reason: 'currency_mismatch',
        attempt_id: attempt!.id,
        gateway_payment_id: paymentId,
        expected: { amount: 118_000, currency: 'INR' },
        received: { amount: 10_000, currency: 'USD' },
      }),
    ]);
    expect((await reviewedEvents(connections.razorpay)).map((r) => r.review.reason).sort()).toEqual(['amount_mismatch', 'currency_mismatch']);

    await deliver('razorpay', razorpay.webhook('payment.captured', { payment: captured }, { eventId: 'evt_right' }));
    expect(await invoiceNow(invoice.id)).toMatchObject({ status: 'paid', amount_paid: 118_000, amount_due: 0 });
    expect(await paymentsOf(invoice.id)).toEqual([expect.objectContaining({ amount: 118_000, currency: 'INR' })]);
  });

  it('Stripe Checkout: a completed session for another amount or currency pays nothing; the right one pays once', async () => {
    const customer = await createCustomer(tenant, { name: 'Acme Inc', billing_address: { line1: '1 Congress Ave', city: 'Austin', country: 'US' } });
    const invoice = await createInvoice(tenant, customer, [25_000, 10_000], { currency: 'USD', auto_finalize: true });
    const created = await tenant.http.POST('/v1/invoices/{id}/checkout-sessions', { path: { id: invoice.id } });
    expect(created.status, created.text).toBe(201);
    const session = [...stripe.checkoutSessions.values()].find((s) => (s.metadata as Record<string, string>).invoice_id === invoice.id)!;
    expect(session.amount_total).toBe(35_000);
    const completed = (changes: Record<string, unknown>, id: string) =>
      stripe.webhook(
        'checkout.session.completed',
        { ...session, status: 'complete', payment_status: 'paid', payment_intent: 'pi_mismatch', ...changes },
        { at: t.clock.now(), id },
      );

    await deliver('stripe', completed({ amount_total: 100 }, 'evt_cs_cents'));
    await deliver('stripe', completed({ currency: 'eur' }, 'evt_cs_eur'));
    expect(await invoiceNow(invoice.id)).toMatchObject({ status: 'open', amount_paid: 0, amount_due: 35_000 });
    expect(await paymentsOf(invoice.id)).toEqual([]);
    expect(await mismatchesOf(invoice.id)).toEqual([
      expect.objectContaining({
        provider: 'stripe',
        event_id: 'evt_cs_cents',
        reason: 'amount_mismatch',
        checkout_session_id: created.body.data.id,
        attempt_id: null,
        expected: { amount: 35_000, currency: 'USD' },
        received: { amount: 100, currency: 'USD' },
      }),
      expect.objectContaining({ event_id: 'evt_cs_eur', reason: 'currency_mismatch', received: { amount: 35_000, currency: 'EUR' } }),
    ]);

    await deliver('stripe', completed({}, 'evt_cs_right'));
    expect(await invoiceNow(invoice.id)).toMatchObject({ status: 'paid', amount_paid: 35_000 });
    expect(await paymentsOf(invoice.id)).toEqual([expect.objectContaining({ amount: 35_000, currency: 'USD' })]);
  });
});
