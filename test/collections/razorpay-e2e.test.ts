/**
 * Razorpay end to end through Kosh's API (DESIGN §11, docs/decisions/0050): a Razorpay connection,
 * a saved recurring token (an e-mandate: pre-debit notice, then a debit that stays pending until
 * the bank answers), `POST /v1/invoices/{id}/pay`, a charge_automatically invoice, the inbound
 * `payment.captured` webhook that settles it, a failed debit, and a refund — against the local
 * Razorpay-compatible server, asserting what Kosh sent (paths, Basic auth, JSON bodies, the
 * order's receipt that makes a retry find the same order).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRazorpayServer, type RazorpayServer } from '../support/razorpay-server.js';
import { startTestKosh, type Tenant, type TestKosh } from '../support/harness.js';

const HOUR = 3_600_000;
let server: RazorpayServer;
let t: TestKosh;
let tenant: Tenant;
let connection: string;
const email = 'accounts@asha.example.in';
const contact = '+919900000001';

beforeAll(async () => {
  server = await startRazorpayServer();
  t = await startTestKosh({ env: { KOSH_RAZORPAY_API_BASE: server.url } });
  tenant = await t.registerTenant();
  const res = await tenant.http.POST('/v1/gateway-connections', {
    body: {
      provider: 'razorpay',
      credentials: { key_id: server.keyId, key_secret: server.keySecret, webhook_secret: server.webhookSecret },
      currencies: ['INR'],
    },
  });
  expect(res.status, res.text).toBe(201);
  connection = res.body.data.id;
});
afterAll(async () => {
  await t.close();
  await server.close();
});

const basic = () => `Basic ${Buffer.from(`${server.keyId}:${server.keySecret}`).toString('base64')}`;

async function customerWithToken(
  outcome?: Parameters<RazorpayServer['addToken']>[0]['outcome'],
  n = 0,
): Promise<{ customer: string; pm: string; token: string }> {
  const mail = `${n}.${email}`;
  const created = await tenant.http.POST('/v1/customers', {
    body: {
      email: mail,
      name: 'Asha Rao',
      phone: contact,
      billing_address: { state_code: '29', country: 'IN' },
    },
  });
  expect(created.status, created.text).toBe(201);
  const { tokenId } = server.addToken({ email: mail, contact, method: 'card', network: 'Visa', last4: '1111', ...(outcome ? { outcome } : {}) });
  const saved = await tenant.http.POST('/v1/customers/{id}/payment-methods', { path: { id: created.body.data.id }, body: { token: tokenId } });
  expect(saved.status, saved.text).toBe(201);
  expect(saved.body.data).toMatchObject({ gateway: 'razorpay', type: 'card', last4: '1111', is_default: true });
  return { customer: created.body.data.id, pm: saved.body.data.id, token: tokenId };
}

async function invoice(customer: string, amount: number, collection: 'send_invoice' | 'charge_automatically' = 'send_invoice') {
  const res = await tenant.http.POST('/v1/invoices', {
    body: {
      customer_id: customer,
      currency: 'INR',
      collection_method: collection,
      lines: [{ description: 'Seats', unit_amount: amount }],
      auto_finalize: true,
    },
  });
  expect(res.status, res.text).toBe(201);
  return res.body.data as { id: string; amount_due: number; total: number };
}

const attemptsOf = async (invoiceId: string) =>
  (await tenant.http.GET('/v1/invoices/{id}/payment-attempts', { path: { id: invoiceId } })).body.data as {
    id: string;
    status: string;
    failure_code: string | null;
  }[];
const sent = (method: string, path: string) => server.requests.filter((r) => r.method === method && r.path === path);

async function deliver(event: string, entities: Parameters<RazorpayServer['webhook']>[1], eventId: string) {
  const { rawBody, headers } = server.webhook(event, entities, { eventId });
  const res = await t.kosh.app.inject({
    method: 'POST',
    url: `/webhooks/gateways/razorpay/${connection}`,
    headers: { ...headers, 'content-type': 'application/json' },
    payload: rawBody,
  });
  return res;
}

describe('razorpay through the API', () => {
  it('pays through /pay on a mandate: notice first, a recurring debit on an order after 24 h, captured by the webhook; refunds', async () => {
    const { customer, pm, token } = await customerWithToken({ kind: 'pending' });
    const inv = await invoice(customer, 100_000);
    server.requests.length = 0;
    const res = await tenant.http.POST('/v1/invoices/{id}/pay', { path: { id: inv.id }, body: { payment_method_id: pm } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.status).toBe('open');
    // RBI pre-debit notice: nothing is sent to Razorpay before 24 hours.
    await t.kosh.worker.drain();
    expect(sent('POST', '/v1/payments/create/recurring')).toHaveLength(0);
    t.clock.advance(25 * HOUR);
    await t.kosh.worker.drain();
    const [attempt] = await attemptsOf(inv.id);
    expect(attempt!.status).toBe('pending');
    const [order] = sent('POST', '/v1/orders');
    expect(order!.headers.authorization).toBe(basic());
    expect(order!.body).toMatchObject({ amount: inv.total, currency: 'INR', payment_capture: true, notes: { invoice_id: inv.id, attempt_id: attempt!.id } });
    expect(String((order!.body as { receipt: string }).receipt)).toMatch(/^kosh_[0-9a-f]{32}$/);
    const [debit] = sent('POST', '/v1/payments/create/recurring');
    expect(debit!.headers.authorization).toBe(basic());
    expect(debit!.body).toMatchObject({ token, amount: inv.total, currency: 'INR', recurring: '1', email: `0.${email}` });
    const paymentId = [...server.payments.values()].find((p) => p.order_id === (debit!.body as { order_id: string }).order_id)!.id;

    // The bank answers; Razorpay tells Kosh by webhook — twice (it redelivers): applied once.
    const captured = server.settlePayment(paymentId, 'captured');
    const first = await deliver('payment.captured', { payment: captured }, 'evt_rzp_captured_1');
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json()).toMatchObject({ duplicate: false });
    expect((await deliver('payment.captured', { payment: captured }, 'evt_rzp_captured_1')).statusCode).toBe(200);
    expect((await tenant.http.GET('/v1/invoices/{id}', { path: { id: inv.id } })).body.data).toMatchObject({ status: 'paid', amount_due: 0 });
    const payments = (await tenant.http.GET('/v1/payments', { query: { invoice_id: inv.id } })).body.data;
    expect(payments).toEqual([expect.objectContaining({ gateway: 'razorpay', gateway_payment_id: paymentId, amount: inv.total })]);
    // A bad signature → 400, nothing changes.
    const forged = server.webhook('payment.captured', { payment: captured }, { eventId: 'evt_rzp_forged', secret: 'not-the-secret' });
    const bad = await t.kosh.app.inject({
      method: 'POST',
      url: `/webhooks/gateways/razorpay/${connection}`,
      headers: { ...forged.headers, 'content-type': 'application/json' },
      payload: forged.rawBody,
    });
    expect(bad.statusCode).toBe(400);

    server.requests.length = 0;
    const refund = await tenant.http.POST('/v1/payments/{id}/refunds', { path: { id: payments[0]!.id }, body: { amount: 20_000, reason: 'Seat removed' } });
    expect(refund.status, refund.text).toBe(201);
    await t.kosh.worker.drain();
    const [refundCall] = sent('POST', `/v1/payments/${paymentId}/refund`);
    expect(refundCall!.headers.authorization).toBe(basic());
    expect(refundCall!.body).toMatchObject({ amount: 20_000, speed: 'normal' });
    const note = (await tenant.http.GET('/v1/credit-notes/{id}', { path: { id: refund.body.data.credit_note_id! } })).body.data;
    expect(note).toMatchObject({ type: 'refund', refund_status: 'processed' });
  });

  it('charges a charge_automatically invoice by the job after the notice; a failed debit arrives by webhook as invoice.payment_failed', async () => {
    const { customer } = await customerWithToken({ kind: 'pending' }, 1);
    const inv = await invoice(customer, 50_000, 'charge_automatically');
    await t.kosh.worker.drain();
    server.requests.length = 0;
    t.clock.advance(25 * HOUR);
    await t.kosh.worker.drain();
    const debits = sent('POST', '/v1/payments/create/recurring');
    expect(debits).toHaveLength(1);
    const paymentId = [...server.payments.values()].find((p) => p.order_id === (debits[0]!.body as { order_id: string }).order_id)!.id;
    const failed = server.settlePayment(paymentId, 'failed');
    const res = await deliver('payment.failed', { payment: failed }, 'evt_rzp_failed_1');
    expect(res.statusCode, res.body).toBe(200);
    const [attempt] = await attemptsOf(inv.id);
    expect(attempt!.status).toBe('failed');
    expect(attempt!.failure_code).toBeTruthy();
    const invoiceNow = (await tenant.http.GET('/v1/invoices/{id}', { path: { id: inv.id } })).body.data;
    expect(invoiceNow.status).toBe('open');
    expect(invoiceNow.last_payment_error!.code).toBe(attempt!.failure_code);
    const events = (await tenant.http.GET('/v1/events', { query: { object_id: inv.id, limit: 100 } })).body.data.map((e: { type: string }) => e.type);
    expect(events).toContain('invoice.payment_failed');
    // Later sweeps never debit the mandate again for that attempt.
    t.clock.advance(2 * HOUR);
    await t.kosh.worker.drain();
    expect(sent('POST', '/v1/payments/create/recurring')).toHaveLength(1);
  });
});

describe('razorpay webhook deduplication', () => {
  it('applies a signed body once, whatever X-Razorpay-Event-Id (unsigned) comes with it', async () => {
    const { customer, pm } = await customerWithToken({ kind: 'pending' }, 7);
    const inv = await invoice(customer, 30_000);
    expect((await tenant.http.POST('/v1/invoices/{id}/pay', { path: { id: inv.id }, body: { payment_method_id: pm } })).status).toBe(200);
    t.clock.advance(25 * HOUR);
    await t.kosh.worker.drain();
    const [debit] = sent('POST', '/v1/payments/create/recurring').slice(-1);
    const paymentId = [...server.payments.values()].find((p) => p.order_id === (debit!.body as { order_id: string }).order_id)!.id;
    const failed = server.settlePayment(paymentId, 'failed');
    const delivery = server.webhook('payment.failed', { payment: failed }, { eventId: 'evt_rzp_once' });
    const post = (eventId: string) =>
      t.kosh.app.inject({
        method: 'POST',
        url: `/webhooks/gateways/razorpay/${connection}`,
        headers: { ...delivery.headers, 'x-razorpay-event-id': eventId },
        payload: delivery.rawBody,
      });
    const once = await post('evt_rzp_once');
    expect(once.statusCode, once.body).toBe(200);
    expect(once.json()).toMatchObject({ duplicate: false, type: 'payment.failed' });
    const replayed = await post('evt_rzp_replayed_with_a_new_header');
    expect(replayed.statusCode).toBe(200);
    expect(replayed.json()).toMatchObject({ duplicate: true });
    expect((await attemptsOf(inv.id)).filter((a) => a.status === 'failed')).toHaveLength(1);
  });
});
