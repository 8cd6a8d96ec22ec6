import { createHmac } from 'node:crypto';
import {
  deliverWebhooks,
  hostedPayPage,
  providerIdFactory,
  startProviderServer,
  type HostedCheckoutTarget,
  type ProviderAnswer,
  type ProviderServer,
  type RecordedRequest,
} from './provider-server.js';

/**
 * A Stripe-compatible API on 127.0.0.1, written from Stripe's public API reference
 * (https://docs.stripe.com/api): `Authorization: Bearer sk_…` (401 with Stripe's error body
 * otherwise), form-encoded bodies with bracket notation (`metadata[k]=v`, `line_items[0][…]`),
 * errors `{ error: { type, code, decline_code, message, param } }`, and idempotent requests:
 * the same `Idempotency-Key` with the same parameters replays the first answer (header
 * `Idempotent-Replayed: true`), with other parameters answers 400 `idempotency_error`.
 *
 * Covered: customers, PaymentMethods (Stripe's test tokens and `pm_card_*` ids, attach),
 * PaymentIntents (create with confirm/off_session, retrieve, search by metadata), Refunds,
 * Checkout Sessions (retrieve; setup mode with a SetupIntent, see `hostedSetupPage`; SetupIntents
 * retrieve) with a hosted page at their `url` (a Pay button: the session is paid with a
 * succeeded PaymentIntent carrying `payment_intent_data.metadata`, `checkout.session.completed`
 * and `payment_intent.succeeded` are POSTed signed to `hostedCheckout.webhookUrl`, then the
 * browser goes to `success_url`; paying again re-sends the same events, as a redelivery) and
 * signed webhook events (`Stripe-Signature: t=…,v1=…`). The test cards
 * behave as Stripe documents them: visa/mastercard succeed, `chargeDeclined` is declined
 * (`generic_decline`), `chargeDeclinedInsufficientFunds` is declined (`insufficient_funds`),
 * `authenticationRequired` needs 3-D Secure (declined off-session).
 */

type CardBehaviour = 'succeed' | 'generic_decline' | 'insufficient_funds' | 'authentication_required';
const testCards: Record<string, { brand: string; last4: string; behaviour: CardBehaviour }> = {
  visa: { brand: 'visa', last4: '4242', behaviour: 'succeed' },
  mastercard: { brand: 'mastercard', last4: '4444', behaviour: 'succeed' },
  chargeDeclined: { brand: 'visa', last4: '0002', behaviour: 'generic_decline' },
  chargeDeclinedInsufficientFunds: { brand: 'visa', last4: '9995', behaviour: 'insufficient_funds' },
  authenticationRequired: { brand: 'visa', last4: '3184', behaviour: 'authentication_required' },
};

type PaymentMethod = {
  id: string;
  object: 'payment_method';
  type: 'card';
  card: { brand: string; last4: string; exp_month: number; exp_year: number };
  customer: string | null;
  created: number;
  behaviour: CardBehaviour;
};
type PaymentIntent = {
  id: string;
  object: 'payment_intent';
  amount: number;
  amount_received: number;
  currency: string;
  status: 'requires_payment_method' | 'requires_confirmation' | 'requires_action' | 'processing' | 'succeeded' | 'canceled';
  customer: string | null;
  payment_method: string | null;
  description: string | null;
  metadata: Record<string, string>;
  last_payment_error: Record<string, unknown> | null;
  latest_charge: string | null;
  cancellation_reason: string | null;
  created: number;
  livemode: false;
  amount_refunded: number;
};
type Refund = {
  id: string;
  object: 'refund';
  amount: number;
  currency: string;
  payment_intent: string;
  charge: string | null;
  reason: string | null;
  status: 'pending' | 'succeeded' | 'failed';
  failure_reason: string | null;
  metadata: Record<string, string>;
  created: number;
};

type SetupIntent = {
  id: string;
  object: 'setup_intent';
  status: 'requires_payment_method' | 'succeeded' | 'canceled';
  customer: string | null;
  payment_method: string | null;
  usage: 'off_session';
  description: string | null;
  metadata: Record<string, string>;
  created: number;
  livemode: false;
};

export type StripeServer = ProviderServer & {
  secretKey: string;
  webhookSecret: string;
  customers: Map<string, { id: string; object: 'customer'; email: string | null; name: string | null; metadata: Record<string, string> }>;
  paymentMethods: Map<string, PaymentMethod>;
  paymentIntents: Map<string, PaymentIntent>;
  refunds: Map<string, Refund>;
  checkoutSessions: Map<string, Record<string, unknown>>;
  setupIntents: Map<string, SetupIntent>;
  /** Refunds are answered `succeeded` (default) or stay `pending`. */
  refundMode: 'succeeded' | 'pending';
  /**
   * The next refund created is answered `status: failed` with this `failure_reason` (Stripe's
   * documented values: `lost_or_stolen_card`, `expired_or_canceled_card`, `unknown`), and nothing
   * is refunded on its PaymentIntent; later refunds follow `refundMode` again.
   */
  failNextRefund(reason: 'lost_or_stolen_card' | 'expired_or_canceled_card' | 'unknown'): void;
  /** `false`: the Search API answers 400 `feature_not_enabled`, as for accounts without it. */
  searchAvailable: boolean;
  /** Where the hosted checkout page delivers its webhooks (unset: it delivers none). */
  hostedCheckout: HostedCheckoutTarget | null;
  /** What the hosted page delivered: the session, event type and id, and Kosh's answer. */
  hostedDeliveries: { reference: string; type: string; id: string; status: number }[];
  /** An event as Stripe delivers it: the raw body and `Stripe-Signature` for timestamp `at` (default now). */
  webhook(type: string, object: unknown, options?: { at?: Date; secret?: string; id?: string }): { rawBody: Buffer; headers: Record<string, string> };
};

/** Parses Stripe's form encoding: `a[b][c]=v`, `a[0][b]=v`, `a[]=v` into nested objects and arrays. */
export function parseStripeForm(raw: string): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  for (const [key, value] of new URLSearchParams(raw)) {
    const parts = key.replace(/\]/g, '').split('[');
    let node: Record<string, unknown> = root;
    parts.forEach((part, i) => {
      const name = part === '' ? String(Object.keys(node).length) : part;
      if (i === parts.length - 1) node[name] = value;
      else node = (node[name] ??= {}) as Record<string, unknown>;
    });
  }
  const arrays = (value: unknown): unknown => {
    if (typeof value !== 'object' || value === null) return value;
    const entries = Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, arrays(v)] as const);
    const numeric = entries.length > 0 && entries.every(([k]) => /^\d+$/.test(k));
    return numeric ? entries.sort((a, b) => Number(a[0]) - Number(b[0])).map(([, v]) => v) : Object.fromEntries(entries);
  };
  return arrays(root) as Record<string, unknown>;
}

const now = () => Math.floor(Date.now() / 1000);

function stripeError(
  status: number,
  error: { type: string; message: string; code?: string; decline_code?: string; param?: string; [extra: string]: unknown },
): ProviderAnswer {
  return { status, body: { error: { ...error, ...(error.code ? { doc_url: `https://stripe.com/docs/error-codes/${error.code.replace(/_/g, '-')}` } : {}) } } };
}
const invalid = (message: string, param?: string, code?: string, status = 400) =>
  stripeError(status, { type: 'invalid_request_error', message, ...(param ? { param } : {}), ...(code ? { code } : {}) });
const missing = (what: string, id: string, param: string, status = 400) => invalid(`No such ${what}: '${id}'`, param, 'resource_missing', status);

function integer(value: unknown): number | null {
  return typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : null;
}

export async function startStripeServer(options: { secretKey?: string; webhookSecret?: string } = {}): Promise<StripeServer> {
  const secretKey = options.secretKey ?? 'sk_test_kosh00000000000000000001';
  const webhookSecret = options.webhookSecret ?? 'whsec_kosh_test_secret';
  const newId = providerIdFactory();
  const customers: StripeServer['customers'] = new Map();
  const paymentMethods = new Map<string, PaymentMethod>();
  const paymentIntents = new Map<string, PaymentIntent>();
  const refunds = new Map<string, Refund>();
  const checkoutSessions = new Map<string, Record<string, unknown>>();
  const setupIntents = new Map<string, SetupIntent>();
  const idempotent = new Map<string, { fingerprint: string; answer: ProviderAnswer }>();
  const state = { refundMode: 'succeeded' as 'succeeded' | 'pending', searchAvailable: true, nextRefundFailure: null as string | null };
  let baseUrl = '';
  const hosted = { target: null as HostedCheckoutTarget | null, deliveries: [] as StripeServer['hostedDeliveries'] };
  /** Per session: `payment_intent_data` as sent, and the events its payment produced. */
  const sessionIntentData = new Map<string, { metadata: Record<string, string>; description: string | null }>();
  const sessionEvents = new Map<string, { type: string; id: string; object: unknown }[]>();

  const publicMethod = ({ behaviour: _behaviour, ...method }: PaymentMethod) => method;

  function paymentMethodFromTestName(name: string): PaymentMethod | undefined {
    const card = testCards[name];
    if (!card) return undefined;
    const method: PaymentMethod = {
      id: newId('pm'),
      object: 'payment_method',
      type: 'card',
      card: { brand: card.brand, last4: card.last4, exp_month: 12, exp_year: 2034 },
      customer: null,
      created: now(),
      behaviour: card.behaviour,
    };
    paymentMethods.set(method.id, method);
    return method;
  }

  function metadataOf(value: unknown): Record<string, string> | string {
    if (value === undefined || value === '') return {};
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'Invalid object';
    const entries = Object.entries(value as Record<string, unknown>);
    if (entries.length > 50) return 'Metadata can have at most 50 keys';
    for (const [k, v] of entries) if (k.length > 40 || String(v).length > 500) return 'Metadata keys are at most 40 and values at most 500 characters';
    return Object.fromEntries(entries.map(([k, v]) => [k, String(v)]));
  }

  function createPaymentIntent(body: Record<string, unknown>): ProviderAnswer {
    const amount = integer(body.amount);
    if (amount === null || amount < 1) return invalid('Invalid integer: amount', 'amount');
    if (typeof body.currency !== 'string' || !/^[a-z]{3}$/.test(body.currency)) return invalid('Invalid currency', 'currency');
    const metadata = metadataOf(body.metadata);
    if (typeof metadata === 'string') return invalid(metadata, 'metadata');
    const customer = typeof body.customer === 'string' ? body.customer : null;
    if (customer && !customers.has(customer)) return missing('customer', customer, 'customer');
    const confirm = body.confirm === 'true';
    if (body.off_session !== undefined && !confirm) return invalid('off_session can only be used when confirm=true', 'off_session');
    const methodId = typeof body.payment_method === 'string' ? body.payment_method : null;
    const method = methodId ? paymentMethods.get(methodId) : undefined;
    if (methodId && !method) return missing('PaymentMethod', methodId, 'payment_method');
    if (method?.customer && method.customer !== customer) {
      return invalid(
        'The provided PaymentMethod was previously attached to a Customer or was detached from a Customer. To use it, pass the Customer it is attached to.',
        'payment_method',
      );
    }
    const automatic = body.automatic_payment_methods as { enabled?: string; allow_redirects?: string } | undefined;
    if (confirm && automatic?.enabled === 'true' && automatic.allow_redirects !== 'never' && typeof body.return_url !== 'string') {
      return invalid(
        'This PaymentIntent is configured to accept payment methods enabled in your Dashboard that may require a redirect; provide a return_url or set automatic_payment_methods[allow_redirects]=never.',
        'return_url',
      );
    }
    const intent: PaymentIntent = {
      id: newId('pi'),
      object: 'payment_intent',
      amount,
      amount_received: 0,
      currency: body.currency,
      status: method ? 'requires_confirmation' : 'requires_payment_method',
      customer,
      payment_method: methodId,
      description: typeof body.description === 'string' ? body.description : null,
      metadata,
      last_payment_error: null,
      latest_charge: null,
      cancellation_reason: null,
      created: now(),
      livemode: false,
      amount_refunded: 0,
    };
    paymentIntents.set(intent.id, intent);
    if (!confirm) return { status: 200, body: intent };
    if (!method)
      return invalid("You cannot confirm this PaymentIntent because it's missing a payment method.", 'payment_method', 'payment_intent_unexpected_state');
    const charge = newId('ch');
    intent.latest_charge = charge;
    if (method.behaviour === 'succeed') {
      Object.assign(intent, { status: 'succeeded', amount_received: amount });
      return { status: 200, body: intent };
    }
    const decline =
      method.behaviour === 'authentication_required'
        ? {
            type: 'card_error',
            code: 'authentication_required',
            decline_code: 'authentication_required',
            message: 'Your card was declined. This transaction requires authentication.',
          }
        : method.behaviour === 'insufficient_funds'
          ? { type: 'card_error', code: 'card_declined', decline_code: 'insufficient_funds', message: 'Your card has insufficient funds.' }
          : { type: 'card_error', code: 'card_declined', decline_code: 'generic_decline', message: 'Your card was declined.' };
    Object.assign(intent, { status: 'requires_payment_method', last_payment_error: { ...decline, payment_method: publicMethod(method) } });
    return stripeError(402, { ...decline, charge, payment_intent: intent, payment_method: publicMethod(method) });
  }

  function createRefund(body: Record<string, unknown>): ProviderAnswer {
    const intentId = typeof body.payment_intent === 'string' ? body.payment_intent : '';
    const intent = paymentIntents.get(intentId);
    if (!intent) return missing('payment_intent', intentId, 'payment_intent');
    if (intent.status !== 'succeeded') return invalid('This PaymentIntent does not have a successful charge to refund.', 'payment_intent');
    const left = intent.amount_received - intent.amount_refunded;
    if (left === 0) return invalid(`Charge ${intent.latest_charge} has already been refunded.`, undefined, 'charge_already_refunded');
    const amount = body.amount === undefined ? left : integer(body.amount);
    if (amount === null || amount < 1) return invalid('Invalid positive integer', 'amount');
    if (amount > left) return invalid(`Refund amount (${amount}) is greater than unrefunded amount on charge (${left})`, 'amount', 'amount_too_large');
    if (body.reason !== undefined && !['duplicate', 'fraudulent', 'requested_by_customer'].includes(String(body.reason))) {
      return invalid('Invalid reason: must be one of duplicate, fraudulent, or requested_by_customer', 'reason');
    }
    const metadata = metadataOf(body.metadata);
    if (typeof metadata === 'string') return invalid(metadata, 'metadata');
    const refund: Refund = {
      id: newId('re'),
      object: 'refund',
      amount,
      currency: intent.currency,
      payment_intent: intent.id,
      charge: intent.latest_charge,
      reason: (body.reason as string | undefined) ?? null,
      status: state.nextRefundFailure ? 'failed' : state.refundMode,
      failure_reason: state.nextRefundFailure,
      metadata,
      created: now(),
    };
    state.nextRefundFailure = null;
    refunds.set(refund.id, refund);
    if (refund.status !== 'failed') intent.amount_refunded += amount;
    return { status: 200, body: refund };
  }

  function createCheckoutSession(body: Record<string, unknown>): ProviderAnswer {
    if (body.mode !== 'payment' && body.mode !== 'setup' && body.mode !== 'subscription') return invalid('Missing required param: mode.', 'mode');
    const lineItems = body.line_items as
      Array<{ quantity?: string; price_data?: { currency?: string; unit_amount?: string; product_data?: { name?: string } } }> | undefined;
    if (body.mode === 'payment' && (!Array.isArray(lineItems) || lineItems.length === 0))
      return invalid('You must provide at least one line item.', 'line_items');
    let total = 0;
    for (const [i, item] of (lineItems ?? []).entries()) {
      const unit = integer(item.price_data?.unit_amount);
      if (unit === null) return invalid('Missing required param: line_items[0][price_data][unit_amount].', `line_items[${i}][price_data][unit_amount]`);
      if (!item.price_data?.product_data?.name)
        return invalid('Missing required param: product_data[name].', `line_items[${i}][price_data][product_data][name]`);
      total += unit * (integer(item.quantity) ?? 1);
    }
    const metadata = metadataOf(body.metadata);
    if (typeof metadata === 'string') return invalid(metadata, 'metadata');
    const customer = typeof body.customer === 'string' ? body.customer : null;
    if (customer && !customers.has(customer)) return missing('customer', customer, 'customer');
    // Setup mode with dynamic payment methods needs the currency of the future payments.
    if (body.mode === 'setup' && (typeof body.currency !== 'string' || !/^[a-z]{3}$/.test(body.currency)))
      return invalid('currency is required in setup mode when payment_method_types is not set.', 'currency');
    if (body.mode === 'setup' && lineItems !== undefined) return invalid('line_items cannot be used in setup mode.', 'line_items');
    const id = `cs_test_${newId('s').slice(2)}`;
    const session = {
      id,
      object: 'checkout.session',
      mode: body.mode,
      status: 'open',
      payment_status: 'unpaid',
      amount_total: total,
      currency: lineItems?.[0]?.price_data?.currency ?? (body.currency as string | undefined) ?? null,
      customer,
      customer_email: body.customer_email ?? null,
      setup_intent: null,
      client_reference_id: body.client_reference_id ?? null,
      metadata,
      payment_intent: null,
      success_url: body.success_url ?? null,
      cancel_url: body.cancel_url ?? null,
      url: `${baseUrl}/c/pay/${id}`,
      expires_at: now() + 24 * 3600,
    };
    const intentData = (body.payment_intent_data ?? body.setup_intent_data ?? {}) as { metadata?: unknown; description?: string };
    const intentMetadata = metadataOf(intentData.metadata);
    if (typeof intentMetadata === 'string') return invalid(intentMetadata, 'payment_intent_data[metadata]');
    checkoutSessions.set(id, session);
    sessionIntentData.set(id, { metadata: intentMetadata, description: intentData.description ?? null });
    return { status: 200, body: session };
  }

  /** The hosted page at a session's `url`: GET shows it, POST pays (once) and delivers the events. */
  async function hostedPage(request: RecordedRequest, id: string): Promise<ProviderAnswer> {
    const session = checkoutSessions.get(id) as
      { amount_total: number; currency: string; payment_status: string; status: string; success_url: string; metadata: Record<string, string> } | undefined;
    if (!session) return { status: 404, body: null, text: 'No such checkout session' };
    if ((session as { mode?: string }).mode === 'setup') return hostedSetupPage(request, id);
    const amount = `${session.currency.toUpperCase()} ${(session.amount_total / 100).toFixed(2)}`;
    if (request.method === 'GET') return { status: 200, body: null, text: hostedPayPage('Stripe', id, amount, session.payment_status === 'paid') };
    if (session.payment_status !== 'paid') {
      const data = sessionIntentData.get(id)!;
      const intent: PaymentIntent = {
        id: newId('pi'),
        object: 'payment_intent',
        amount: session.amount_total,
        amount_received: session.amount_total,
        currency: session.currency,
        status: 'succeeded',
        customer: null,
        payment_method: paymentMethodFromTestName('visa')!.id,
        description: data.description,
        metadata: data.metadata,
        last_payment_error: null,
        latest_charge: newId('ch'),
        cancellation_reason: null,
        created: now(),
        livemode: false,
        amount_refunded: 0,
      };
      paymentIntents.set(intent.id, intent);
      Object.assign(session, { status: 'complete', payment_status: 'paid', payment_intent: intent.id });
      sessionEvents.set(id, [
        { type: 'checkout.session.completed', id: newId('evt'), object: { ...session } },
        { type: 'payment_intent.succeeded', id: newId('evt'), object: { ...intent } },
      ]);
    }
    const events = sessionEvents.get(id)!;
    if (hosted.target) {
      const at = hosted.target.now();
      const statuses = await deliverWebhooks(
        hosted.target,
        events.map((e) => webhook(e.type, e.object, { at, id: e.id })),
      );
      events.forEach((e, k) => hosted.deliveries.push({ reference: id, type: e.type, id: e.id, status: statuses[k]! }));
    }
    return { status: 303, body: null, text: '', headers: { location: session.success_url.replace('{CHECKOUT_SESSION_ID}', id) } };
  }

  /**
   * A setup-mode session's page (Checkout in setup mode): the customer enters a card (Stripe's
   * test Visa here), Stripe confirms a SetupIntent for off-session use, attaches the card to the
   * session's customer, completes the session, delivers `checkout.session.completed` and
   * `setup_intent.succeeded`, and sends the browser to `success_url`; again: the same events.
   */
  async function hostedSetupPage(request: RecordedRequest, id: string): Promise<ProviderAnswer> {
    const session = checkoutSessions.get(id) as { status: string; success_url: string; customer: string | null; metadata: Record<string, string> };
    if (request.method === 'GET')
      return { status: 200, body: null, text: hostedPayPage('Stripe', id, 'Save card for future payments', session.status === 'complete') };
    if (session.status !== 'complete') {
      const data = sessionIntentData.get(id)!;
      const method = paymentMethodFromTestName('visa')!;
      method.customer = session.customer;
      const intent: SetupIntent = {
        id: newId('seti'),
        object: 'setup_intent',
        status: 'succeeded',
        customer: session.customer,
        payment_method: method.id,
        usage: 'off_session',
        description: data.description,
        metadata: data.metadata,
        created: now(),
        livemode: false,
      };
      setupIntents.set(intent.id, intent);
      Object.assign(session, { status: 'complete', setup_intent: intent.id });
      sessionEvents.set(id, [
        { type: 'checkout.session.completed', id: newId('evt'), object: { ...session } },
        { type: 'setup_intent.succeeded', id: newId('evt'), object: { ...intent } },
      ]);
    }
    const events = sessionEvents.get(id)!;
    if (hosted.target) {
      const at = hosted.target.now();
      const statuses = await deliverWebhooks(
        hosted.target,
        events.map((e) => webhook(e.type, e.object, { at, id: e.id })),
      );
      events.forEach((e, k) => hosted.deliveries.push({ reference: id, type: e.type, id: e.id, status: statuses[k]! }));
    }
    return { status: 303, body: null, text: '', headers: { location: session.success_url.replace('{CHECKOUT_SESSION_ID}', id) } };
  }

  function route(request: RecordedRequest): ProviderAnswer {
    const body = request.body as Record<string, unknown>;
    const { method, path } = request;
    let m: RegExpMatchArray | null;
    if (method === 'POST' && path === '/v1/customers') {
      const metadata = metadataOf(body.metadata);
      if (typeof metadata === 'string') return invalid(metadata, 'metadata');
      const customer = {
        id: newId('cus'),
        object: 'customer' as const,
        email: (body.email as string | undefined) ?? null,
        name: (body.name as string | undefined) ?? null,
        metadata,
      };
      customers.set(customer.id, customer);
      return { status: 200, body: customer };
    }
    if (method === 'POST' && path === '/v1/payment_methods') {
      if (body.type !== 'card') return invalid('Invalid type', 'type');
      const token = String((body.card as { token?: string } | undefined)?.token ?? '');
      const created = token.startsWith('tok_') ? paymentMethodFromTestName(token.slice(4)) : undefined;
      return created ? { status: 200, body: publicMethod(created) } : missing('token', token, 'card[token]');
    }
    if ((m = path.match(/^\/v1\/payment_methods\/([^/]+)(\/attach)?$/))) {
      const id = m[1]!;
      if (method === 'GET' && !m[2]) {
        const found = paymentMethods.get(id);
        return found ? { status: 200, body: publicMethod(found) } : missing('PaymentMethod', id, 'payment_method', 404);
      }
      if (method === 'POST' && m[2]) {
        const found = id.startsWith('pm_card_') ? paymentMethodFromTestName(id.slice('pm_card_'.length)) : paymentMethods.get(id);
        if (!found) return missing('PaymentMethod', id, 'payment_method', 404);
        const customer = String(body.customer ?? '');
        if (!customers.has(customer)) return missing('customer', customer, 'customer');
        if (found.customer && found.customer !== customer)
          return invalid('The payment method you provided has already been attached to a customer.', 'payment_method');
        found.customer = customer;
        return { status: 200, body: publicMethod(found) };
      }
    }
    if (method === 'POST' && path === '/v1/payment_intents') return createPaymentIntent(body);
    if (method === 'GET' && path === '/v1/payment_intents/search') {
      if (!state.searchAvailable) return invalid('Search is not available for this account.', undefined, 'feature_not_enabled');
      const query = request.query.get('query') ?? '';
      const clause = query.match(/^metadata\['([^']+)'\]:'((?:[^'\\]|\\.)*)'$/);
      if (!clause) return invalid(`Invalid search query: ${query}`, 'query');
      const [, key, value] = clause;
      const data = [...paymentIntents.values()].filter((pi) => pi.metadata[key!] === value!.replace(/\\'/g, "'")).reverse();
      return { status: 200, body: { object: 'search_result', url: '/v1/payment_intents/search', has_more: false, next_page: null, data } };
    }
    if (method === 'GET' && path === '/v1/payment_intents') {
      const gte = integer(request.query.get('created[gte]') ?? undefined) ?? 0;
      const limit = Math.min(integer(request.query.get('limit') ?? undefined) ?? 10, 100);
      let newestFirst = [...paymentIntents.values()].filter((pi) => pi.created >= gte).reverse();
      const after = request.query.get('starting_after');
      if (after) newestFirst = newestFirst.slice(newestFirst.findIndex((pi) => pi.id === after) + 1);
      return { status: 200, body: { object: 'list', url: '/v1/payment_intents', has_more: newestFirst.length > limit, data: newestFirst.slice(0, limit) } };
    }
    if (method === 'GET' && (m = path.match(/^\/v1\/payment_intents\/([^/]+)$/))) {
      const intent = paymentIntents.get(m[1]!);
      return intent ? { status: 200, body: intent } : missing('payment_intent', m[1]!, 'intent', 404);
    }
    if (method === 'POST' && path === '/v1/refunds') return createRefund(body);
    if (method === 'GET' && (m = path.match(/^\/v1\/refunds\/([^/]+)$/))) {
      const refund = refunds.get(m[1]!);
      return refund ? { status: 200, body: refund } : missing('refund', m[1]!, 'id', 404);
    }
    if (method === 'POST' && path === '/v1/checkout/sessions') return createCheckoutSession(body);
    if (method === 'GET' && (m = path.match(/^\/v1\/checkout\/sessions\/([^/]+)$/))) {
      const session = checkoutSessions.get(m[1]!);
      return session ? { status: 200, body: session } : missing('checkout.session', m[1]!, 'session', 404);
    }
    if (method === 'GET' && (m = path.match(/^\/v1\/setup_intents\/([^/]+)$/))) {
      const intent = setupIntents.get(m[1]!);
      return intent ? { status: 200, body: intent } : missing('setup_intent', m[1]!, 'intent', 404);
    }
    return invalid(`Unrecognized request URL (${method}: ${path}).`, undefined, undefined, 404);
  }

  function handle(request: RecordedRequest): ProviderAnswer | Promise<ProviderAnswer> {
    const page = request.path.match(/^\/c\/pay\/([^/]+)$/);
    if (page) return hostedPage(request, page[1]!);
    const auth = request.headers.authorization ?? '';
    if (auth !== `Bearer ${secretKey}`) {
      const given = auth.replace(/^Bearer /, '');
      return invalid(
        given
          ? `Invalid API Key provided: ${given.slice(0, 8)}${'*'.repeat(Math.max(0, given.length - 12))}${given.slice(-4)}`
          : 'You did not provide an API key.',
        undefined,
        undefined,
        401,
      );
    }
    const key = request.headers['idempotency-key'];
    if (request.method !== 'POST' || typeof key !== 'string') return route(request);
    const fingerprint = `${request.method} ${request.path} ${request.rawBody}`;
    const earlier = idempotent.get(key);
    if (earlier) {
      if (earlier.fingerprint !== fingerprint) {
        return stripeError(400, {
          type: 'idempotency_error',
          message: `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${key}' if you meant to execute a different request.`,
        });
      }
      return { ...earlier.answer, headers: { ...(earlier.answer.headers ?? {}), 'idempotent-replayed': 'true' } };
    }
    const answer = route(request);
    // Stripe saves the result once the endpoint ran, errors included (not 401s or 429s).
    idempotent.set(key, { fingerprint, answer });
    return answer;
  }

  const server = await startProviderServer({
    parseBody: (raw) => parseStripeForm(raw),
    handle,
    serverErrorBody: () => ({ error: { type: 'api_error', message: 'An unknown error occurred' } }),
  });
  baseUrl = server.url;

  return {
    ...server,
    secretKey,
    webhookSecret,
    customers,
    paymentMethods,
    paymentIntents,
    refunds,
    checkoutSessions,
    setupIntents,
    get refundMode() {
      return state.refundMode;
    },
    failNextRefund(reason) {
      state.nextRefundFailure = reason;
    },
    set refundMode(mode) {
      state.refundMode = mode;
    },
    get searchAvailable() {
      return state.searchAvailable;
    },
    set searchAvailable(available) {
      state.searchAvailable = available;
    },
    get hostedCheckout() {
      return hosted.target;
    },
    set hostedCheckout(target) {
      hosted.target = target;
    },
    hostedDeliveries: hosted.deliveries,
    webhook,
  };

  function webhook(type: string, object: unknown, webhookOptions: { at?: Date; secret?: string; id?: string } = {}) {
    const created = Math.floor((webhookOptions.at ?? new Date()).getTime() / 1000);
    const rawBody = Buffer.from(
      JSON.stringify({
        id: webhookOptions.id ?? newId('evt'),
        object: 'event',
        api_version: '2026-10-28.endive',
        created,
        type,
        data: { object },
        livemode: false,
        pending_webhooks: 1,
        request: { id: null, idempotency_key: null },
      }),
    );
    const signature = createHmac('sha256', webhookOptions.secret ?? webhookSecret)
      .update(`${created}.${rawBody.toString('utf8')}`)
      .digest('hex');
    return { rawBody, headers: { 'content-type': 'application/json', 'stripe-signature': `t=${created},v1=${signature}` } };
  }
}
