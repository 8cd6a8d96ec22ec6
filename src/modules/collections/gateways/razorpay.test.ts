import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../../platform/config.js';
import { KoshError } from '../../../platform/errors.js';
import { startRazorpayServer, type RazorpayServer } from '../../../../test/support/razorpay-server.js';
import { GatewayWebhookSignatureError, type ChargeInput, type GatewayCallContext, type SavedPaymentMethod } from './gateway.js';
import { DEFAULT_GATEWAY_TIMEOUT_MS, gatewayApiBase, gatewayCallContext } from './gateway-config.js';
import { referenceFromKey } from './gateway-http.js';
import { razorpayAdapter } from './razorpay.js';

let server: RazorpayServer;
let attemptCounter = 0;

const customer = { id: 'c0ffee00-0000-7000-8000-000000000001', email: 'asha@example.in', name: 'Asha Rao', phone: '+919900000001' };

function ctx(overrides: { timeoutMs?: number; credentials?: Record<string, string> } = {}): GatewayCallContext {
  return gatewayCallContext({
    config: { razorpayApiBase: server.url, stripeApiBase: 'http://unused.invalid' },
    provider: 'razorpay',
    credentials: overrides.credentials ?? { key_id: server.keyId, key_secret: server.keySecret, webhook_secret: server.webhookSecret },
    now: new Date(),
    timeoutMs: overrides.timeoutMs,
  });
}

function chargeInput(paymentMethod: SavedPaymentMethod, amount = 49_900): ChargeInput {
  attemptCounter += 1;
  const attemptId = `0190aaaa-0000-7000-8000-${String(attemptCounter).padStart(12, '0')}`;
  return {
    idempotencyKey: `kosh_att_${attemptId}`,
    amount,
    currency: 'INR',
    paymentMethod,
    customer,
    description: 'Invoice INV-0001',
    metadata: { tenant_id: 'tenant-1', invoice_id: 'invoice-1', attempt_id: attemptId },
  };
}

async function savedToken(input: Parameters<RazorpayServer['addToken']>[0]): Promise<SavedPaymentMethod> {
  const { tokenId, customerId } = server.addToken(input);
  return razorpayAdapter.attachPaymentMethod(ctx(), {
    token: tokenId,
    customer: { ...customer, email: input.email, phone: input.contact ?? null },
    gatewayCustomerId: customerId,
  });
}

const card = () => savedToken({ email: customer.email, contact: customer.phone, method: 'card', network: 'Visa', last4: '1111' });

beforeAll(async () => {
  server = await startRazorpayServer();
});
afterAll(async () => {
  await server.close();
});
beforeEach(() => {
  server.clearFaults();
  server.requests.length = 0;
  server.refundMode = 'processed';
});

describe('razorpay gateway', () => {
  describe('configuration', () => {
    it('cuts requests at 10 s unless told otherwise and takes its base URL from KOSH_RAZORPAY_API_BASE', () => {
      expect(DEFAULT_GATEWAY_TIMEOUT_MS).toBe(10_000);
      expect(gatewayCallContext({ config: loadConfig({}), provider: 'razorpay', credentials: {}, now: new Date() })).toMatchObject({
        timeoutMs: 10_000,
        baseUrl: 'https://api.razorpay.com',
      });
      expect(gatewayApiBase(loadConfig({ KOSH_RAZORPAY_API_BASE: 'http://127.0.0.1:9/' }), 'razorpay')).toBe('http://127.0.0.1:9');
      expect(gatewayApiBase(loadConfig({}), 'stripe')).toBe('https://api.stripe.com');
    });
  });

  describe('attachPaymentMethod', () => {
    it('finds the customer by their details and saves the confirmed card token', async () => {
      const { tokenId, customerId } = server.addToken({
        email: 'ravi@example.in',
        contact: '+919900000002',
        method: 'card',
        network: 'MasterCard',
        last4: '4444',
      });
      const saved = await razorpayAdapter.attachPaymentMethod(ctx(), {
        token: tokenId,
        customer: { ...customer, email: 'ravi@example.in', phone: '+919900000002' },
        gatewayCustomerId: null,
      });
      expect(saved).toEqual({
        type: 'card',
        brand: 'MasterCard',
        last4: '4444',
        reference: tokenId,
        gatewayCustomerId: customerId,
        requiresPreDebitNotice: true,
      });
      const [createCustomer, listTokens] = server.requests;
      expect(createCustomer).toMatchObject({ method: 'POST', path: '/v1/customers' });
      expect(createCustomer!.headers.authorization).toBe(`Basic ${Buffer.from(`${server.keyId}:${server.keySecret}`).toString('base64')}`);
      expect(createCustomer!.headers['content-type']).toBe('application/json');
      expect(createCustomer!.body).toEqual({
        name: 'Asha Rao',
        email: 'ravi@example.in',
        contact: '+919900000002',
        fail_existing: '0',
        notes: { kosh_customer_id: customer.id },
      });
      expect(listTokens).toMatchObject({ method: 'GET', path: `/v1/customers/${customerId}/tokens` });
    });

    it('saves a UPI AutoPay token as a mandate that needs the pre-debit notice', async () => {
      const saved = await savedToken({ email: 'meera@example.in', method: 'upi' });
      expect(saved).toMatchObject({ type: 'upi_mandate', last4: null, requiresPreDebitNotice: true });
    });

    it('answers 404 for a token the customer does not hold', async () => {
      const { customerId } = server.addToken({ email: customer.email, contact: customer.phone, method: 'card' });
      const error = await razorpayAdapter
        .attachPaymentMethod(ctx(), { token: 'token_NotTheirs0001', customer, gatewayCustomerId: customerId })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(KoshError);
      expect((error as KoshError).status).toBe(404);
    });

    it('refuses with 400 when Razorpay rejects the credentials (401)', async () => {
      const error = await razorpayAdapter
        .attachPaymentMethod(ctx({ credentials: { key_id: server.keyId, key_secret: 'wrong' } }), { token: 'token_x', customer, gatewayCustomerId: 'cust_x' })
        .catch((e: unknown) => e);
      expect((error as KoshError).status).toBe(400);
      expect((error as KoshError).message).toMatch(/api key provided is invalid/);
    });
  });

  describe('charge', () => {
    it('opens an order keyed by the attempt and debits the saved token once', async () => {
      const method = await card();
      server.requests.length = 0;
      const input = chargeInput(method);
      const outcome = await razorpayAdapter.charge(ctx(), input);

      expect(outcome).toMatchObject({ status: 'succeeded', paymentType: 'card' });
      const paymentId = (outcome as { gatewayPaymentId: string }).gatewayPaymentId;
      expect(server.payments.get(paymentId)).toMatchObject({ status: 'captured', amount: 49_900, token_id: method.reference });

      const receipt = referenceFromKey(input.idempotencyKey);
      expect(receipt.length).toBeLessThanOrEqual(40);
      const [lookup, createOrder, recurring, fetchPayment] = server.requests;
      expect(lookup).toMatchObject({ method: 'GET', path: '/v1/orders' });
      expect(lookup!.query.get('receipt')).toBe(receipt);
      expect(createOrder).toMatchObject({ method: 'POST', path: '/v1/orders' });
      expect(createOrder!.body).toEqual({
        amount: 49_900,
        currency: 'INR',
        receipt,
        payment_capture: true,
        notes: { tenant_id: 'tenant-1', invoice_id: 'invoice-1', attempt_id: input.metadata.attempt_id, kosh_idempotency_key: input.idempotencyKey },
      });
      const orderId = [...server.orders.values()].find((o) => o.receipt === receipt)!.id;
      expect(recurring).toMatchObject({ method: 'POST', path: '/v1/payments/create/recurring' });
      expect(recurring!.body).toMatchObject({
        email: customer.email,
        contact: customer.phone,
        amount: 49_900,
        currency: 'INR',
        order_id: orderId,
        customer_id: method.gatewayCustomerId,
        token: method.reference,
        recurring: '1',
        notes: { attempt_id: input.metadata.attempt_id, kosh_idempotency_key: input.idempotencyKey },
      });
      expect(fetchPayment).toMatchObject({ method: 'GET', path: `/v1/payments/${paymentId}` });
    });

    it("answers failed with Razorpay's reason when the debit is declined", async () => {
      const method = await savedToken({
        email: 'dev@example.in',
        method: 'card',
        outcome: { kind: 'fail', reason: 'insufficient_funds', description: 'Payment failed due to insufficient balance' },
      });
      const outcome = await razorpayAdapter.charge(ctx(), chargeInput(method));
      expect(outcome).toMatchObject({ status: 'failed', failureCode: 'insufficient_funds', failureMessage: 'Payment failed due to insufficient balance' });
      expect(server.payments.get((outcome as { gatewayPaymentId: string }).gatewayPaymentId)?.status).toBe('failed');
    });

    it('answers pending for a UPI AutoPay debit the bank has not settled', async () => {
      const method = await savedToken({ email: 'upi@example.in', method: 'upi' });
      const outcome = await razorpayAdapter.charge(ctx(), chargeInput(method));
      expect(outcome).toMatchObject({ status: 'pending' });
      expect(outcome).toHaveProperty('gatewayPaymentId', expect.stringMatching(/^pay_/));
    });

    it('retries a 500 with the same order and debits once', async () => {
      const method = await card();
      server.fault({ method: 'POST', path: '/v1/payments/create/recurring', kind: 'status', status: 500 });
      const input = chargeInput(method);
      const outcome = await razorpayAdapter.charge(ctx(), input);
      expect(outcome).toMatchObject({ status: 'succeeded' });
      const sent = server.requestsTo('POST', '/v1/payments/create/recurring');
      expect(sent).toHaveLength(2);
      expect((sent[0]!.body as { order_id: string }).order_id).toBe((sent[1]!.body as { order_id: string }).order_id);
      expect(server.requestsTo('POST', '/v1/orders')).toHaveLength(1);
      expect([...server.payments.values()].filter((p) => p.notes.attempt_id === input.metadata.attempt_id)).toHaveLength(1);
    });

    it('waits out a 429 from Razorpay instead of failing the attempt', async () => {
      const method = await card();
      server.fault({
        method: 'GET',
        path: '/v1/orders',
        kind: 'status',
        status: 429,
        body: { error: { code: 'BAD_REQUEST_ERROR', description: 'Too many requests', source: 'NA', step: 'NA', reason: 'NA', metadata: {} } },
      });
      expect(await razorpayAdapter.charge(ctx(), chargeInput(method))).toMatchObject({ status: 'succeeded' });
      expect(server.requestsTo('GET', '/v1/orders')).toHaveLength(2);
    });

    it('after a 500 that hid a completed debit, finds that debit instead of debiting again', async () => {
      const method = await card();
      server.fault({ method: 'POST', path: '/v1/payments/create/recurring', kind: 'status', status: 502, afterProcessing: true });
      const input = chargeInput(method);
      const outcome = await razorpayAdapter.charge(ctx(), input);
      expect(outcome).toMatchObject({ status: 'succeeded' });
      expect(server.requestsTo('POST', '/v1/payments/create/recurring')).toHaveLength(1);
      expect([...server.payments.values()].filter((p) => p.notes.attempt_id === input.metadata.attempt_id)).toHaveLength(1);
    });

    it('answers the first outcome when the same attempt is charged again', async () => {
      const method = await card();
      const input = chargeInput(method);
      const first = await razorpayAdapter.charge(ctx(), input);
      const second = await razorpayAdapter.charge(ctx(), input);
      expect(second).toEqual(first);
      expect(server.requestsTo('POST', '/v1/payments/create/recurring')).toHaveLength(1);
    });

    it('answers a retryable failure when Razorpay times out before any debit was sent (only the order lookups hung)', async () => {
      const method = await card();
      server.fault({ path: /^\/v1\//, kind: 'hang', ms: 5_000, times: 100 });
      const outcome = await razorpayAdapter.charge(ctx({ timeoutMs: 50 }), chargeInput(method));
      expect(outcome).toMatchObject({
        status: 'failed',
        gatewayPaymentId: null,
        failureCode: 'gateway_unreachable',
        failureMessage: expect.stringMatching(/nothing was charged \(timeout: no answer within 50 ms\)/),
      });
      expect(server.requestsTo('GET', '/v1/orders')).toHaveLength(3);
      expect(server.requestsTo('POST', '/v1/payments/create/recurring')).toHaveLength(0);
    });
  });

  describe('charge: what an exception means (issue #27, decision 0531)', () => {
    it('answers a retryable failure, not unknown, when every connection is refused before anything is sent', async () => {
      const input = chargeInput(await card());
      server.requests.length = 0;
      await server.setRefusingConnections(true);
      try {
        expect(await razorpayAdapter.charge(ctx(), input)).toMatchObject({
          status: 'failed',
          gatewayPaymentId: null,
          failureCode: 'gateway_unreachable',
          failureMessage: expect.stringMatching(/nothing was charged \(connection: fetch failed \(ECONNREFUSED\)\)/),
        });
      } finally {
        await server.setRefusingConnections(false);
      }
      expect(server.requests).toHaveLength(0);
      // Razorpay never saw the receipt: a later attempt charges afresh.
      expect(await razorpayAdapter.lookupCharge(ctx(), { idempotencyKey: input.idempotencyKey, gatewayPaymentId: null, metadata: input.metadata })).toEqual({
        status: 'not_found',
      });
    });

    it('answers unknown when a debit request was sent and its connection reset, and lookupCharge finds the one debit', async () => {
      const input = chargeInput(await card());
      // The debit is taken, its answer is cut; every look that follows is cut too.
      server.fault({ method: 'POST', path: '/v1/payments/create/recurring', kind: 'reset', afterProcessing: true });
      server.fault({ method: 'GET', path: '/v1/orders', kind: 'reset', skip: 1, times: 100 });
      const outcome = await razorpayAdapter.charge(ctx(), input);
      expect(outcome).toMatchObject({ status: 'unknown', reason: expect.stringMatching(/^connection: fetch failed/) });
      server.clearFaults();
      const debits = [...server.payments.values()].filter((p) => p.notes.attempt_id === input.metadata.attempt_id);
      expect(debits).toHaveLength(1);
      expect(await razorpayAdapter.lookupCharge(ctx(), { idempotencyKey: input.idempotencyKey, gatewayPaymentId: null, metadata: input.metadata })).toEqual({
        status: 'succeeded',
        gatewayPaymentId: debits[0]!.id,
        paymentType: 'card',
      });
    });

    it('answers unknown when the debit request was refused only after an earlier try may have reached Razorpay', async () => {
      const input = chargeInput(await card());
      // Try 1: the debit hangs past the timeout (it may have arrived); tries 2 and 3: nothing listens.
      server.fault({ method: 'POST', path: '/v1/payments/create/recurring', kind: 'hang', ms: 5_000 });
      const charging = razorpayAdapter.charge(ctx({ timeoutMs: 100 }), input);
      while (server.requestsTo('POST', '/v1/payments/create/recurring').length < 1) await new Promise((resolve) => setTimeout(resolve, 5));
      await server.setRefusingConnections(true);
      try {
        expect(await charging).toMatchObject({ status: 'unknown' });
      } finally {
        await server.setRefusingConnections(false);
      }
    });
  });

  describe('timeouts', () => {
    it('cuts each request at 10 s by default, then tries again with the same receipt', async () => {
      const input = chargeInput(await card());
      server.requests.length = 0;
      server.fault({ path: /^\/v1\//, kind: 'hang', ms: 60_000, times: 100 });
      const sentSoFar = async (count: number) => {
        // Real-time wait for the request to reach the server (setImmediate is not faked).
        while (server.requests.length < count) await new Promise((resolve) => setImmediate(resolve));
      };
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
      try {
        let outcome: unknown;
        const charging = razorpayAdapter.charge(ctx(), input).then((result) => (outcome = result));
        await sentSoFar(1);
        await vi.advanceTimersByTimeAsync(9_999);
        expect(server.requests).toHaveLength(1);
        await vi.advanceTimersByTimeAsync(1 + 200); // the cut, then the first retry's pause
        await sentSoFar(2);
        expect(outcome).toBeUndefined();
        await vi.advanceTimersByTimeAsync(10_000 + 800);
        await sentSoFar(3);
        await vi.advanceTimersByTimeAsync(10_000);
        await charging;
        // Three order lookups cut, no debit ever sent: nothing was charged.
        expect(outcome).toMatchObject({
          status: 'failed',
          failureCode: 'gateway_unreachable',
          failureMessage: expect.stringMatching(/timeout: no answer within 10000 ms/),
        });
        expect(server.requests.map((r) => r.query.get('receipt'))).toEqual(Array(3).fill(referenceFromKey(input.idempotencyKey)));
      } finally {
        vi.useRealTimers();
      }
    });
  });

  describe('lookupCharge', () => {
    it('finds the one debit behind an unknown outcome', async () => {
      const method = await card();
      // The debit is taken but its answer is lost, and Razorpay then fails every look that follows.
      server.fault({ method: 'POST', path: '/v1/payments/create/recurring', kind: 'hang', ms: 5_000 });
      server.fault({ method: 'GET', path: '/v1/orders', kind: 'status', status: 503, skip: 1, times: 100 });
      const input = chargeInput(method);
      const outcome = await razorpayAdapter.charge(ctx({ timeoutMs: 100 }), input);
      expect(outcome.status).toBe('unknown');
      server.clearFaults();

      const found = await razorpayAdapter.lookupCharge(ctx(), { idempotencyKey: input.idempotencyKey, gatewayPaymentId: null, metadata: input.metadata });
      const debits = [...server.payments.values()].filter((p) => p.notes.attempt_id === input.metadata.attempt_id);
      expect(debits).toHaveLength(1);
      expect(found).toEqual({ status: 'succeeded', gatewayPaymentId: debits[0]!.id, paymentType: 'card' });
    });

    it('answers not_found when the charge never reached Razorpay', async () => {
      const input = chargeInput(await card());
      expect(await razorpayAdapter.lookupCharge(ctx(), { idempotencyKey: input.idempotencyKey, gatewayPaymentId: null, metadata: input.metadata })).toEqual({
        status: 'not_found',
      });
    });

    it("reads a pending mandate debit's final state by its payment id", async () => {
      const input = chargeInput(await savedToken({ email: 'upi2@example.in', method: 'upi' }));
      const pending = await razorpayAdapter.charge(ctx(), input);
      const paymentId = (pending as { gatewayPaymentId: string }).gatewayPaymentId;
      server.settlePayment(paymentId, 'captured');
      expect(
        await razorpayAdapter.lookupCharge(ctx(), { idempotencyKey: input.idempotencyKey, gatewayPaymentId: paymentId, metadata: input.metadata }),
      ).toEqual({
        status: 'succeeded',
        gatewayPaymentId: paymentId,
        paymentType: 'upi',
      });
    });
  });

  describe('refund', () => {
    it('refunds in full and in part, keyed by receipt, and a repeated key refunds once', async () => {
      const paid = await razorpayAdapter.charge(ctx(), chargeInput(await card(), 100_000));
      const paymentId = (paid as { gatewayPaymentId: string }).gatewayPaymentId;

      const partial = await razorpayAdapter.refund(ctx(), {
        idempotencyKey: 'kosh_ref_partial-1',
        gatewayPaymentId: paymentId,
        amount: 30_000,
        currency: 'INR',
        reason: 'requested_by_customer',
      });
      expect(partial).toMatchObject({ status: 'succeeded', gatewayRefundId: expect.stringMatching(/^rfnd_/) });
      const [refundRequest] = server.requestsTo('POST', `/v1/payments/${paymentId}/refund`);
      expect(refundRequest!.body).toEqual({
        amount: 30_000,
        speed: 'normal',
        receipt: referenceFromKey('kosh_ref_partial-1'),
        notes: { kosh_idempotency_key: 'kosh_ref_partial-1', reason: 'requested_by_customer' },
      });

      const again = await razorpayAdapter.refund(ctx(), {
        idempotencyKey: 'kosh_ref_partial-1',
        gatewayPaymentId: paymentId,
        amount: 30_000,
        currency: 'INR',
        reason: 'requested_by_customer',
      });
      expect(again).toEqual(partial);
      expect(server.requestsTo('POST', `/v1/payments/${paymentId}/refund`)).toHaveLength(1);

      const tooMuch = await razorpayAdapter.refund(ctx(), {
        idempotencyKey: 'kosh_ref_big',
        gatewayPaymentId: paymentId,
        amount: 80_000,
        currency: 'INR',
        reason: 'duplicate',
      });
      expect(tooMuch).toMatchObject({
        status: 'failed',
        gatewayRefundId: null,
        failureCode: 'bad_request_error',
        failureMessage: expect.stringMatching(/greater than amount captured/),
      });

      const rest = await razorpayAdapter.refund(ctx(), {
        idempotencyKey: 'kosh_ref_rest',
        gatewayPaymentId: paymentId,
        amount: 70_000,
        currency: 'INR',
        reason: 'duplicate',
      });
      expect(rest.status).toBe('succeeded');
      expect(server.payments.get(paymentId)).toMatchObject({ status: 'refunded', amount_refunded: 100_000, refund_status: 'full' });
    });

    it('answers pending while Razorpay has not processed the refund', async () => {
      const paid = await razorpayAdapter.charge(ctx(), chargeInput(await card()));
      server.refundMode = 'pending';
      const refund = await razorpayAdapter.refund(ctx(), {
        idempotencyKey: 'kosh_ref_pending',
        gatewayPaymentId: (paid as { gatewayPaymentId: string }).gatewayPaymentId,
        amount: 10_000,
        currency: 'INR',
        reason: 'x',
      });
      expect(refund).toMatchObject({ status: 'pending' });
    });
  });

  describe('createCheckout', () => {
    it('hands over to a Payment Link keyed by reference_id, once per key', async () => {
      const input = {
        idempotencyKey: 'kosh_cs_0190cccc-0000-7000-8000-000000000001',
        amount: 118_000,
        currency: 'INR',
        customer,
        description: 'Invoice INV-0002',
        successUrl: 'https://kosh.example/checkout/cs_1/return',
        cancelUrl: 'https://kosh.example/checkout/cs_1',
        metadata: { tenant_id: 'tenant-1', invoice_id: 'invoice-2', checkout_session_id: 'cs_1' },
      };
      const outcome = await razorpayAdapter.createCheckout(ctx(), input);
      const link = [...server.paymentLinks.values()].find((l) => l.reference_id === referenceFromKey(input.idempotencyKey))!;
      expect(outcome).toEqual({ kind: 'redirect', url: link.short_url, gatewayReference: link.id });
      const [created] = server.requestsTo('POST', '/v1/payment_links');
      expect(created!.body).toEqual({
        amount: 118_000,
        currency: 'INR',
        accept_partial: false,
        description: 'Invoice INV-0002',
        reference_id: referenceFromKey(input.idempotencyKey),
        customer: { name: 'Asha Rao', email: customer.email, contact: customer.phone },
        notify: { sms: false, email: false },
        reminder_enable: false,
        notes: { ...input.metadata, kosh_idempotency_key: input.idempotencyKey },
        callback_url: input.successUrl,
        callback_method: 'get',
      });
      expect(await razorpayAdapter.createCheckout(ctx(), input)).toEqual(outcome);
      expect(server.requestsTo('POST', '/v1/payment_links')).toHaveLength(1);
    });
  });

  describe('createSetup and lookupSetup (registration links, decision 0730)', () => {
    const setupInput = {
      idempotencyKey: 'kosh_setup_0190dddd-0000-7000-8000-000000000001',
      method: 'upi_mandate' as const,
      currency: 'INR',
      customer,
      mandate: { maxAmount: 1_500_000, validUntil: null, frequency: 'as_presented' },
      description: 'UPI AutoPay mandate registration',
      successUrl: 'https://kosh.example/portal/payment-methods/setup/s1/return',
      cancelUrl: 'https://kosh.example/portal/payment-methods/setup/s1/return?cancelled=1',
      metadata: { tenant_id: 'tenant-1', customer_id: customer.id, setup_session_id: 's1' },
    };

    it('makes one registration link when the first answer is lost (found again by its receipt), and reads the token once authorised', async () => {
      server.fault({ method: 'POST', path: '/v1/subscription_registration/auth_links', kind: 'status', status: 502, afterProcessing: true });
      const page = await razorpayAdapter.createSetup!(ctx(), setupInput);
      expect(server.requestsTo('POST', '/v1/subscription_registration/auth_links')).toHaveLength(1);
      const link = server.registrationLinks.get(page.gatewayReference)!;
      expect(page.url).toBe(link.short_url);
      expect(link).toMatchObject({
        receipt: referenceFromKey(setupInput.idempotencyKey),
        amount: 100,
        subscription_registration: { method: 'upi', max_amount: 1_500_000, frequency: 'as_presented', expire_at: null },
        callback_url: setupInput.successUrl,
      });
      expect(await razorpayAdapter.lookupSetup!(ctx(), link.id)).toEqual({ status: 'open' });
      const authorised = await fetch(link.short_url, { method: 'POST', redirect: 'manual' });
      expect(authorised.headers.get('location')).toContain(`razorpay_invoice_id=${link.id}`);
      const token = [...server.tokens.values()].at(-1)!;
      expect(await razorpayAdapter.lookupSetup!(ctx(), link.id)).toEqual({
        status: 'complete',
        saved: {
          type: 'upi_mandate',
          brand: 'okhdfcbank',
          last4: null,
          reference: token.id,
          gatewayCustomerId: link.customer_id,
          requiresPreDebitNotice: true,
        },
      });
    });
  });

  describe('verifyWebhook', () => {
    const verify = (delivery: { rawBody: Buffer; headers: Record<string, string> }, secret = server.webhookSecret) =>
      razorpayAdapter.verifyWebhook({ rawBody: delivery.rawBody, headers: delivery.headers, webhookSecret: secret, now: new Date() });

    it("reads a signed payment.captured with Kosh's notes and the event id", async () => {
      const paid = await razorpayAdapter.charge(ctx(), chargeInput(await card()));
      const payment = server.payments.get((paid as { gatewayPaymentId: string }).gatewayPaymentId)!;
      const event = verify(server.webhook('payment.captured', { payment }, { eventId: 'evt_captured_1' }));
      expect(event).toMatchObject({
        eventId: expect.stringMatching(new RegExp(`^payment\\.captured:${payment.id}:[0-9a-f]{64}$`)),
        type: 'payment.succeeded',
        gatewayPaymentId: payment.id,
        amount: payment.amount,
        currency: 'INR',
      });
      expect(event.metadata.attempt_id).toBe(payment.notes.attempt_id);
    });

    it('keys deduplication on the signed body, not on the unsigned X-Razorpay-Event-Id', () => {
      const delivery = server.webhook('payment.captured', { payment: { id: 'pay_D1', amount: 100, currency: 'INR', notes: {} } }, { eventId: 'evt_a' });
      const again = verify({ rawBody: delivery.rawBody, headers: { ...delivery.headers, 'x-razorpay-event-id': 'evt_b' } });
      expect(again.eventId).toBe(verify(delivery).eventId);
      const other = server.webhook('payment.captured', { payment: { id: 'pay_D2', amount: 100, currency: 'INR', notes: {} } }, { eventId: 'evt_a' });
      expect(verify(other).eventId).not.toBe(verify(delivery).eventId);
    });

    it('maps failures, refunds and cancelled mandates', async () => {
      const failed = verify(
        server.webhook('payment.failed', {
          payment: {
            id: 'pay_F1',
            amount: 100,
            currency: 'INR',
            status: 'failed',
            error_code: 'BAD_REQUEST_ERROR',
            error_reason: 'payment_declined',
            error_description: 'declined',
            notes: [],
          },
        }),
      );
      expect(failed).toMatchObject({ type: 'payment.failed', failureCode: 'payment_declined', failureMessage: 'declined', metadata: {} });
      const refunded = verify(
        server.webhook('refund.processed', {
          refund: { id: 'rfnd_1', payment_id: 'pay_F2', amount: 500, currency: 'INR', status: 'processed', notes: { kosh_idempotency_key: 'k' } },
        }),
      );
      expect(refunded).toMatchObject({ type: 'refund.succeeded', gatewayRefundId: 'rfnd_1', gatewayPaymentId: 'pay_F2', amount: 500 });
      const revoked = verify(server.webhook('token.cancelled', { token: { id: 'token_T1', entity: 'token', method: 'upi' } }));
      expect(revoked).toMatchObject({ type: 'mandate.revoked', paymentMethodReference: 'token_T1' });
      expect(verify(server.webhook('order.paid', { order: { id: 'order_1' } })).type).toBe('ignored');
    });

    it('throws on a wrong secret, a changed body or a missing signature', () => {
      const delivery = server.webhook('payment.captured', { payment: { id: 'pay_X', amount: 100, currency: 'INR', notes: {} } });
      expect(() => verify(delivery, 'another_secret')).toThrow(GatewayWebhookSignatureError);
      const changed = Buffer.from(delivery.rawBody.toString().replace('"amount":100', '"amount":1'));
      expect(() => verify({ rawBody: changed, headers: delivery.headers })).toThrow(GatewayWebhookSignatureError);
      const { 'x-razorpay-signature': _dropped, ...unsigned } = delivery.headers;
      expect(() => verify({ rawBody: delivery.rawBody, headers: unsigned })).toThrow(GatewayWebhookSignatureError);
    });
  });
});
