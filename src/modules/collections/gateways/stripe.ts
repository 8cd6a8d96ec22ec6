import Stripe from 'stripe';
import { errors, isKoshError } from '../../../platform/errors.js';
import {
  GatewayWebhookSignatureError,
  type ChargeOutcome,
  type GatewayAdapter,
  type GatewayCallContext,
  type GatewayWebhookEvent,
  type RefundOutcome,
} from './gateway.js';
import { GATEWAY_MAX_ATTEMPTS, failedBeforeSending, gatewayRefused, gatewayUnavailable, isGatewayOrNetworkError, withRetries } from './gateway-http.js';

/**
 * Stripe through the official `stripe` SDK, pointed at the configured base URL (host, port and
 * protocol are SDK settings). Every POST carries `Idempotency-Key`; the SDK retries 5xx, 409 and
 * connection errors itself with that same key, at most GATEWAY_MAX_ATTEMPTS − 1 times, and cuts
 * each try at the call's timeout — except charges and refunds, which Kosh retries itself
 * (`sendMoney`) to know whether any try may have reached Stripe (decision 0531). Stripe replays the saved answer of a key for 24 hours, so a
 * retry (by the SDK, or by Kosh's next run of the same attempt) cannot create a second charge.
 */

/** Stripe's documented default webhook tolerance, DESIGN §11: five minutes. */
export const STRIPE_WEBHOOK_TOLERANCE_SECONDS = 300;

/** A client per (base URL, key, timeout): the SDK builds every resource object on construction. */
const clients = new Map<string, Stripe>();
const MAX_CLIENTS = 64;

/** The SDK client for a call (exported for tests of its settings). */
export function stripeClient(ctx: GatewayCallContext): Stripe {
  const cacheKey = `${ctx.baseUrl}\n${ctx.timeoutMs}\n${ctx.credentials.secret_key ?? ''}`;
  const cached = clients.get(cacheKey);
  if (cached) return cached;
  if (clients.size >= MAX_CLIENTS) clients.delete(clients.keys().next().value as string);
  const created = newClient(ctx);
  clients.set(cacheKey, created);
  return created;
}

function newClient(ctx: GatewayCallContext): Stripe {
  const base = new URL(ctx.baseUrl);
  const protocol = base.protocol === 'http:' ? 'http' : 'https';
  return new Stripe(ctx.credentials.secret_key ?? '', {
    host: base.hostname,
    port: base.port === '' ? (protocol === 'http' ? 80 : 443) : Number(base.port),
    protocol,
    timeout: ctx.timeoutMs,
    maxNetworkRetries: GATEWAY_MAX_ATTEMPTS - 1,
    telemetry: false,
    appInfo: { name: 'Kosh' },
  });
}

/** Stripe's words for why: a specific decline code beats the generic `card_declined`. */
function failureOf(error: { code?: string; decline_code?: string; message?: string; type?: string }): { failureCode: string; failureMessage: string } {
  const decline = error.decline_code && error.decline_code !== 'generic_decline' ? error.decline_code : undefined;
  return { failureCode: decline ?? error.code ?? error.type ?? 'gateway_error', failureMessage: error.message ?? 'the payment gateway refused the request' };
}

/** A 4xx other than 409 and 429 is Stripe's definite "no"; everything else leaves the outcome unknown. */
function isDefiniteRefusal(error: unknown): error is Stripe.errors.StripeError {
  if (!(error instanceof Stripe.errors.StripeError)) return false;
  if (error instanceof Stripe.errors.StripeIdempotencyError) return false;
  const status = error.statusCode ?? 0;
  return status >= 400 && status < 500 && status !== 409 && status !== 429;
}

function neverSent(error: unknown): boolean {
  return error instanceof Stripe.errors.StripeConnectionError && failedBeforeSending(error.detail);
}

/** What Stripe did with a POST that moves money, tried up to GATEWAY_MAX_ATTEMPTS times with one key. */
type Sent<T> =
  | { kind: 'answered'; value: T }
  /** A 4xx other than 409/429: Stripe's definite "no" (a decline, an invalid request). */
  | { kind: 'refused'; error: Stripe.errors.StripeError }
  /** Every try failed before sending (connection refused, no DNS): nothing happened at Stripe. */
  | { kind: 'not_sent'; reason: string }
  /** A try may have reached Stripe (timeout, reset, 5xx, 409, idempotency conflict): look it up. */
  | { kind: 'unknown'; reason: string };

/**
 * Sends a money-moving POST with the SDK's own retries off, so that Kosh knows of every try whether
 * it may have reached Stripe: retried (same Idempotency-Key) on connection errors, 5xx, 409 and
 * 429. Anything that is neither Stripe's answer nor a network failure (a defect) propagates.
 */
async function sendMoney<T>(send: (options: { maxNetworkRetries: number }) => Promise<T>): Promise<Sent<T>> {
  let mayHaveReached = false;
  let refusal: Stripe.errors.StripeError | undefined;
  let final: string | undefined;
  const result = await withRetries<T | undefined>(async () => {
    try {
      return { done: await send({ maxNetworkRetries: 0 }) };
    } catch (error) {
      if (isDefiniteRefusal(error)) {
        refusal = error;
        return { done: undefined };
      }
      if (!(error instanceof Stripe.errors.StripeError) && !isGatewayOrNetworkError(error)) throw error;
      if (!neverSent(error)) mayHaveReached = true;
      // The key was first used with other parameters: no retry can change Stripe's answer.
      if (error instanceof Stripe.errors.StripeIdempotencyError) {
        final = reasonOf(error);
        return { done: undefined };
      }
      return { retry: reasonOf(error) };
    }
  });
  if (refusal) return { kind: 'refused', error: refusal };
  if ('done' in result && final === undefined) return { kind: 'answered', value: result.done as T };
  const reason = final ?? ('unresolved' in result ? result.unresolved : 'no answer');
  return mayHaveReached ? { kind: 'unknown', reason } : { kind: 'not_sent', reason };
}

function reasonOf(error: unknown): string {
  if (error instanceof Stripe.errors.StripeError) return `${error.type}${error.statusCode ? ` ${error.statusCode}` : ''}: ${error.message}`;
  return error instanceof Error ? error.message : String(error);
}

function outcomeOfIntent(intent: Stripe.PaymentIntent): ChargeOutcome {
  switch (intent.status) {
    case 'succeeded':
      return { status: 'succeeded', gatewayPaymentId: intent.id, paymentType: 'card' };
    case 'processing':
    case 'requires_capture':
      return { status: 'pending', gatewayPaymentId: intent.id };
    case 'requires_action':
      // Off-session charges cannot ask the customer for 3-D Secure: the attempt failed.
      return { status: 'failed', gatewayPaymentId: intent.id, failureCode: 'authentication_required', failureMessage: 'the card requires authentication' };
    case 'canceled':
      return {
        status: 'failed',
        gatewayPaymentId: intent.id,
        failureCode: intent.cancellation_reason ?? 'canceled',
        failureMessage: 'the payment was canceled',
      };
    default: {
      const last = intent.last_payment_error;
      return last
        ? { status: 'failed', gatewayPaymentId: intent.id, ...failureOf(last) }
        : { status: 'failed', gatewayPaymentId: intent.id, failureCode: 'payment_not_confirmed', failureMessage: `the payment stopped at ${intent.status}` };
    }
  }
}

function outcomeOfRefund(refund: Stripe.Refund): RefundOutcome {
  if (refund.status === 'succeeded') return { status: 'succeeded', gatewayRefundId: refund.id };
  if (refund.status === 'failed' || refund.status === 'canceled') {
    return { status: 'failed', gatewayRefundId: refund.id, failureCode: refund.failure_reason ?? refund.status, failureMessage: `the refund ${refund.status}` };
  }
  return { status: 'pending', gatewayRefundId: refund.id };
}

const refundReasons = new Set(['duplicate', 'fraudulent', 'requested_by_customer']);

function idOf(value: string | { id: string } | null | undefined): string | null {
  if (!value) return null;
  return typeof value === 'string' ? value : value.id;
}

function stringMetadata(metadata: Stripe.Metadata | null | undefined): Record<string, string> {
  return { ...(metadata ?? {}) };
}

/**
 * Hosted checkout (docs/decisions/0195): `completed` with payment_status `paid` is the money; an
 * `unpaid` completion (a delayed method) is settled by `async_payment_succeeded`. A setup-mode
 * session saved a card (docs/decisions/0730): Kosh asks Stripe which one.
 */
function checkoutSessionEvent(base: GatewayWebhookEvent, type: string, session: Stripe.Checkout.Session): GatewayWebhookEvent {
  if (session.mode === 'setup' && type === 'checkout.session.completed') {
    return { ...base, type: 'setup.completed', metadata: stringMetadata(session.metadata) };
  }
  if (session.mode !== 'payment' || session.payment_status !== 'paid') return base;
  return {
    ...base,
    type: 'payment.succeeded',
    gatewayPaymentId: idOf(session.payment_intent),
    amount: session.amount_total,
    currency: session.currency ? session.currency.toUpperCase() : null,
    metadata: stringMetadata(session.metadata),
    paymentType: 'card',
  };
}

function webhookEvent(event: Stripe.Event): GatewayWebhookEvent {
  const base: GatewayWebhookEvent = {
    eventId: event.id,
    type: 'ignored',
    gatewayPaymentId: null,
    gatewayRefundId: null,
    amount: null,
    currency: null,
    failureCode: null,
    failureMessage: null,
    metadata: {},
    paymentMethodReference: null,
  };
  switch (event.type) {
    case 'payment_intent.succeeded':
    case 'payment_intent.payment_failed': {
      const intent = event.data.object;
      const outcome = outcomeOfIntent(intent);
      return {
        ...base,
        type: event.type === 'payment_intent.succeeded' ? 'payment.succeeded' : 'payment.failed',
        gatewayPaymentId: intent.id,
        amount: event.type === 'payment_intent.succeeded' ? intent.amount_received : intent.amount,
        currency: intent.currency.toUpperCase(),
        failureCode: outcome.status === 'failed' ? outcome.failureCode : null,
        failureMessage: outcome.status === 'failed' ? outcome.failureMessage : null,
        metadata: stringMetadata(intent.metadata),
        paymentMethodReference: idOf(intent.payment_method),
      };
    }
    case 'checkout.session.completed':
    case 'checkout.session.async_payment_succeeded':
      return checkoutSessionEvent(base, event.type, event.data.object);
    case 'refund.created':
    case 'refund.updated':
    case 'refund.failed':
    case 'charge.refund.updated': {
      const refund = event.data.object;
      const outcome = outcomeOfRefund(refund);
      if (outcome.status === 'pending' || outcome.status === 'unknown') return base;
      return {
        ...base,
        type: outcome.status === 'succeeded' ? 'refund.succeeded' : 'refund.failed',
        gatewayPaymentId: idOf(refund.payment_intent),
        gatewayRefundId: refund.id,
        amount: refund.amount,
        currency: refund.currency.toUpperCase(),
        failureCode: outcome.status === 'failed' ? outcome.failureCode : null,
        failureMessage: outcome.status === 'failed' ? outcome.failureMessage : null,
        metadata: stringMetadata(refund.metadata),
      };
    }
    case 'payment_method.detached':
      return { ...base, type: 'mandate.revoked', paymentMethodReference: event.data.object.id };
    case 'mandate.updated': {
      const mandate = event.data.object;
      return mandate.status === 'inactive' ? { ...base, type: 'mandate.revoked', paymentMethodReference: idOf(mandate.payment_method) } : base;
    }
    default:
      return base;
  }
}

/**
 * Every charge carries its key in metadata. The Search API finds it at any age but is eventually
 * consistent (Stripe: usually under a minute) and not offered to every account (India), so a miss
 * or a refusal there falls through to a scan of the strongly consistent list.
 */
async function searchByKey(stripe: Stripe, idempotencyKey: string): Promise<Stripe.PaymentIntent | undefined> {
  try {
    const found = await stripe.paymentIntents.search({ query: `metadata['kosh_idempotency_key']:'${idempotencyKey.replace(/'/g, "\\'")}'`, limit: 10 });
    return found.data.find((candidate) => candidate.metadata?.kosh_idempotency_key === idempotencyKey);
  } catch (error) {
    if (isDefiniteRefusal(error)) return undefined;
    throw error;
  }
}

/** How far back the list scan looks, and how many PaymentIntents it reads at most. */
const SCAN_WINDOW_SECONDS = 72 * 3600;
const SCAN_LIMIT = 2_000;

async function scanRecentByKey(stripe: Stripe, idempotencyKey: string, now: Date): Promise<Stripe.PaymentIntent | undefined> {
  const since = Math.floor(now.getTime() / 1000) - SCAN_WINDOW_SECONDS;
  let read = 0;
  for await (const intent of stripe.paymentIntents.list({ created: { gte: since }, limit: 100 })) {
    if (intent.metadata?.kosh_idempotency_key === idempotencyKey) return intent;
    read += 1;
    if (read >= SCAN_LIMIT) return undefined;
  }
  return undefined;
}

/** A read or setup call whose failure the caller reports: Stripe's "no" → 422 gateway_refused, anything else → 503. */
async function readOrFail<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (isDefiniteRefusal(error)) {
      const failure = failureOf(error);
      throw gatewayRefused(failure.failureCode, failure.failureMessage);
    }
    if (isKoshError(error)) throw error;
    throw gatewayUnavailable(reasonOf(error));
  }
}

export const stripeAdapter: GatewayAdapter = {
  provider: 'stripe',

  async attachPaymentMethod(ctx, input) {
    const stripe = stripeClient(ctx);
    try {
      const customerId =
        input.gatewayCustomerId ??
        (
          await stripe.customers.create(
            {
              email: input.customer.email,
              name: input.customer.name ?? undefined,
              phone: input.customer.phone ?? undefined,
              metadata: { kosh_customer_id: input.customer.id },
            },
            { idempotencyKey: `kosh_cus_${input.customer.id}` },
          )
        ).id;
      // A Stripe.js token (`tok_…`) becomes a PaymentMethod first; `pm_…` ids attach directly.
      const paymentMethodId = input.token.startsWith('tok_')
        ? (
            await stripe.paymentMethods.create(
              { type: 'card', card: { token: input.token } },
              { idempotencyKey: `kosh_pm_${input.customer.id}_${input.token}` },
            )
          ).id
        : input.token;
      const attached = await stripe.paymentMethods.attach(
        paymentMethodId,
        { customer: customerId },
        { idempotencyKey: `kosh_attach_${customerId}_${paymentMethodId}` },
      );
      return {
        type: 'card',
        brand: attached.card?.brand ?? null,
        last4: attached.card?.last4 ?? null,
        reference: attached.id,
        gatewayCustomerId: customerId,
        requiresPreDebitNotice: false,
      };
    } catch (error) {
      if (isDefiniteRefusal(error)) {
        if (error.code === 'resource_missing') throw errors.notFound('payment method token');
        const failure = failureOf(error);
        throw gatewayRefused(failure.failureCode, failure.failureMessage);
      }
      throw gatewayUnavailable(reasonOf(error));
    }
  },

  async charge(ctx, input) {
    const sent = await sendMoney((options) =>
      stripeClient(ctx).paymentIntents.create(
        {
          amount: input.amount,
          currency: input.currency.toLowerCase(),
          customer: input.paymentMethod.gatewayCustomerId ?? undefined,
          payment_method: input.paymentMethod.reference,
          // Saved methods are charged without the customer: never a redirecting method.
          automatic_payment_methods: { enabled: true, allow_redirects: 'never' },
          confirm: true,
          off_session: true,
          description: input.description,
          metadata: { ...input.metadata, kosh_idempotency_key: input.idempotencyKey },
        },
        { idempotencyKey: input.idempotencyKey, ...options },
      ),
    );
    switch (sent.kind) {
      case 'answered':
        return outcomeOfIntent(sent.value);
      case 'refused': {
        // A decline is a 402 whose body names the PaymentIntent it left behind.
        const intentId = idOf((sent.error.raw as { payment_intent?: { id: string } }).payment_intent);
        return { status: 'failed', gatewayPaymentId: intentId, ...failureOf(sent.error) };
      }
      case 'not_sent':
        // Nothing was charged: a failed attempt, which the retry schedule tries again.
        return {
          status: 'failed',
          gatewayPaymentId: null,
          failureCode: 'gateway_unreachable',
          failureMessage: `the payment gateway could not be reached; nothing was charged (${sent.reason})`,
        };
      case 'unknown':
        return { status: 'unknown', reason: sent.reason };
    }
  },

  async lookupCharge(ctx, input) {
    const stripe = stripeClient(ctx);
    try {
      if (input.gatewayPaymentId) return outcomeOfIntent(await stripe.paymentIntents.retrieve(input.gatewayPaymentId));
      const intent = (await searchByKey(stripe, input.idempotencyKey)) ?? (await scanRecentByKey(stripe, input.idempotencyKey, ctx.now));
      return intent ? outcomeOfIntent(intent) : { status: 'not_found' };
    } catch (error) {
      if (isDefiniteRefusal(error) && error.code === 'resource_missing') return { status: 'not_found' };
      return { status: 'unknown', reason: reasonOf(error) };
    }
  },

  async refund(ctx, input) {
    const sent = await sendMoney((options) =>
      stripeClient(ctx).refunds.create(
        {
          payment_intent: input.gatewayPaymentId,
          amount: input.amount,
          ...(refundReasons.has(input.reason) ? { reason: input.reason as Stripe.RefundCreateParams.Reason } : {}),
          metadata: { kosh_idempotency_key: input.idempotencyKey, kosh_reason: input.reason.slice(0, 500) },
        },
        { idempotencyKey: input.idempotencyKey, ...options },
      ),
    );
    if (sent.kind === 'answered') return outcomeOfRefund(sent.value);
    if (sent.kind === 'refused') return { status: 'failed', gatewayRefundId: null, ...failureOf(sent.error) };
    // Not sent or not known: the refund job runs again with the same key (a refund Stripe never saw
    // is simply made then), so the customer's refund is never failed for a network fault.
    return { status: 'unknown', reason: sent.kind === 'not_sent' ? `not sent: ${sent.reason}` : sent.reason };
  },

  async createCheckout(ctx, input) {
    try {
      const session = await stripeClient(ctx).checkout.sessions.create(
        {
          mode: 'payment',
          line_items: [
            { quantity: 1, price_data: { currency: input.currency.toLowerCase(), unit_amount: input.amount, product_data: { name: input.description } } },
          ],
          success_url: input.successUrl,
          cancel_url: input.cancelUrl,
          customer_email: input.customer.email,
          client_reference_id: input.metadata.checkout_session_id,
          metadata: { ...input.metadata },
          // The PaymentIntent's webhook carries these, so Kosh finds the invoice it pays.
          payment_intent_data: { description: input.description, metadata: { ...input.metadata, kosh_idempotency_key: input.idempotencyKey } },
        },
        { idempotencyKey: input.idempotencyKey },
      );
      if (!session.url) throw gatewayUnavailable('checkout session answered without a url');
      return { kind: 'redirect', url: session.url, gatewayReference: session.id };
    } catch (error) {
      if (isDefiniteRefusal(error)) {
        const failure = failureOf(error);
        throw gatewayRefused(failure.failureCode, failure.failureMessage);
      }
      if (isKoshError(error)) throw error;
      throw gatewayUnavailable(reasonOf(error));
    }
  },

  async lookupCheckout(ctx, gatewayReference) {
    const session = await readOrFail(() => stripeClient(ctx).checkout.sessions.retrieve(gatewayReference));
    const paymentIntent = idOf(session.payment_intent);
    if (session.mode !== 'payment' || session.payment_status !== 'paid' || !paymentIntent || session.amount_total === null || !session.currency) {
      return { status: 'open' };
    }
    return { status: 'paid', gatewayPaymentId: paymentIntent, amount: session.amount_total, currency: session.currency.toUpperCase(), paymentType: 'card' };
  },

  async createSetup(ctx, input) {
    const stripe = stripeClient(ctx);
    const session = await readOrFail(async () => {
      const customer = await stripe.customers.create(
        {
          email: input.customer.email,
          name: input.customer.name ?? undefined,
          phone: input.customer.phone ?? undefined,
          metadata: { kosh_customer_id: input.customer.id },
        },
        { idempotencyKey: `kosh_cus_${input.customer.id}` },
      );
      // Setup mode (https://docs.stripe.com/payments/save-and-reuse?platform=checkout): Checkout
      // makes a SetupIntent and attaches the card to the customer, for off-session charges.
      return stripe.checkout.sessions.create(
        {
          mode: 'setup',
          currency: input.currency.toLowerCase(),
          customer: customer.id,
          success_url: input.successUrl,
          cancel_url: input.cancelUrl,
          client_reference_id: input.metadata.setup_session_id,
          metadata: { ...input.metadata },
          setup_intent_data: { description: input.description, metadata: { ...input.metadata } },
        },
        { idempotencyKey: input.idempotencyKey },
      );
    });
    if (!session.url) throw gatewayUnavailable('checkout session answered without a url');
    return { url: session.url, gatewayReference: session.id };
  },

  async lookupSetup(ctx, gatewayReference) {
    const stripe = stripeClient(ctx);
    const session = await readOrFail(() => stripe.checkout.sessions.retrieve(gatewayReference));
    if (session.mode !== 'setup') return { status: 'failed', message: 'not a setup session' };
    if (session.status === 'expired') return { status: 'failed', message: 'the card was not saved before the page expired' };
    const setupIntentId = idOf(session.setup_intent);
    if (session.status !== 'complete' || !setupIntentId) return { status: 'open' };
    const intent = await readOrFail(() => stripe.setupIntents.retrieve(setupIntentId));
    const paymentMethodId = idOf(intent.payment_method);
    if (intent.status !== 'succeeded' || !paymentMethodId)
      return intent.status === 'canceled' ? { status: 'failed', message: 'the setup was canceled' } : { status: 'open' };
    const method = await readOrFail(() => stripe.paymentMethods.retrieve(paymentMethodId));
    return {
      status: 'complete',
      saved: {
        type: 'card',
        brand: method.card?.brand ?? null,
        last4: method.card?.last4 ?? null,
        reference: method.id,
        gatewayCustomerId: idOf(intent.customer) ?? idOf(session.customer),
        requiresPreDebitNotice: false,
      },
    };
  },

  verifyWebhook(input) {
    const signature = input.headers['stripe-signature'];
    const header = Array.isArray(signature) ? signature[0] : signature;
    if (!header || !input.webhookSecret) throw new GatewayWebhookSignatureError('missing Stripe-Signature');
    let event: Stripe.Event;
    try {
      // The SDK's own check (v1 HMAC-SHA256 over "{t}.{body}"), aged against Kosh's clock.
      event = Stripe.webhooks.constructEvent(input.rawBody, header, input.webhookSecret, STRIPE_WEBHOOK_TOLERANCE_SECONDS, undefined, input.now.getTime());
    } catch (error) {
      throw new GatewayWebhookSignatureError(error instanceof Error ? error.message : 'Stripe-Signature does not verify');
    }
    return webhookEvent(event);
  },
};
