import { createHash, createHmac } from 'node:crypto';
import { sameBytes } from '../../../platform/auth/secrets-compare.js';
import { errors } from '../../../platform/errors.js';
import {
  GatewayWebhookSignatureError,
  type ChargeInput,
  type ChargeOutcome,
  type GatewayAdapter,
  type GatewayCallContext,
  type GatewayWebhookEvent,
  type RefundOutcome,
  type SavedPaymentMethod,
  type SetupInput,
} from './gateway.js';
import { gatewayRefused, gatewayUnavailable, referenceFromKey, sendJson, withRetries, type ProviderResponse } from './gateway-http.js';

/**
 * Razorpay over its documented REST API (https://razorpay.com/docs/api/): Basic auth
 * `key_id:key_secret`, JSON bodies, amounts in the currency's subunits.
 *
 * Razorpay has no idempotency header on orders, payments or refunds, so exactly-once rests on
 * things Razorpay does keep: the order `receipt` (derived from Kosh's idempotency key, and
 * filterable with `GET /v1/orders?receipt=`), the fact that an order is paid at most once, and
 * the refund `receipt` listed under the payment. Every step first looks for what an earlier try
 * left behind and only then creates; a retry after a 5xx or a timeout runs the same step again.
 * The official `razorpay` SDK is not used: its API host is fixed to api.razorpay.com.
 */

type RazorpayError = {
  code?: string;
  description?: string;
  source?: string;
  step?: string;
  reason?: string;
  metadata?: Record<string, unknown>;
  field?: string | null;
};
type RazorpayPayment = {
  id: string;
  entity: 'payment';
  amount: number;
  currency: string;
  status: 'created' | 'authorized' | 'captured' | 'refunded' | 'failed';
  order_id: string | null;
  method: string;
  notes: Record<string, string> | unknown[];
  error_code: string | null;
  error_description: string | null;
  error_reason: string | null;
  token_id?: string | null;
};
type RazorpayOrder = {
  id: string;
  entity: 'order';
  amount: number;
  currency: string;
  receipt: string | null;
  status: string;
  payments?: { items: RazorpayPayment[] };
};
type RazorpayRefund = {
  id: string;
  entity: 'refund';
  amount: number;
  currency: string;
  payment_id: string;
  receipt: string | null;
  status: 'pending' | 'processed' | 'failed';
  notes: Record<string, string> | unknown[];
};
type RazorpayToken = {
  id: string;
  entity: 'token';
  method: string;
  recurring?: boolean;
  recurring_details?: { status: string; failure_reason: string | null };
  card?: { network: string | null; last4: string | null } | null;
  vpa?: { username: string | null; handle: string | null } | null;
};
type RazorpayPaymentLink = {
  id: string;
  short_url: string;
  reference_id: string | null;
  status: string;
  amount?: number;
  amount_paid?: number;
  currency?: string;
  payments?: { payment_id: string; amount: number; method: string; status: string }[] | null;
};
/** A registration link is an invoice entity (https://razorpay.com/docs/api/payments/recurring-payments/). */
type RazorpayInvoice = {
  id: string;
  entity: 'invoice';
  receipt: string | null;
  customer_id: string | null;
  payment_id: string | null;
  status: 'draft' | 'issued' | 'partially_paid' | 'paid' | 'cancelled' | 'expired' | 'deleted';
  short_url: string;
  notes?: Record<string, string> | unknown[];
};

type Step<T> = Promise<{ done: T } | { retry: string }>;

function call(ctx: GatewayCallContext, method: 'GET' | 'POST', path: string, body?: unknown): Promise<ProviderResponse> {
  const keyId = ctx.credentials.key_id ?? '';
  const keySecret = ctx.credentials.key_secret ?? '';
  return sendJson({
    url: `${ctx.baseUrl}${path}`,
    method,
    headers: {
      authorization: `Basic ${Buffer.from(`${keyId}:${keySecret}`).toString('base64')}`,
      accept: 'application/json',
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    timeoutMs: ctx.timeoutMs,
  });
}

function errorOf(body: unknown): RazorpayError {
  const error = (body as { error?: RazorpayError } | null)?.error;
  return error && typeof error === 'object' ? error : {};
}

/** Razorpay's `reason` is the specific word (`insufficient_funds`); `code` is the class (`BAD_REQUEST_ERROR`). */
function failureOf(error: RazorpayError): { failureCode: string; failureMessage: string } {
  const reason = error.reason && error.reason !== 'NA' ? error.reason : undefined;
  return {
    failureCode: reason ?? error.code?.toLowerCase() ?? 'gateway_error',
    failureMessage: error.description ?? 'the payment gateway refused the request',
  };
}

function notesOf(value: Record<string, string> | unknown[] | undefined | null): Record<string, string> {
  if (!value || Array.isArray(value)) return {};
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, String(v)]));
}

/** Razorpay's payment `method` as Kosh's payment type (cards are cards; UPI and the rest are recorded as UPI). */
const paymentTypeOf = (method: string): 'card' | 'upi' => (method === 'card' ? 'card' : 'upi');

function outcomeOfPayment(payment: RazorpayPayment): ChargeOutcome {
  switch (payment.status) {
    case 'captured':
    case 'refunded':
      return { status: 'succeeded', gatewayPaymentId: payment.id, paymentType: paymentTypeOf(payment.method) };
    case 'failed': {
      const reason = payment.error_reason && payment.error_reason !== 'NA' ? payment.error_reason : undefined;
      return {
        status: 'failed',
        gatewayPaymentId: payment.id,
        failureCode: reason ?? payment.error_code?.toLowerCase() ?? 'payment_failed',
        failureMessage: payment.error_description ?? 'payment failed',
      };
    }
    default:
      // created / authorized: accepted, not final (a mandate debit waits for the bank).
      return { status: 'pending', gatewayPaymentId: payment.id };
  }
}

/** Of an order's payments, the one that tells what happened: captured beats in-flight beats failed. */
function decisivePayment(payments: RazorpayPayment[]): RazorpayPayment | undefined {
  const rank = (p: RazorpayPayment) => ({ captured: 0, refunded: 0, authorized: 1, created: 1, failed: 2 })[p.status] ?? 3;
  return [...payments].sort((a, b) => rank(a) - rank(b))[0];
}

async function findOrderByReceipt(ctx: GatewayCallContext, receipt: string): Step<RazorpayOrder | null> {
  const found = await call(ctx, 'GET', `/v1/orders?receipt=${encodeURIComponent(receipt)}&expand[]=payments`);
  if (found.kind === 'unreadable') return { retry: found.reason };
  if (found.kind === 'refused') throw new RefusedError(errorOf(found.body));
  const items = (found.body as { items?: RazorpayOrder[] }).items ?? [];
  return { done: items.find((order) => order.receipt === receipt) ?? null };
}

/** A 4xx inside a step: the provider said no, definitely; carried out of the retry loop. */
class RefusedError extends Error {
  constructor(readonly error: RazorpayError) {
    super(error.description ?? 'refused');
  }
}

function notesFor(idempotencyKey: string, metadata: Record<string, string>): Record<string, string> {
  return { ...metadata, kosh_idempotency_key: idempotencyKey };
}

/** Across the tries of one charge: whether a debit request may have reached Razorpay. */
type ChargeTries = { debitMayHaveReached: boolean };

async function chargeStep(ctx: GatewayCallContext, input: ChargeInput, receipt: string, tries: ChargeTries): Step<ChargeOutcome> {
  const existing = await findOrderByReceipt(ctx, receipt);
  if ('retry' in existing) return existing;
  let order = existing.done;
  if (order) {
    const payment = decisivePayment(order.payments?.items ?? []);
    // The order for this key already carries a payment: that is the charge, whatever its state.
    if (payment) return { done: outcomeOfPayment(payment) };
    if (order.amount !== input.amount || order.currency !== input.currency) {
      return {
        done: {
          status: 'failed',
          gatewayPaymentId: null,
          failureCode: 'idempotency_key_reused',
          failureMessage: 'an order with this key exists for another amount',
        },
      };
    }
  } else {
    const created = await call(ctx, 'POST', '/v1/orders', {
      amount: input.amount,
      currency: input.currency,
      receipt,
      payment_capture: true,
      notes: notesFor(input.idempotencyKey, input.metadata),
    });
    if (created.kind === 'unreadable') return { retry: created.reason };
    if (created.kind === 'refused') return { done: { status: 'failed', gatewayPaymentId: null, ...failureOf(errorOf(created.body)) } };
    order = created.body as RazorpayOrder;
  }

  const paid = await call(ctx, 'POST', '/v1/payments/create/recurring', {
    email: input.customer.email,
    contact: input.customer.phone ?? undefined,
    amount: input.amount,
    currency: input.currency,
    order_id: order.id,
    customer_id: input.paymentMethod.gatewayCustomerId,
    token: input.paymentMethod.reference,
    recurring: '1',
    description: input.description,
    notes: notesFor(input.idempotencyKey, input.metadata),
  });
  if (paid.kind === 'unreadable') {
    // An order alone moves no money; only a debit request that may have arrived can have charged.
    if (!paid.notSent) tries.debitMayHaveReached = true;
    return { retry: paid.reason };
  }
  tries.debitMayHaveReached = true;
  if (paid.kind === 'refused') {
    const error = errorOf(paid.body);
    const paymentId = typeof error.metadata?.payment_id === 'string' ? error.metadata.payment_id : null;
    return { done: { status: 'failed', gatewayPaymentId: paymentId, ...failureOf(error) } };
  }
  const paymentId = (paid.body as { razorpay_payment_id?: string }).razorpay_payment_id;
  if (!paymentId) return { retry: 'recurring payment answer carried no razorpay_payment_id' };
  // The create call answers ids only; the payment's state is read back (retried on its own,
  // and if it stays unreadable the payment exists and is pending for a later lookup).
  const fetched = await withRetries(() => fetchPaymentStep(ctx, paymentId));
  return { done: 'done' in fetched ? outcomeOfPayment(fetched.done) : { status: 'pending', gatewayPaymentId: paymentId } };
}

async function fetchPaymentStep(ctx: GatewayCallContext, paymentId: string): Step<RazorpayPayment> {
  const found = await call(ctx, 'GET', `/v1/payments/${encodeURIComponent(paymentId)}`);
  if (found.kind === 'unreadable') return { retry: found.reason };
  if (found.kind === 'refused') throw new RefusedError(errorOf(found.body));
  return { done: found.body as RazorpayPayment };
}

async function refundStep(
  ctx: GatewayCallContext,
  paymentId: string,
  amount: number,
  receipt: string,
  idempotencyKey: string,
  reason: string,
): Step<RefundOutcome> {
  const path = `/v1/payments/${encodeURIComponent(paymentId)}`;
  const listed = await call(ctx, 'GET', `${path}/refunds?count=100`);
  if (listed.kind === 'unreadable') return { retry: listed.reason };
  if (listed.kind === 'refused') return { done: { status: 'failed', gatewayRefundId: null, ...failureOf(errorOf(listed.body)) } };
  const earlier = ((listed.body as { items?: RazorpayRefund[] }).items ?? []).find((refund) => refund.receipt === receipt);
  if (earlier) return { done: outcomeOfRefund(earlier) };
  const created = await call(ctx, 'POST', `${path}/refund`, {
    amount,
    speed: 'normal',
    receipt,
    notes: { kosh_idempotency_key: idempotencyKey, reason: reason.slice(0, 256) },
  });
  if (created.kind === 'unreadable') return { retry: created.reason };
  if (created.kind === 'refused') return { done: { status: 'failed', gatewayRefundId: null, ...failureOf(errorOf(created.body)) } };
  return { done: outcomeOfRefund(created.body as RazorpayRefund) };
}

function outcomeOfRefund(refund: RazorpayRefund): RefundOutcome {
  if (refund.status === 'processed') return { status: 'succeeded', gatewayRefundId: refund.id };
  if (refund.status === 'failed')
    return { status: 'failed', gatewayRefundId: refund.id, failureCode: 'refund_failed', failureMessage: 'the gateway could not process the refund' };
  return { status: 'pending', gatewayRefundId: refund.id };
}

/** Runs a lookup-only step with retries; a refusal or exhausted retries become an exception. */
async function mustRead<T>(step: () => Step<T>): Promise<T> {
  try {
    const result = await withRetries(step);
    if ('unresolved' in result) throw gatewayUnavailable(result.unresolved);
    return result.done;
  } catch (error) {
    if (error instanceof RefusedError) throw gatewayRefused(failureOf(error.error).failureCode, failureOf(error.error).failureMessage);
    throw error;
  }
}

function header(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const value = headers[name] ?? headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}

/** Hex HMAC-SHA256 of the raw body under the webhook secret (Razorpay's documented scheme). */
export function razorpaySignature(rawBody: Buffer | string, secret: string): string {
  return createHmac('sha256', secret).update(rawBody).digest('hex');
}

/**
 * The deduplication key of a delivery, from what the signature covers only: the event, its
 * entity's id and the SHA-256 of the signed body. `X-Razorpay-Event-Id` is not signed, so a
 * replayed body under a fresh header would be applied again (issue #29 item 10).
 */
function signedEventId(hook: RazorpayWebhook, rawBody: Buffer): string {
  const p = hook.payload;
  const entityId = p.refund?.entity?.id ?? p.payment?.entity?.id ?? p.payment_link?.entity?.id ?? p.token?.entity?.id ?? '';
  return `${hook.event}:${String(entityId).slice(0, 100)}:${createHash('sha256').update(rawBody).digest('hex')}`;
}

type RazorpayWebhook = {
  event: string;
  created_at?: number;
  payload: {
    payment?: { entity: RazorpayPayment };
    refund?: { entity: RazorpayRefund };
    token?: { entity: RazorpayToken };
    payment_link?: { entity: RazorpayPaymentLink & { notes?: Record<string, string> | unknown[] } };
    invoice?: { entity: RazorpayInvoice };
  };
};

function entitiesOf(hook: RazorpayWebhook): { payment?: RazorpayPayment; refund?: RazorpayRefund; token?: RazorpayToken } {
  return { payment: hook.payload.payment?.entity, refund: hook.payload.refund?.entity, token: hook.payload.token?.entity };
}

/** What every delivery says, whatever its event: the payment or refund it is about, its amount, notes and token. */
function webhookBase(eventId: string, hook: RazorpayWebhook): GatewayWebhookEvent {
  const { payment, refund, token } = entitiesOf(hook);
  return {
    eventId,
    type: 'ignored',
    gatewayPaymentId: payment?.id ?? refund?.payment_id ?? null,
    gatewayRefundId: refund?.id ?? null,
    amount: refund?.amount ?? payment?.amount ?? null,
    currency: refund?.currency ?? payment?.currency ?? null,
    failureCode: null,
    failureMessage: null,
    metadata: notesOf(refund?.notes ?? payment?.notes),
    paymentMethodReference: token?.id ?? payment?.token_id ?? null,
    paymentType: payment ? paymentTypeOf(payment.method) : undefined,
  };
}

/** A failed payment's reason, as its entity gives it. */
function paymentFailure(payment: RazorpayPayment | undefined): Pick<GatewayWebhookEvent, 'failureCode' | 'failureMessage'> {
  const outcome = payment ? outcomeOfPayment({ ...payment, status: 'failed' }) : null;
  return {
    failureCode: outcome?.status === 'failed' ? outcome.failureCode : 'payment_failed',
    failureMessage: outcome?.status === 'failed' ? outcome.failureMessage : 'payment failed',
  };
}

function webhookEvent(eventId: string, hook: RazorpayWebhook): GatewayWebhookEvent {
  const base = webhookBase(eventId, hook);
  switch (hook.event) {
    case 'payment.captured':
      return { ...base, type: 'payment.succeeded' };
    case 'payment_link.paid':
      // The link's notes carry Kosh's checkout metadata; the payment's own notes may be empty.
      return { ...base, type: 'payment.succeeded', metadata: { ...notesOf(hook.payload.payment_link?.entity.notes), ...base.metadata } };
    case 'payment.failed':
      return { ...base, type: 'payment.failed', ...paymentFailure(hook.payload.payment?.entity) };
    case 'refund.processed':
      return { ...base, type: 'refund.succeeded' };
    case 'refund.failed':
      return { ...base, type: 'refund.failed', failureCode: 'refund_failed', failureMessage: 'the gateway could not process the refund' };
    case 'invoice.paid': {
      // A registration link authorised (docs/decisions/0730): Kosh asks Razorpay for the token.
      const notes = notesOf(hook.payload.invoice?.entity.notes);
      return notes.setup_session_id ? { ...base, type: 'setup.completed', metadata: notes } : base;
    }
    case 'token.cancelled':
    case 'token.rejected':
    case 'token.paused':
      return { ...base, type: 'mandate.revoked', paymentMethodReference: hook.payload.token?.entity?.id ?? null };
    default:
      return base;
  }
}

function savedOfToken(token: RazorpayToken, customerId: string): SavedPaymentMethod {
  return {
    type: token.method === 'card' ? 'card' : 'upi_mandate',
    brand: token.method === 'card' ? (token.card?.network ?? null) : (token.vpa?.handle ?? 'upi'),
    last4: token.method === 'card' ? (token.card?.last4 ?? null) : null,
    reference: token.id,
    gatewayCustomerId: customerId,
    // Recurring tokens in India are e-mandates (UPI AutoPay, card e-mandates): RBI wants every
    // debit announced at least 24 h ahead.
    requiresPreDebitNotice: token.recurring === true,
  };
}

/** A GET whose 4xx is Razorpay's "no" (RefusedError) and whose unreadable answer is retried. */
async function getStep<T>(ctx: GatewayCallContext, path: string): Step<T> {
  const found = await call(ctx, 'GET', path);
  if (found.kind === 'unreadable') return { retry: found.reason };
  if (found.kind === 'refused') throw new RefusedError(errorOf(found.body));
  return { done: found.body as T };
}

/** The ₹1 authorisation payment a registration asks of the customer (Razorpay's minimum amount). */
const AUTHORISATION_AMOUNT = 100;

/**
 * A registration link (Razorpay: Recurring Payments → Create a Registration Link): Razorpay's
 * hosted page takes the authorisation payment and registers the UPI AutoPay / card mandate with
 * the limits Kosh showed the customer, then returns to `callback_url`.
 */
function registrationBody(input: SetupInput, receipt: string): Record<string, unknown> {
  const mandate = input.mandate;
  return {
    type: 'link',
    customer: { name: input.customer.name ?? input.customer.email, email: input.customer.email, contact: input.customer.phone ?? undefined },
    amount: AUTHORISATION_AMOUNT,
    currency: input.currency,
    description: input.description.slice(0, 2048),
    subscription_registration: {
      method: input.method === 'upi_mandate' ? 'upi' : 'card',
      ...(mandate
        ? {
            max_amount: mandate.maxAmount,
            frequency: mandate.frequency,
            ...(mandate.validUntil ? { expire_at: Math.floor(mandate.validUntil.getTime() / 1000) } : {}),
          }
        : {}),
    },
    receipt,
    email_notify: false,
    sms_notify: false,
    notes: notesFor(input.idempotencyKey, input.metadata),
    callback_url: input.successUrl,
    callback_method: 'get',
  };
}

export const razorpayAdapter: GatewayAdapter = {
  provider: 'razorpay',

  async attachPaymentMethod(ctx, input): Promise<SavedPaymentMethod> {
    let customerId = input.gatewayCustomerId;
    if (!customerId) {
      // fail_existing=0: Razorpay answers the existing customer with these details instead of
      // failing, so a retried attach does not create a second customer.
      const customer = await mustRead(async (): Step<{ id: string }> => {
        const created = await call(ctx, 'POST', '/v1/customers', {
          name: input.customer.name ?? input.customer.email,
          email: input.customer.email,
          contact: input.customer.phone ?? undefined,
          fail_existing: '0',
          notes: { kosh_customer_id: input.customer.id },
        });
        if (created.kind === 'unreadable') return { retry: created.reason };
        if (created.kind === 'refused') throw new RefusedError(errorOf(created.body));
        return { done: created.body as { id: string } };
      });
      customerId = customer.id;
    }
    const tokens = await mustRead(async (): Step<RazorpayToken[]> => {
      const listed = await call(ctx, 'GET', `/v1/customers/${encodeURIComponent(customerId)}/tokens`);
      if (listed.kind === 'unreadable') return { retry: listed.reason };
      if (listed.kind === 'refused') throw new RefusedError(errorOf(listed.body));
      return { done: (listed.body as { items?: RazorpayToken[] }).items ?? [] };
    });
    const token = tokens.find((candidate) => candidate.id === input.token);
    if (!token) throw errors.notFound('payment method token');
    if (token.method !== 'card' && token.method !== 'upi') {
      throw gatewayRefused('payment_method_unsupported', `Razorpay tokens of method ${token.method} are not supported`);
    }
    if (token.recurring_details && token.recurring_details.status !== 'confirmed') {
      throw gatewayRefused('mandate_not_confirmed', `the mandate is ${token.recurring_details.status}, not confirmed`);
    }
    return savedOfToken(token, customerId);
  },

  async charge(ctx, input) {
    const receipt = referenceFromKey(input.idempotencyKey);
    const tries: ChargeTries = { debitMayHaveReached: false };
    try {
      const result = await withRetries(() => chargeStep(ctx, input, receipt, tries));
      if ('done' in result) return result.done;
      if (tries.debitMayHaveReached) return { status: 'unknown', reason: result.unresolved };
      // No debit request ever arrived (refused connections, unreadable order calls): nothing was
      // charged, a failed attempt the retry schedule tries again (decision 0531).
      return {
        status: 'failed',
        gatewayPaymentId: null,
        failureCode: 'gateway_unreachable',
        failureMessage: `no debit reached the payment gateway; nothing was charged (${result.unresolved})`,
      };
    } catch (error) {
      if (error instanceof RefusedError) return { status: 'failed', gatewayPaymentId: null, ...failureOf(error.error) };
      throw error;
    }
  },

  async lookupCharge(ctx, input) {
    try {
      const result = await withRetries(async (): Step<ChargeOutcome | { status: 'not_found' }> => {
        if (input.gatewayPaymentId) {
          const fetched = await fetchPaymentStep(ctx, input.gatewayPaymentId);
          return 'done' in fetched ? { done: outcomeOfPayment(fetched.done) } : fetched;
        }
        const found = await findOrderByReceipt(ctx, referenceFromKey(input.idempotencyKey));
        if ('retry' in found) return found;
        const payment = decisivePayment(found.done?.payments?.items ?? []);
        // An order without a payment moved no money: charging with the same key reuses it.
        return { done: payment ? outcomeOfPayment(payment) : { status: 'not_found' } };
      });
      return 'done' in result ? result.done : { status: 'unknown', reason: result.unresolved };
    } catch (error) {
      if (error instanceof RefusedError) return { status: 'unknown', reason: `lookup refused: ${failureOf(error.error).failureMessage}` };
      throw error;
    }
  },

  async refund(ctx, input) {
    const receipt = referenceFromKey(input.idempotencyKey);
    const result = await withRetries(() => refundStep(ctx, input.gatewayPaymentId, input.amount, receipt, input.idempotencyKey, input.reason));
    return 'done' in result ? result.done : { status: 'unknown', reason: result.unresolved };
  },

  async createCheckout(ctx, input) {
    const referenceId = referenceFromKey(input.idempotencyKey);
    const link = await mustRead(async (): Step<RazorpayPaymentLink> => {
      const listed = await call(ctx, 'GET', `/v1/payment_links?reference_id=${encodeURIComponent(referenceId)}`);
      if (listed.kind === 'unreadable') return { retry: listed.reason };
      if (listed.kind === 'refused') throw new RefusedError(errorOf(listed.body));
      const earlier = ((listed.body as { payment_links?: RazorpayPaymentLink[] }).payment_links ?? []).find((l) => l.reference_id === referenceId);
      if (earlier) return { done: earlier };
      const created = await call(ctx, 'POST', '/v1/payment_links', {
        amount: input.amount,
        currency: input.currency,
        accept_partial: false,
        description: input.description.slice(0, 2048),
        reference_id: referenceId,
        customer: { name: input.customer.name ?? undefined, email: input.customer.email, contact: input.customer.phone ?? undefined },
        notify: { sms: false, email: false },
        reminder_enable: false,
        notes: notesFor(input.idempotencyKey, input.metadata),
        callback_url: input.successUrl,
        callback_method: 'get',
      });
      if (created.kind === 'unreadable') return { retry: created.reason };
      if (created.kind === 'refused') throw new RefusedError(errorOf(created.body));
      return { done: created.body as RazorpayPaymentLink };
    });
    return { kind: 'redirect', url: link.short_url, gatewayReference: link.id };
  },

  async lookupCheckout(ctx, gatewayReference) {
    const link = await mustRead(() => getStep<RazorpayPaymentLink>(ctx, `/v1/payment_links/${encodeURIComponent(gatewayReference)}`));
    const paid = (link.payments ?? []).find((p) => p.status === 'captured');
    if (link.status !== 'paid' || !paid || !link.currency) return { status: 'open' };
    return { status: 'paid', gatewayPaymentId: paid.payment_id, amount: paid.amount, currency: link.currency, paymentType: paymentTypeOf(paid.method) };
  },

  async createSetup(ctx, input) {
    const receipt = referenceFromKey(input.idempotencyKey);
    const link = await mustRead(async (): Step<RazorpayInvoice> => {
      // No idempotency header here either: an earlier try's link is found by its receipt first.
      const listed = await call(ctx, 'GET', `/v1/invoices?receipt=${encodeURIComponent(receipt)}`);
      if (listed.kind === 'unreadable') return { retry: listed.reason };
      if (listed.kind === 'refused') throw new RefusedError(errorOf(listed.body));
      const earlier = ((listed.body as { items?: RazorpayInvoice[] }).items ?? []).find((i) => i.receipt === receipt);
      if (earlier) return { done: earlier };
      const created = await call(ctx, 'POST', '/v1/subscription_registration/auth_links', registrationBody(input, receipt));
      if (created.kind === 'unreadable') return { retry: created.reason };
      if (created.kind === 'refused') throw new RefusedError(errorOf(created.body));
      return { done: created.body as RazorpayInvoice };
    });
    return { url: link.short_url, gatewayReference: link.id };
  },

  async lookupSetup(ctx, gatewayReference) {
    const link = await mustRead(() => getStep<RazorpayInvoice>(ctx, `/v1/invoices/${encodeURIComponent(gatewayReference)}`));
    if (link.status === 'cancelled' || link.status === 'expired' || link.status === 'deleted') {
      return { status: 'failed', message: `the registration link is ${link.status}` };
    }
    if (link.status !== 'paid' || !link.payment_id) return { status: 'open' };
    const payment = await mustRead(() => fetchPaymentStep(ctx, link.payment_id!));
    const customerId = link.customer_id;
    if (!payment.token_id || !customerId) return { status: 'open' };
    const tokens = await mustRead(() => getStep<{ items?: RazorpayToken[] }>(ctx, `/v1/customers/${encodeURIComponent(customerId)}/tokens`));
    const token = (tokens.items ?? []).find((candidate) => candidate.id === payment.token_id);
    // A UPI mandate is confirmed by the customer's bank after the authorisation: until then, open.
    if (!token || (token.recurring_details && token.recurring_details.status !== 'confirmed')) {
      return token?.recurring_details?.status === 'rejected' ? { status: 'failed', message: 'the bank rejected the mandate' } : { status: 'open' };
    }
    return { status: 'complete', saved: savedOfToken(token, customerId) };
  },

  verifyWebhook(input) {
    const given = header(input.headers, 'x-razorpay-signature');
    if (!given || !input.webhookSecret) throw new GatewayWebhookSignatureError('missing X-Razorpay-Signature');
    const expected = Buffer.from(razorpaySignature(input.rawBody, input.webhookSecret), 'hex');
    const received = /^[0-9a-f]+$/i.test(given) ? Buffer.from(given, 'hex') : Buffer.alloc(0);
    if (!sameBytes(received, expected)) {
      throw new GatewayWebhookSignatureError('X-Razorpay-Signature does not match the body');
    }
    let hook: RazorpayWebhook;
    try {
      hook = JSON.parse(input.rawBody.toString('utf8')) as RazorpayWebhook;
    } catch {
      throw new GatewayWebhookSignatureError('signed body is not JSON');
    }
    if (!hook || typeof hook.event !== 'string' || typeof hook.payload !== 'object' || hook.payload === null) {
      throw new GatewayWebhookSignatureError('signed body is not a Razorpay event');
    }
    return webhookEvent(signedEventId(hook, input.rawBody), hook);
  },
};
