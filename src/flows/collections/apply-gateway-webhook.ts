import type { Ctx } from '../../platform/context.js';
import { errors } from '../../platform/errors.js';
import { emitEvent } from '../../platform/events/events.js';
import { isUuid, newId } from '../../platform/ids.js';
import {
  attemptByGatewayPaymentId,
  findAttempt,
  findConnectionById,
  findPaymentMethod,
  findPaymentMethodByReference,
  findSetupSession,
  gatewayOf,
  GatewayWebhookSignatureError,
  holdGatewayEventForReview,
  openCredentials,
  recordGatewayEvent,
  refundByGatewayId,
  updatePaymentMethod,
  type AttemptRow,
  type CollectionsEnv,
  type GatewayEventReview,
  type GatewayWebhookEvent,
} from '../../modules/collections/index.js';
import { appendAudit } from '../../platform/audit/audit.js';
import { recordHostedCheckoutPayment } from './hosted-checkout-payment.js';
import { confirmSetup } from './setup-payment-method.js';
import { recordChargeOutcome } from './record-charge-outcomes.js';
import { recordRefundOutcome } from './refund-payment.js';

/**
 * POST /webhooks/gateways/{provider}/{connection_id}: verifies the provider's signature over the
 * raw body with the connection's webhook secret (bad → 400, nothing written), then in ONE
 * transaction records the provider's event id (a duplicate delivery changes nothing more) and
 * applies it: payment succeeded/failed settles the pending attempt, refund succeeded/failed the
 * pending refund, mandate revoked retires the saved UPI mandate. A signature proves who sent the
 * event, not that the amount is right: a payment whose amount or currency differs from the attempt
 * or checkout it names is not applied; the event is kept for review and `payment.mismatch` is
 * emitted (DESIGN §20, docs/decisions/0242).
 */
export async function receiveGatewayWebhook(
  env: CollectionsEnv,
  provider: string,
  connectionId: string,
  rawBody: Buffer,
  headers: Record<string, string | string[] | undefined>,
  now: Date,
): Promise<{ received: true; duplicate: boolean; type: string }> {
  const connection = await findConnectionById(env.db, connectionId);
  const gateway = gatewayOf(provider);
  if (!connection || connection.provider !== provider || !gateway) throw errors.notFound('gateway connection');
  const credentials = openCredentials(env, connection);
  let event: GatewayWebhookEvent;
  try {
    event = gateway.adapter.verifyWebhook({ rawBody, headers, webhookSecret: credentials.webhook_secret ?? '', now });
  } catch (error) {
    const message = error instanceof GatewayWebhookSignatureError ? error.message : 'the webhook could not be read';
    throw errors.validation(`webhook rejected: ${message}`, undefined, 'invalid_signature');
  }
  const tenantId = connection.tenant_id;
  if (event.type === 'setup.completed') await completeSetupFromEvent(env, tenantId, connection.id, event, now);
  return env.db.transaction().execute(async (tx) => {
    const ctx: Ctx = { tx, tenantId, now };
    const received: Received = { id: newId(), provider, connectionId: connection.id };
    const fresh = await recordGatewayEvent(tx, {
      tenant_id: tenantId,
      id: received.id,
      connection_id: connection.id,
      provider,
      event_id: event.eventId,
      type: event.type,
      received_at: now,
    });
    if (!fresh) return { received: true as const, duplicate: true, type: event.type };
    await applyEvent(ctx, received, event);
    return { received: true as const, duplicate: false, type: event.type };
  });
}

/**
 * A hosted setup finished (docs/decisions/0730): the event names Kosh's setup session, and Kosh
 * asks the provider what was saved — before the event is recorded, so a failure answers 5xx and
 * the provider delivers again. The completion is the return page's, once per session.
 */
async function completeSetupFromEvent(env: CollectionsEnv, tenantId: string, connectionId: string, event: GatewayWebhookEvent, now: Date): Promise<void> {
  const setupId = event.metadata.setup_session_id;
  if (!setupId || !isUuid(setupId) || event.metadata.tenant_id !== tenantId) return;
  const read = { tx: env.db, tenantId, now };
  const row = await findSetupSession(env.db, tenantId, setupId);
  if (!row || row.connection_id !== connectionId) return;
  await confirmSetup(env, read, setupId, (work) =>
    env.db.transaction().execute(async (tx) => {
      const ctx: Ctx = { tx, tenantId, now };
      const outcome = await work(ctx);
      if (outcome.kind !== 'complete' || !outcome.saved) return outcome;
      await appendAudit(tx, {
        tenantId,
        actor: { type: 'system', id: null, label: `${event.type} webhook` },
        action: 'payment_method.create',
        objectType: 'payment_method',
        objectId: outcome.paymentMethodId,
        changes: {},
        ip: null,
        requestId: null,
        at: now,
      });
      return outcome;
    }),
  );
}

/** The stored row of the event being applied (`id`) and where it came from. */
type Received = { id: string; provider: string; connectionId: string };

async function applyEvent(ctx: Ctx, received: Received, event: GatewayWebhookEvent): Promise<void> {
  switch (event.type) {
    case 'payment.succeeded':
    case 'payment.failed':
      return applyPaymentEvent(ctx, received, event);
    case 'refund.succeeded':
    case 'refund.failed':
      return applyRefundEvent(ctx, event);
    case 'mandate.revoked':
      return applyMandateRevoked(ctx, received.provider, event);
    default:
      return;
  }
}

/** The attempt a payment event is about: the one its metadata names (for this tenant), else the one with its gateway payment id. */
async function attemptOfEvent(ctx: Ctx, event: GatewayWebhookEvent): Promise<AttemptRow | undefined> {
  const hinted = event.metadata.attempt_id;
  const byMetadata = hinted && isUuid(hinted) && event.metadata.tenant_id === ctx.tenantId ? await findAttempt(ctx.tx, ctx.tenantId, hinted) : undefined;
  return byMetadata ?? (event.gatewayPaymentId ? await attemptByGatewayPaymentId(ctx.tx, ctx.tenantId, event.gatewayPaymentId) : undefined);
}

/** Payment succeeded/failed settles the pending attempt it names (a payment of no attempt may be a hosted checkout's). */
async function applyPaymentEvent(ctx: Ctx, received: Received, event: GatewayWebhookEvent): Promise<void> {
  const attempt = await attemptOfEvent(ctx, event);
  if (!attempt) {
    if (event.type === 'payment.succeeded') await applyHostedCheckoutPayment(ctx, received, event);
    return;
  }
  if (attempt.status !== 'pending') return;
  const paymentId = event.gatewayPaymentId ?? attempt.gateway_payment_id;
  if (event.type !== 'payment.succeeded') {
    await recordChargeOutcome(ctx, attempt.id, {
      status: 'failed',
      gatewayPaymentId: paymentId,
      failureCode: event.failureCode ?? 'payment_failed',
      failureMessage: event.failureMessage ?? 'The payment failed.',
    });
    return;
  }
  if (!paymentId) return;
  if (event.amount !== attempt.amount || event.currency?.toUpperCase() !== attempt.currency) {
    await holdForReview(ctx, received, event, { invoice_id: attempt.invoice_id, attempt_id: attempt.id, checkout_session_id: null }, attempt);
    return;
  }
  const pm = attempt.payment_method_id ? await findPaymentMethod(ctx.tx, ctx.tenantId, attempt.payment_method_id) : undefined;
  const upi = pm?.type === 'upi_mandate';
  await recordChargeOutcome(ctx, attempt.id, { status: 'succeeded', gatewayPaymentId: paymentId, paymentType: upi ? 'upi' : 'card' });
}

/**
 * Refund succeeded/failed settles the pending refund with that gateway id. A failure reported for
 * a refund the gateway had already paid (Stripe moves a succeeded refund to failed when the card
 * turned out closed) fails it after all: the same reversal as any failed refund (decision 0860).
 */
async function applyRefundEvent(ctx: Ctx, event: GatewayWebhookEvent): Promise<void> {
  const refund = event.gatewayRefundId ? await refundByGatewayId(ctx.tx, ctx.tenantId, event.gatewayRefundId) : undefined;
  if (!refund) return;
  if (refund.status !== 'pending' && !(refund.status === 'succeeded' && event.type === 'refund.failed')) return;
  await recordRefundOutcome(
    ctx,
    refund.id,
    event.type === 'refund.succeeded'
      ? { status: 'succeeded', gatewayRefundId: event.gatewayRefundId! }
      : {
          status: 'failed',
          gatewayRefundId: event.gatewayRefundId,
          failureCode: event.failureCode ?? 'refund_failed',
          failureMessage: event.failureMessage ?? 'The refund failed.',
        },
  );
}

/** Mandate revoked retires the saved payment methods with that reference. */
async function applyMandateRevoked(ctx: Ctx, provider: string, event: GatewayWebhookEvent): Promise<void> {
  if (!event.paymentMethodReference) return;
  for (const pm of await findPaymentMethodByReference(ctx.tx, ctx.tenantId, provider, event.paymentMethodReference)) {
    await updatePaymentMethod(ctx.tx, ctx.tenantId, pm.id, { status: 'revoked', is_default: false, updated_at: ctx.now });
  }
}

/** A payment on the provider's hosted checkout: the event names Kosh's checkout session in its metadata (see prepareCheckout). */
async function applyHostedCheckoutPayment(ctx: Ctx, received: Received, event: GatewayWebhookEvent): Promise<void> {
  const sessionId = event.metadata.checkout_session_id;
  if (!sessionId || !isUuid(sessionId) || event.metadata.tenant_id !== ctx.tenantId) return;
  if (!event.gatewayPaymentId) return;
  const outcome = await recordHostedCheckoutPayment(ctx, {
    sessionId,
    provider: received.provider,
    connectionId: received.connectionId,
    gatewayPaymentId: event.gatewayPaymentId,
    amount: event.amount,
    currency: event.currency?.toUpperCase() ?? null,
    paymentType: event.paymentType ?? 'card',
  });
  if (outcome.kind === 'mismatch') {
    await holdForReview(ctx, received, event, { invoice_id: outcome.invoiceId, attempt_id: null, checkout_session_id: sessionId }, outcome.expected);
  }
}

/**
 * A payment event that is not what Kosh asked for: nothing is applied (the attempt stays pending,
 * the session open), the stored event keeps what was expected and what arrived, and
 * `payment.mismatch` tells the tenant to look (a gateway misconfiguration, a currency-converting
 * checkout, or a forged amount under a leaked webhook secret).
 */
async function holdForReview(
  ctx: Ctx,
  received: Received,
  event: GatewayWebhookEvent,
  target: Pick<GatewayEventReview, 'invoice_id' | 'attempt_id' | 'checkout_session_id'>,
  expected: Pick<AttemptRow, 'amount' | 'currency'>,
): Promise<void> {
  const currency = event.currency?.toUpperCase() ?? null;
  const review: GatewayEventReview = {
    reason: currency === expected.currency ? 'amount_mismatch' : 'currency_mismatch',
    ...target,
    gateway_payment_id: event.gatewayPaymentId,
    expected: { amount: expected.amount, currency: expected.currency },
    received: { amount: event.amount, currency },
  };
  await holdGatewayEventForReview(ctx.tx, ctx.tenantId, received.id, review);
  await emitEvent(ctx, 'payment.mismatch', {
    id: received.id,
    object: 'gateway_event',
    provider: received.provider,
    connection_id: received.connectionId,
    event_id: event.eventId,
    ...review,
    received_at: ctx.now.toISOString(),
  });
}
