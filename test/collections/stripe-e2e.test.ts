/**
 * Stripe end to end through Kosh's API (DESIGN §11, docs/decisions/0050): a Stripe connection,
 * saved PaymentMethods, `POST /v1/invoices/{id}/pay`, a charge_automatically invoice charged by
 * the job after finalizing, a decline, a refund — against the local Stripe-compatible server,
 * asserting what Kosh sent (paths, Bearer auth, form bodies, Idempotency-Key) as Stripe's API
 * reference describes it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStripeServer, type StripeServer } from '../support/stripe-server.js';
import { startTestKosh, type Tenant, type TestKosh } from '../support/harness.js';

let server: StripeServer;
let t: TestKosh;
let tenant: Tenant;
let customer: string;

beforeAll(async () => {
  server = await startStripeServer();
  t = await startTestKosh({ env: { KOSH_STRIPE_API_BASE: server.url } });
  tenant = await t.registerTenant();
  const connection = await tenant.http.POST('/v1/gateway-connections', {
    body: {
      provider: 'stripe',
      credentials: { secret_key: server.secretKey, webhook_secret: server.webhookSecret },
      currencies: ['USD'],
    },
  });
  expect(connection.status, connection.text).toBe(201);
  const created = await tenant.http.POST('/v1/customers', {
    body: {
      email: 'ops@acme.example',
      name: 'Acme Inc',
      billing_address: { line1: '1 Congress Ave', city: 'Austin', country: 'US' },
    },
  });
  customer = created.body.data.id;
});
afterAll(async () => {
  await t.close();
  await server.close();
});

async function method(token: string, setDefault = false): Promise<string> {
  const res = await tenant.http.POST('/v1/customers/{id}/payment-methods', { path: { id: customer }, body: { token, set_default: setDefault } });
  expect(res.status, res.text).toBe(201);
  expect(res.body.data).toMatchObject({ gateway: 'stripe', type: 'card' });
  return res.body.data.id;
}

async function invoice(amount: number, collection: 'send_invoice' | 'charge_automatically' = 'send_invoice') {
  const res = await tenant.http.POST('/v1/invoices', {
    body: {
      customer_id: customer,
      currency: 'USD',
      collection_method: collection,
      lines: [{ description: 'Seats', unit_amount: amount }],
      auto_finalize: true,
    },
  });
  expect(res.status, res.text).toBe(201);
  return res.body.data as { id: string; amount_due: number };
}

const intentRequests = () => server.requests.filter((r) => r.method === 'POST' && r.path === '/v1/payment_intents');
const attemptsOf = async (invoiceId: string) =>
  (await tenant.http.GET('/v1/invoices/{id}/payment-attempts', { path: { id: invoiceId } })).body.data as { id: string; status: string }[];

describe('stripe through the API', () => {
  it('pays an invoice with POST /pay: a confirmed off-session PaymentIntent under the attempt key, Bearer auth', async () => {
    const pm = await method('pm_card_visa');
    const inv = await invoice(4_900);
    server.requests.length = 0;
    const res = await tenant.http.POST('/v1/invoices/{id}/pay', { path: { id: inv.id }, body: { payment_method_id: pm } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toMatchObject({ status: 'paid', amount_due: 0 });
    const [attempt] = await attemptsOf(inv.id);
    expect(attempt).toMatchObject({ status: 'succeeded', gateway: 'stripe', amount: inv.amount_due || 4_900, currency: 'USD' });
    const [sent] = intentRequests();
    expect(sent!.headers.authorization).toBe(`Bearer ${server.secretKey}`);
    expect(sent!.headers['idempotency-key']).toBe(`kosh_att_${attempt!.id}`);
    expect(sent!.body).toMatchObject({
      amount: String(4_900),
      currency: 'usd',
      confirm: 'true',
      off_session: 'true',
      automatic_payment_methods: { enabled: 'true', allow_redirects: 'never' },
      metadata: { invoice_id: inv.id, attempt_id: attempt!.id },
    });
    expect(intentRequests()).toHaveLength(1);
    const payments = (await tenant.http.GET('/v1/payments', { query: { invoice_id: inv.id } })).body.data;
    expect(payments).toEqual([expect.objectContaining({ gateway: 'stripe', payment_type: 'card', amount: 4_900 })]);
  });

  it('answers 200 with the provider code when Stripe declines, and invoice.payment_failed', async () => {
    const pm = await method('pm_card_chargeDeclined');
    const inv = await invoice(2_500);
    const res = await tenant.http.POST('/v1/invoices/{id}/pay', { path: { id: inv.id }, body: { payment_method_id: pm } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.status).toBe('open');
    expect(res.body.data.last_payment_error!.code).toBe('card_declined');
    const [attempt] = (await tenant.http.GET('/v1/invoices/{id}/payment-attempts', { path: { id: inv.id } })).body.data;
    expect(attempt).toMatchObject({ status: 'failed', failure_code: 'card_declined' });
    const events = (await tenant.http.GET('/v1/events', { query: { object_id: inv.id, limit: 100 } })).body.data.map((e: { type: string }) => e.type);
    expect(events).toContain('invoice.payment_failed');
  });

  it('charges a charge_automatically invoice on the default method by the job after finalizing, once', async () => {
    await method('pm_card_mastercard', true);
    server.requests.length = 0;
    const inv = await invoice(9_900, 'charge_automatically');
    // Finalizing never charges inside its transaction: the job does.
    expect(intentRequests()).toHaveLength(0);
    await t.kosh.worker.drain();
    expect((await tenant.http.GET('/v1/invoices/{id}', { path: { id: inv.id } })).body.data.status).toBe('paid');
    const [attempt] = await attemptsOf(inv.id);
    const sent = intentRequests();
    expect(sent).toHaveLength(1);
    expect(sent[0]!.headers['idempotency-key']).toBe(`kosh_att_${attempt!.id}`);
    expect(sent[0]!.body).toMatchObject({ amount: '9900', currency: 'usd', off_session: 'true', confirm: 'true' });
    await t.kosh.worker.drain();
    expect(intentRequests()).toHaveLength(1);
  });

  it('refunds through POST /v1/refunds under the refund key and follows the answer', async () => {
    const pm = await method('pm_card_visa');
    const inv = await invoice(6_000);
    await tenant.http.POST('/v1/invoices/{id}/pay', { path: { id: inv.id }, body: { payment_method_id: pm } });
    const [payment] = (await tenant.http.GET('/v1/payments', { query: { invoice_id: inv.id } })).body.data;
    server.requests.length = 0;
    const refund = await tenant.http.POST('/v1/payments/{id}/refunds', { path: { id: payment!.id }, body: { amount: 1_000, reason: 'Seat removed' } });
    expect(refund.status, refund.text).toBe(201);
    await t.kosh.worker.drain();
    const [sent] = server.requests.filter((r) => r.method === 'POST' && r.path === '/v1/refunds');
    expect(sent!.headers['idempotency-key']).toBe(`kosh_ref_${refund.body.data.id}`);
    expect(sent!.headers.authorization).toBe(`Bearer ${server.secretKey}`);
    expect(sent!.body).toMatchObject({ payment_intent: payment!.gateway_payment_id, amount: '1000' });
    const note = (await tenant.http.GET('/v1/credit-notes/{id}', { path: { id: refund.body.data.credit_note_id! } })).body.data;
    expect(note).toMatchObject({ type: 'refund', refund_status: 'processed' });
  });
});
