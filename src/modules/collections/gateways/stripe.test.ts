import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { KoshError } from '../../../platform/errors.js';
import { startStripeServer, type StripeServer } from '../../../../test/support/stripe-server.js';
import { GatewayWebhookSignatureError, type ChargeInput, type GatewayCallContext, type SavedPaymentMethod } from './gateway.js';
import { gatewayCallContext } from './gateway-config.js';
import { stripeAdapter, stripeClient } from './stripe.js';

let server: StripeServer;
let attemptCounter = 0;

const customer = { id: 'c0ffee00-0000-7000-8000-000000000002', email: 'jane@example.com', name: 'Jane Doe', phone: null };

function ctx(overrides: { timeoutMs?: number; credentials?: Record<string, string> } = {}): GatewayCallContext {
  return gatewayCallContext({
    config: { razorpayApiBase: 'http://unused.invalid', stripeApiBase: server.url },
    provider: 'stripe',
    credentials: overrides.credentials ?? { secret_key: server.secretKey, webhook_secret: server.webhookSecret },
    now: new Date(),
    timeoutMs: overrides.timeoutMs,
  });
}

function chargeInput(paymentMethod: SavedPaymentMethod, amount = 4_900): ChargeInput {
  attemptCounter += 1;
  const attemptId = `0190bbbb-0000-7000-8000-${String(attemptCounter).padStart(12, '0')}`;
  return {
    idempotencyKey: `kosh_att_${attemptId}`,
    amount,
    currency: 'USD',
    paymentMethod,
    customer,
    description: 'Invoice INV-0101',
    metadata: { tenant_id: 'tenant-1', invoice_id: 'invoice-1', attempt_id: attemptId },
  };
}

const saved = (token: string) => stripeAdapter.attachPaymentMethod(ctx(), { token, customer, gatewayCustomerId: null });
const intentsOf = (input: ChargeInput) => [...server.paymentIntents.values()].filter((pi) => pi.metadata.attempt_id === input.metadata.attempt_id);

beforeAll(async () => {
  server = await startStripeServer();
});
afterAll(async () => {
  await server.close();
});
beforeEach(() => {
  server.clearFaults();
  server.requests.length = 0;
  server.refundMode = 'succeeded';
  server.searchAvailable = true;
});

describe('stripe gateway', () => {
  describe('configuration', () => {
    it('points the SDK at the configured base URL with a 10 s cut and two retries by default', () => {
      const sdk = stripeClient(ctx());
      expect(sdk.getApiField('timeout')).toBe(10_000);
      expect(sdk.getApiField('maxNetworkRetries')).toBe(2);
      expect(`${sdk.getApiField('protocol')}://${sdk.getApiField('host')}:${sdk.getApiField('port')}`).toBe(server.url);
      expect(stripeClient(ctx({ timeoutMs: 250 })).getApiField('timeout')).toBe(250);
    });
  });

  describe('attachPaymentMethod', () => {
    it('creates the customer, turns a test token into a PaymentMethod and attaches it', async () => {
      const method = await saved('tok_visa');
      expect(method).toEqual({
        type: 'card',
        brand: 'visa',
        last4: '4242',
        reference: expect.stringMatching(/^pm_/),
        gatewayCustomerId: expect.stringMatching(/^cus_/),
        requiresPreDebitNotice: false,
      });
      const [createCustomer, createMethod, attach] = server.requests;
      expect(createCustomer).toMatchObject({
        method: 'POST',
        path: '/v1/customers',
        body: { email: customer.email, name: 'Jane Doe', metadata: { kosh_customer_id: customer.id } },
      });
      expect(createCustomer!.headers).toMatchObject({
        authorization: `Bearer ${server.secretKey}`,
        'content-type': 'application/x-www-form-urlencoded',
        'idempotency-key': `kosh_cus_${customer.id}`,
      });
      expect(createMethod).toMatchObject({ method: 'POST', path: '/v1/payment_methods', body: { type: 'card', card: { token: 'tok_visa' } } });
      expect(attach).toMatchObject({ method: 'POST', path: `/v1/payment_methods/${method.reference}/attach`, body: { customer: method.gatewayCustomerId } });
      expect(server.paymentMethods.get(method.reference)?.customer).toBe(method.gatewayCustomerId);
    });

    it('answers 404 for a PaymentMethod Stripe does not know', async () => {
      const error = await stripeAdapter.attachPaymentMethod(ctx(), { token: 'pm_doesNotExist', customer, gatewayCustomerId: null }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(KoshError);
      expect((error as KoshError).status).toBe(404);
    });

    it('refuses with 400 when Stripe rejects the secret key (401)', async () => {
      const error = await stripeAdapter
        .attachPaymentMethod(ctx({ credentials: { secret_key: 'sk_test_wrong_key_123456' } }), { token: 'tok_visa', customer, gatewayCustomerId: null })
        .catch((e: unknown) => e);
      expect((error as KoshError).status).toBe(400);
      expect((error as KoshError).message).toMatch(/Invalid API Key provided/);
    });
  });

  describe('charge', () => {
    it("confirms an off-session PaymentIntent with the attempt's key and metadata", async () => {
      const method = await saved('pm_card_mastercard');
      server.requests.length = 0;
      const input = chargeInput(method);
      const outcome = await stripeAdapter.charge(ctx(), input);

      const [intent] = intentsOf(input);
      expect(outcome).toEqual({ status: 'succeeded', gatewayPaymentId: intent!.id, paymentType: 'card' });
      expect(server.requests).toHaveLength(1);
      const [sent] = server.requests;
      expect(sent).toMatchObject({ method: 'POST', path: '/v1/payment_intents' });
      expect(sent!.headers).toMatchObject({
        authorization: `Bearer ${server.secretKey}`,
        'content-type': 'application/x-www-form-urlencoded',
        'idempotency-key': input.idempotencyKey,
      });
      expect(sent!.body).toEqual({
        amount: '4900',
        currency: 'usd',
        customer: method.gatewayCustomerId,
        payment_method: method.reference,
        automatic_payment_methods: { enabled: 'true', allow_redirects: 'never' },
        confirm: 'true',
        off_session: 'true',
        description: 'Invoice INV-0101',
        metadata: { tenant_id: 'tenant-1', invoice_id: 'invoice-1', attempt_id: input.metadata.attempt_id, kosh_idempotency_key: input.idempotencyKey },
      });
    });

    it("answers failed with Stripe's decline code", async () => {
      const generic = await stripeAdapter.charge(ctx(), chargeInput(await saved('tok_chargeDeclined')));
      expect(generic).toMatchObject({
        status: 'failed',
        failureCode: 'card_declined',
        failureMessage: 'Your card was declined.',
        gatewayPaymentId: expect.stringMatching(/^pi_/),
      });
      const funds = await stripeAdapter.charge(ctx(), chargeInput(await saved('tok_chargeDeclinedInsufficientFunds')));
      expect(funds).toMatchObject({ status: 'failed', failureCode: 'insufficient_funds' });
      const sca = await stripeAdapter.charge(ctx(), chargeInput(await saved('pm_card_authenticationRequired')));
      expect(sca).toMatchObject({ status: 'failed', failureCode: 'authentication_required' });
    });

    it('retries a 500 with the same Idempotency-Key and charges once', async () => {
      const method = await saved('tok_visa');
      server.requests.length = 0;
      server.fault({ method: 'POST', path: '/v1/payment_intents', kind: 'status', status: 500 });
      const input = chargeInput(method);
      const outcome = await stripeAdapter.charge(ctx(), input);
      expect(outcome).toMatchObject({ status: 'succeeded' });
      const sent = server.requestsTo('POST', '/v1/payment_intents');
      expect(sent.map((r) => r.headers['idempotency-key'])).toEqual([input.idempotencyKey, input.idempotencyKey]);
      expect(intentsOf(input)).toHaveLength(1);
    });

    it("after a 500 that hid a completed charge, gets Stripe's replay instead of a second charge", async () => {
      const method = await saved('tok_visa');
      server.fault({ method: 'POST', path: '/v1/payment_intents', kind: 'status', status: 500, afterProcessing: true });
      const input = chargeInput(method);
      const outcome = await stripeAdapter.charge(ctx(), input);
      expect(outcome).toEqual({ status: 'succeeded', gatewayPaymentId: intentsOf(input)[0]!.id, paymentType: 'card' });
      expect(intentsOf(input)).toHaveLength(1);
      expect(server.requestsTo('POST', '/v1/payment_intents')).toHaveLength(2);
    });

    it('answers unknown, not failed, when the key was first used with other parameters', async () => {
      const input = chargeInput(await saved('tok_visa'));
      const first = await stripeAdapter.charge(ctx(), input);
      const reused = await stripeAdapter.charge(ctx(), { ...input, amount: input.amount + 1 });
      expect(reused).toMatchObject({ status: 'unknown', reason: expect.stringMatching(/StripeIdempotencyError 400: .*same parameters/) });
      expect(await stripeAdapter.lookupCharge(ctx(), { idempotencyKey: input.idempotencyKey, gatewayPaymentId: null, metadata: input.metadata })).toEqual(
        first,
      );
      expect(intentsOf(input)).toHaveLength(1);
    });

    it('answers unknown when Stripe does not answer within the timeout, and lookupCharge finds the one charge', async () => {
      const method = await saved('tok_visa');
      server.requests.length = 0;
      server.fault({ method: 'POST', path: '/v1/payment_intents', kind: 'hang', ms: 5_000, times: 10 });
      const input = chargeInput(method);
      const outcome = await stripeAdapter.charge(ctx({ timeoutMs: 100 }), input);
      expect(outcome).toMatchObject({ status: 'unknown', reason: expect.stringMatching(/timeout/i) });
      const sent = server.requestsTo('POST', '/v1/payment_intents');
      expect(sent).toHaveLength(3);
      expect(new Set(sent.map((r) => r.headers['idempotency-key']))).toEqual(new Set([input.idempotencyKey]));
      server.clearFaults();

      const found = await stripeAdapter.lookupCharge(ctx(), { idempotencyKey: input.idempotencyKey, gatewayPaymentId: null, metadata: input.metadata });
      expect(intentsOf(input)).toHaveLength(1);
      expect(found).toEqual({ status: 'succeeded', gatewayPaymentId: intentsOf(input)[0]!.id, paymentType: 'card' });
      const [search] = server.requestsTo('GET', '/v1/payment_intents/search');
      expect(search!.query.get('query')).toBe(`metadata['kosh_idempotency_key']:'${input.idempotencyKey}'`);
    });
  });

  describe('charge: what an exception means (issue #27)', () => {
    it('answers failed with the code of an invalid request (a 400 is a definite no), charging nothing', async () => {
      const input = chargeInput({ ...(await saved('tok_visa')), reference: 'pm_unknown_to_stripe' });
      const outcome = await stripeAdapter.charge(ctx(), input);
      expect(outcome).toMatchObject({ status: 'failed', gatewayPaymentId: null, failureCode: 'resource_missing' });
      expect(intentsOf(input)).toHaveLength(0);
    });

    it('answers a retryable failure, not unknown, when every connection is refused before anything is sent', async () => {
      const input = chargeInput(await saved('tok_visa'));
      server.requests.length = 0;
      await server.setRefusingConnections(true);
      try {
        const outcome = await stripeAdapter.charge(ctx(), input);
        expect(outcome).toMatchObject({
          status: 'failed',
          gatewayPaymentId: null,
          failureCode: 'gateway_unreachable',
          failureMessage: expect.stringMatching(/nothing was charged/),
        });
      } finally {
        await server.setRefusingConnections(false);
      }
      expect(server.requests).toHaveLength(0);
      expect(intentsOf(input)).toHaveLength(0);
      // Stripe never saw the key: a later attempt charges afresh.
      expect(await stripeAdapter.lookupCharge(ctx(), { idempotencyKey: input.idempotencyKey, gatewayPaymentId: null, metadata: input.metadata })).toEqual({
        status: 'not_found',
      });
    });

    it('answers unknown when the connection is reset after the request was sent, and lookupCharge finds the one charge', async () => {
      const input = chargeInput(await saved('tok_visa'));
      server.requests.length = 0;
      server.fault({ method: 'POST', path: '/v1/payment_intents', kind: 'reset', afterProcessing: true, times: 100 });
      const outcome = await stripeAdapter.charge(ctx(), input);
      expect(outcome).toMatchObject({ status: 'unknown', reason: expect.stringMatching(/StripeConnectionError/) });
      const sent = server.requestsTo('POST', '/v1/payment_intents');
      expect(sent.length).toBeGreaterThanOrEqual(3);
      expect(new Set(sent.map((r) => r.headers['idempotency-key']))).toEqual(new Set([input.idempotencyKey]));
      expect(intentsOf(input)).toHaveLength(1);
      server.clearFaults();
      expect(await stripeAdapter.lookupCharge(ctx(), { idempotencyKey: input.idempotencyKey, gatewayPaymentId: null, metadata: input.metadata })).toEqual({
        status: 'succeeded',
        gatewayPaymentId: intentsOf(input)[0]!.id,
        paymentType: 'card',
      });
    });

    it('charges once when a reset before Stripe ran is followed by an answer', async () => {
      const input = chargeInput(await saved('tok_visa'));
      server.requests.length = 0;
      server.fault({ method: 'POST', path: '/v1/payment_intents', kind: 'reset', times: 3 });
      const outcome = await stripeAdapter.charge(ctx(), input);
      expect(outcome).toEqual({ status: 'succeeded', gatewayPaymentId: intentsOf(input)[0]!.id, paymentType: 'card' });
      expect(intentsOf(input)).toHaveLength(1);
      expect(server.requestsTo('POST', '/v1/payment_intents')).toHaveLength(4);
    });

    it('lets a defect of its own propagate instead of calling it an unknown outcome', async () => {
      const input = { ...chargeInput(await saved('tok_visa')), paymentMethod: null as unknown as SavedPaymentMethod };
      await expect(stripeAdapter.charge(ctx(), input)).rejects.toThrow(TypeError);
    });

    it('a refund that could not be sent is retried by its job (unknown, "not sent"), never failed', async () => {
      const paid = await stripeAdapter.charge(ctx(), chargeInput(await saved('tok_visa')));
      const intentId = (paid as { gatewayPaymentId: string }).gatewayPaymentId;
      await server.setRefusingConnections(true);
      let refund;
      try {
        refund = await stripeAdapter.refund(ctx(), {
          idempotencyKey: 'kosh_ref_down',
          gatewayPaymentId: intentId,
          amount: 100,
          currency: 'USD',
          reason: 'duplicate',
        });
      } finally {
        await server.setRefusingConnections(false);
      }
      expect(refund).toMatchObject({ status: 'unknown', reason: expect.stringMatching(/^not sent: /) });
      expect([...server.refunds.values()].filter((r) => r.payment_intent === intentId)).toHaveLength(0);
    });
  });

  describe('lookupCharge', () => {
    it('finds the charge in the recent list when the account has no Search API', async () => {
      const input = chargeInput(await saved('tok_visa'));
      const charged = await stripeAdapter.charge(ctx(), input);
      for (let i = 0; i < 3; i += 1) await stripeAdapter.charge(ctx(), chargeInput(await saved('tok_visa')));
      server.searchAvailable = false;
      server.requests.length = 0;
      expect(await stripeAdapter.lookupCharge(ctx(), { idempotencyKey: input.idempotencyKey, gatewayPaymentId: null, metadata: input.metadata })).toEqual(
        charged,
      );
      const [list] = server.requestsTo('GET', '/v1/payment_intents');
      expect(Number(list!.query.get('created[gte]'))).toBeLessThanOrEqual(Math.floor(Date.now() / 1000) - 72 * 3600 + 5);
      expect(await stripeAdapter.lookupCharge(ctx(), { idempotencyKey: 'kosh_att_never-sent', gatewayPaymentId: null, metadata: input.metadata })).toEqual({
        status: 'not_found',
      });
    });

    it('answers not_found for a key Stripe never saw, and reads a known PaymentIntent by id', async () => {
      const input = chargeInput(await saved('tok_visa'));
      expect(await stripeAdapter.lookupCharge(ctx(), { idempotencyKey: input.idempotencyKey, gatewayPaymentId: null, metadata: input.metadata })).toEqual({
        status: 'not_found',
      });
      const declined = await stripeAdapter.charge(ctx(), input);
      const intentId = (declined as { gatewayPaymentId: string }).gatewayPaymentId;
      expect(await stripeAdapter.lookupCharge(ctx(), { idempotencyKey: input.idempotencyKey, gatewayPaymentId: intentId, metadata: input.metadata })).toEqual(
        declined,
      );
    });
  });

  describe('refund', () => {
    it('refunds in part and in full with an Idempotency-Key, replays a repeated key, refuses too much', async () => {
      const paid = await stripeAdapter.charge(ctx(), chargeInput(await saved('tok_visa'), 10_000));
      const intentId = (paid as { gatewayPaymentId: string }).gatewayPaymentId;

      const partial = await stripeAdapter.refund(ctx(), {
        idempotencyKey: 'kosh_ref_s1',
        gatewayPaymentId: intentId,
        amount: 2_500,
        currency: 'USD',
        reason: 'requested_by_customer',
      });
      expect(partial).toMatchObject({ status: 'succeeded', gatewayRefundId: expect.stringMatching(/^re_/) });
      const [sent] = server.requestsTo('POST', '/v1/refunds');
      expect(sent!.headers['idempotency-key']).toBe('kosh_ref_s1');
      expect(sent!.body).toEqual({
        payment_intent: intentId,
        amount: '2500',
        reason: 'requested_by_customer',
        metadata: { kosh_idempotency_key: 'kosh_ref_s1', kosh_reason: 'requested_by_customer' },
      });

      expect(
        await stripeAdapter.refund(ctx(), {
          idempotencyKey: 'kosh_ref_s1',
          gatewayPaymentId: intentId,
          amount: 2_500,
          currency: 'USD',
          reason: 'requested_by_customer',
        }),
      ).toEqual(partial);
      expect([...server.refunds.values()].filter((r) => r.payment_intent === intentId)).toHaveLength(1);

      const tooMuch = await stripeAdapter.refund(ctx(), {
        idempotencyKey: 'kosh_ref_s2',
        gatewayPaymentId: intentId,
        amount: 9_000,
        currency: 'USD',
        reason: 'customer changed plan',
      });
      expect(tooMuch).toMatchObject({ status: 'failed', gatewayRefundId: null, failureCode: 'amount_too_large' });

      const rest = await stripeAdapter.refund(ctx(), {
        idempotencyKey: 'kosh_ref_s3',
        gatewayPaymentId: intentId,
        amount: 7_500,
        currency: 'USD',
        reason: 'customer changed plan',
      });
      expect(rest.status).toBe('succeeded');
      // A free-text reason is not one of Stripe's; it travels in metadata only.
      expect(server.requestsTo('POST', '/v1/refunds').at(-1)!.body).toMatchObject({ metadata: { kosh_reason: 'customer changed plan' } });
      expect(server.requestsTo('POST', '/v1/refunds').at(-1)!.body).not.toHaveProperty('reason');
      expect(server.paymentIntents.get(intentId)?.amount_refunded).toBe(10_000);
    });

    it('answers pending while Stripe has not settled the refund', async () => {
      const paid = await stripeAdapter.charge(ctx(), chargeInput(await saved('tok_visa')));
      server.refundMode = 'pending';
      const refund = await stripeAdapter.refund(ctx(), {
        idempotencyKey: 'kosh_ref_s4',
        gatewayPaymentId: (paid as { gatewayPaymentId: string }).gatewayPaymentId,
        amount: 100,
        currency: 'USD',
        reason: 'duplicate',
      });
      expect(refund).toMatchObject({ status: 'pending' });
    });
  });

  describe('createCheckout', () => {
    it("hands over to a Checkout Session carrying Kosh's metadata, once per key", async () => {
      const input = {
        idempotencyKey: 'kosh_cs_0190dddd-0000-7000-8000-000000000001',
        amount: 11_800,
        currency: 'USD',
        customer,
        description: 'Invoice INV-0102',
        successUrl: 'https://kosh.example/checkout/cs_2/return',
        cancelUrl: 'https://kosh.example/checkout/cs_2',
        metadata: { tenant_id: 'tenant-1', invoice_id: 'invoice-2', checkout_session_id: 'cs_2' },
      };
      const outcome = await stripeAdapter.createCheckout(ctx(), input);
      const [session] = [...server.checkoutSessions.values()].filter((s) => s.client_reference_id === 'cs_2');
      expect(outcome).toEqual({ kind: 'redirect', url: session!.url, gatewayReference: session!.id });
      const [sent] = server.requestsTo('POST', '/v1/checkout/sessions');
      expect(sent!.headers['idempotency-key']).toBe(input.idempotencyKey);
      expect(sent!.body).toEqual({
        mode: 'payment',
        line_items: [{ quantity: '1', price_data: { currency: 'usd', unit_amount: '11800', product_data: { name: 'Invoice INV-0102' } } }],
        success_url: input.successUrl,
        cancel_url: input.cancelUrl,
        customer_email: customer.email,
        client_reference_id: 'cs_2',
        metadata: input.metadata,
        payment_intent_data: { description: 'Invoice INV-0102', metadata: { ...input.metadata, kosh_idempotency_key: input.idempotencyKey } },
      });
      expect(await stripeAdapter.createCheckout(ctx(), input)).toEqual(outcome);
      expect(server.checkoutSessions.size).toBe(1);
    });
  });

  describe('createSetup and lookupSetup (Checkout in setup mode, decision 0730)', () => {
    it('makes one setup session per key and reads the card off the SetupIntent once completed', async () => {
      const input = {
        idempotencyKey: 'kosh_setup_0190eeee-0000-7000-8000-000000000001',
        method: 'card' as const,
        currency: 'USD',
        customer,
        mandate: null,
        description: 'Save a card for future invoices',
        successUrl: 'https://kosh.example/portal/payment-methods/setup/s2/return',
        cancelUrl: 'https://kosh.example/portal/payment-methods/setup/s2/return?cancelled=1',
        metadata: { tenant_id: 'tenant-1', customer_id: customer.id, setup_session_id: 's2' },
      };
      const page = await stripeAdapter.createSetup!(ctx(), input);
      expect(await stripeAdapter.createSetup!(ctx(), input)).toEqual(page);
      const sessions = [...server.checkoutSessions.values()].filter((s) => s.client_reference_id === 's2');
      expect(sessions).toHaveLength(1);
      expect(sessions[0]).toMatchObject({ id: page.gatewayReference, url: page.url, mode: 'setup', currency: 'usd', customer: expect.stringMatching(/^cus_/) });
      expect(await stripeAdapter.lookupSetup!(ctx(), page.gatewayReference)).toEqual({ status: 'open' });
      expect((await fetch(page.url, { method: 'POST', redirect: 'manual' })).headers.get('location')).toBe(input.successUrl);
      const intent = [...server.setupIntents.values()].at(-1)!;
      expect(intent).toMatchObject({ status: 'succeeded', usage: 'off_session', metadata: input.metadata });
      expect(await stripeAdapter.lookupSetup!(ctx(), page.gatewayReference)).toEqual({
        status: 'complete',
        saved: {
          type: 'card',
          brand: 'visa',
          last4: '4242',
          reference: intent.payment_method,
          gatewayCustomerId: sessions[0]!.customer,
          requiresPreDebitNotice: false,
        },
      });
    });
  });

  describe('verifyWebhook', () => {
    const signedAt = new Date('2026-03-01T10:00:00Z');
    const verify = (delivery: { rawBody: Buffer; headers: Record<string, string> }, now: Date, secret = server.webhookSecret) =>
      stripeAdapter.verifyWebhook({ rawBody: delivery.rawBody, headers: delivery.headers, webhookSecret: secret, now });
    const intent = {
      id: 'pi_W1',
      object: 'payment_intent',
      amount: 4_900,
      amount_received: 4_900,
      currency: 'usd',
      status: 'succeeded',
      payment_method: 'pm_W1',
      metadata: { attempt_id: 'att-1' },
      last_payment_error: null,
    };

    it("reads a signed payment_intent.succeeded against Kosh's clock, within five minutes", () => {
      const delivery = server.webhook('payment_intent.succeeded', intent, { at: signedAt, id: 'evt_W1' });
      const event = verify(delivery, new Date(signedAt.getTime() + 299_000));
      expect(event).toEqual({
        eventId: 'evt_W1',
        type: 'payment.succeeded',
        gatewayPaymentId: 'pi_W1',
        gatewayRefundId: null,
        amount: 4_900,
        currency: 'USD',
        failureCode: null,
        failureMessage: null,
        metadata: { attempt_id: 'att-1' },
        paymentMethodReference: 'pm_W1',
      });
    });

    it('maps failures, refunds and detached payment methods', () => {
      const at = signedAt;
      const failed = verify(
        server.webhook(
          'payment_intent.payment_failed',
          {
            ...intent,
            status: 'requires_payment_method',
            amount_received: 0,
            last_payment_error: { type: 'card_error', code: 'card_declined', decline_code: 'insufficient_funds', message: 'Your card has insufficient funds.' },
          },
          { at },
        ),
        at,
      );
      expect(failed).toMatchObject({ type: 'payment.failed', failureCode: 'insufficient_funds', amount: 4_900 });
      const refunded = verify(
        server.webhook(
          'refund.updated',
          { id: 're_W1', object: 'refund', amount: 1_000, currency: 'usd', payment_intent: 'pi_W1', status: 'succeeded', metadata: {} },
          { at },
        ),
        at,
      );
      expect(refunded).toMatchObject({ type: 'refund.succeeded', gatewayRefundId: 're_W1', gatewayPaymentId: 'pi_W1', amount: 1_000 });
      const refundFailed = verify(
        server.webhook(
          'refund.failed',
          {
            id: 're_W2',
            object: 'refund',
            amount: 1_000,
            currency: 'usd',
            payment_intent: 'pi_W1',
            status: 'failed',
            failure_reason: 'expired_or_canceled_card',
            metadata: {},
          },
          { at },
        ),
        at,
      );
      expect(refundFailed).toMatchObject({ type: 'refund.failed', failureCode: 'expired_or_canceled_card' });
      expect(verify(server.webhook('payment_method.detached', { id: 'pm_W1', object: 'payment_method' }, { at }), at)).toMatchObject({
        type: 'mandate.revoked',
        paymentMethodReference: 'pm_W1',
      });
      expect(verify(server.webhook('customer.created', { id: 'cus_1' }, { at }), at).type).toBe('ignored');
      // Checkout: a paid session is the payment (its metadata names Kosh's session); an unpaid one (a delayed method) waits.
      const session = {
        id: 'cs_W1',
        object: 'checkout.session',
        mode: 'payment',
        amount_total: 41_300,
        currency: 'usd',
        metadata: { checkout_session_id: 'S1' },
      };
      expect(verify(server.webhook('checkout.session.completed', { ...session, payment_status: 'paid', payment_intent: 'pi_W9' }, { at }), at)).toMatchObject({
        type: 'payment.succeeded',
        gatewayPaymentId: 'pi_W9',
        amount: 41_300,
        currency: 'USD',
        metadata: { checkout_session_id: 'S1' },
      });
      expect(verify(server.webhook('checkout.session.completed', { ...session, payment_status: 'unpaid', payment_intent: 'pi_W9' }, { at }), at).type).toBe(
        'ignored',
      );
    });

    it('throws on a stale timestamp, a wrong secret, a changed body or no signature', () => {
      const delivery = server.webhook('payment_intent.succeeded', intent, { at: signedAt });
      expect(() => verify(delivery, new Date(signedAt.getTime() + 301_000))).toThrow(GatewayWebhookSignatureError);
      expect(() => verify(delivery, signedAt, 'whsec_other')).toThrow(GatewayWebhookSignatureError);
      const changed = Buffer.from(delivery.rawBody.toString().replace('"amount":4900', '"amount":49'));
      expect(() => verify({ rawBody: changed, headers: delivery.headers }, signedAt)).toThrow(GatewayWebhookSignatureError);
      expect(() => verify({ rawBody: delivery.rawBody, headers: {} }, signedAt)).toThrow(GatewayWebhookSignatureError);
    });
  });
});
