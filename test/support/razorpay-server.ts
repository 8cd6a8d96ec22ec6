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
 * A Razorpay-compatible API on 127.0.0.1, written from Razorpay's public API reference
 * (https://razorpay.com/docs/api/): Basic auth `key_id:key_secret` (401 with Razorpay's error body
 * otherwise), JSON bodies, amounts in subunits, collections `{ entity: 'collection', count, items }`,
 * errors `{ error: { code, description, source, step, reason, metadata, field } }`.
 *
 * Covered: customers (`fail_existing`), tokens of a customer, orders (filter by `receipt`,
 * `expand[]=payments`, paid at most once), recurring payments on saved tokens
 * (`/payments/create/recurring`), payments, refunds (full, partial, above what is left → 400),
 * Payment Links (`reference_id` unique, filter by it) with a hosted page at their `short_url` (a
 * Pay button: a captured card payment on an order of the link, `payment.captured` and
 * `payment_link.paid` POSTed signed to `hostedCheckout.webhookUrl`, then the browser goes to
 * `callback_url` with `razorpay_payment_id`, `razorpay_payment_link_id`,
 * `razorpay_payment_link_reference_id`, `razorpay_payment_link_status` and `razorpay_signature`
 * = HMAC-SHA256 of those four joined by `|` under key_secret; paying again re-sends the same
 * events, as a redelivery), Registration Links for recurring payments
 * (`/subscription_registration/auth_links`, answered as invoice entities, fetched with
 * `/invoices/{id}` or `/invoices?receipt=`; see `hostedRegistrationPage`) and signed webhook deliveries.
 * Razorpay does not make a `receipt` unique, and neither does this server: reusing one simply
 * creates a second order, so the adapter's look-before-create is what keeps a charge single.
 * Tokens are seeded with `addToken` (on Razorpay they come from a customer's first Checkout
 * payment) and carry the outcome their debits get.
 */

export type TokenOutcome = { kind: 'capture' } | { kind: 'pending' } | { kind: 'fail'; reason: string; description: string };

type Customer = { id: string; entity: 'customer'; name: string; email: string; contact: string | null; notes: Record<string, string>; created_at: number };
type Token = {
  id: string;
  entity: 'token';
  customer_id: string;
  method: 'card' | 'upi';
  recurring: boolean;
  recurring_details: { status: string; failure_reason: string | null };
  card: { entity: 'card'; network: string; last4: string; type: string; issuer: string | null } | null;
  vpa: { username: string; handle: string; name: string | null } | null;
  created_at: number;
  /** The mandate's limits, from the registration (Razorpay's token carries them). */
  max_amount?: number | null;
  expired_at?: number | null;
  frequency?: string | null;
  outcome: TokenOutcome;
};
type Payment = {
  id: string;
  entity: 'payment';
  amount: number;
  currency: string;
  status: 'created' | 'authorized' | 'captured' | 'refunded' | 'failed';
  order_id: string;
  method: string;
  amount_refunded: number;
  refund_status: 'partial' | 'full' | null;
  captured: boolean;
  description: string | null;
  email: string | null;
  contact: string | null;
  customer_id: string;
  token_id: string;
  recurring: boolean;
  notes: Record<string, string>;
  error_code: string | null;
  error_description: string | null;
  error_source: string | null;
  error_step: string | null;
  error_reason: string | null;
  created_at: number;
};
type Order = {
  id: string;
  entity: 'order';
  amount: number;
  amount_paid: number;
  amount_due: number;
  currency: string;
  receipt: string | null;
  status: 'created' | 'attempted' | 'paid';
  attempts: number;
  notes: Record<string, string>;
  created_at: number;
};
type Refund = {
  id: string;
  entity: 'refund';
  amount: number;
  currency: string;
  payment_id: string;
  receipt: string | null;
  notes: Record<string, string>;
  status: 'pending' | 'processed' | 'failed';
  speed_requested: string;
  created_at: number;
};
type PaymentLink = {
  id: string;
  amount: number;
  amount_paid: number;
  currency: string;
  accept_partial: boolean;
  description: string;
  reference_id: string | null;
  customer: Record<string, string>;
  notify: { sms: boolean; email: boolean };
  reminder_enable: boolean;
  notes: Record<string, string>;
  callback_url: string | null;
  callback_method: string | null;
  short_url: string;
  status: 'created' | 'paid' | 'cancelled' | 'expired';
  payments: unknown[];
  created_at: number;
};

/** A registration link: Razorpay answers it as an invoice entity (`inv_…`) with a `short_url`. */
type RegistrationLink = {
  id: string;
  entity: 'invoice';
  type: 'link';
  receipt: string | null;
  customer_id: string;
  customer_details: { name: string; email: string; contact: string | null };
  order_id: string;
  payment_id: string | null;
  status: 'issued' | 'paid' | 'cancelled' | 'expired';
  amount: number;
  amount_paid: number;
  currency: string;
  description: string;
  subscription_registration: { method: 'upi' | 'card' | 'emandate'; max_amount: number | null; expire_at: number | null; frequency: string | null };
  notes: Record<string, string>;
  callback_url: string | null;
  callback_method: string | null;
  short_url: string;
  email_notify: boolean;
  sms_notify: boolean;
  created_at: number;
  paid_at: number | null;
};

export type RazorpayServer = ProviderServer & {
  keyId: string;
  keySecret: string;
  webhookSecret: string;
  customers: Map<string, Customer>;
  tokens: Map<string, Token>;
  orders: Map<string, Order>;
  payments: Map<string, Payment>;
  refunds: Map<string, Refund>;
  paymentLinks: Map<string, PaymentLink>;
  registrationLinks: Map<string, RegistrationLink>;
  /** Refunds are answered `processed` (default) or stay `pending` until `processRefund`. */
  refundMode: 'processed' | 'pending';
  /** A confirmed recurring token for a customer (created if new), as a first Checkout payment leaves. */
  addToken(input: {
    email: string;
    name?: string;
    contact?: string;
    method: 'card' | 'upi';
    network?: string;
    last4?: string;
    outcome?: TokenOutcome;
    status?: string;
  }): { customerId: string; tokenId: string };
  /** A pending (mandate) payment reaching its final state, as the bank's answer arrives. */
  settlePayment(paymentId: string, status: 'captured' | 'failed'): Payment;
  /** Where the hosted Payment Link page delivers its webhooks (unset: it delivers none). */
  hostedCheckout: HostedCheckoutTarget | null;
  /** What the hosted page delivered: the link, event and id, and Kosh's answer. */
  /** Each hosted-page delivery, with what was sent (a redelivery sends those same bytes). */
  hostedDeliveries: { reference: string; type: string; id: string; status: number; sent: { rawBody: Buffer; headers: Record<string, string> } }[];
  /** A delivery as Razorpay sends it: the raw body and its headers (signature, event id). */
  webhook(
    event: string,
    entities: { payment?: unknown; refund?: unknown; token?: unknown; payment_link?: unknown; order?: unknown; invoice?: unknown },
    options?: { secret?: string; eventId?: string },
  ): { rawBody: Buffer; headers: Record<string, string> };
};

const now = () => Math.floor(Date.now() / 1000);

function error(
  status: number,
  description: string,
  extra: { code?: string; field?: string; reason?: string; source?: string; step?: string; metadata?: Record<string, unknown> } = {},
): ProviderAnswer {
  return {
    status,
    body: {
      error: {
        code: extra.code ?? (status >= 500 ? 'SERVER_ERROR' : 'BAD_REQUEST_ERROR'),
        description,
        source: extra.source ?? (status >= 500 ? 'internal' : 'business'),
        step: extra.step ?? 'NA',
        reason: extra.reason ?? 'NA',
        metadata: extra.metadata ?? {},
        ...(extra.field ? { field: extra.field } : {}),
      },
    },
  };
}

const collection = <T>(items: T[]) => ({ entity: 'collection', count: items.length, items });

function notesOf(value: unknown): Record<string, string> | string {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) return 'notes must be an object';
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length > 15) return 'notes can have at most 15 keys';
  for (const [, v] of entries) if (String(v).length > 256) return 'notes values can be at most 256 characters';
  return Object.fromEntries(entries.map(([k, v]) => [k, String(v)]));
}

export async function startRazorpayServer(options: { keyId?: string; keySecret?: string; webhookSecret?: string } = {}): Promise<RazorpayServer> {
  const keyId = options.keyId ?? 'rzp_test_kosh0000000001';
  const keySecret = options.keySecret ?? 'kosh_razorpay_test_secret';
  const webhookSecret = options.webhookSecret ?? 'kosh_razorpay_webhook_secret';
  const newId = providerIdFactory();
  const customers = new Map<string, Customer>();
  const tokens = new Map<string, Token>();
  const orders = new Map<string, Order>();
  const payments = new Map<string, Payment>();
  const refunds = new Map<string, Refund>();
  const paymentLinks = new Map<string, PaymentLink>();
  const registrationLinks = new Map<string, RegistrationLink>();
  let baseUrl = '';
  const state = { refundMode: 'processed' as 'processed' | 'pending' };

  const publicToken = ({ outcome: _outcome, customer_id: _customer, ...token }: Token) => token;

  function findOrCreateCustomer(input: { name?: string; email: string; contact?: string | null; notes?: Record<string, string> }): Customer {
    const existing = [...customers.values()].find((c) => c.email === input.email && (c.contact ?? null) === (input.contact ?? null));
    if (existing) return existing;
    const customer: Customer = {
      id: newId('cust'),
      entity: 'customer',
      name: input.name ?? '',
      email: input.email,
      contact: input.contact ?? null,
      notes: input.notes ?? {},
      created_at: now(),
    };
    customers.set(customer.id, customer);
    return customer;
  }

  function orderWithPayments(order: Order) {
    const items = [...payments.values()].filter((p) => p.order_id === order.id);
    return { ...order, payments: collection(items) };
  }

  const hosted = { target: null as HostedCheckoutTarget | null, deliveries: [] as RazorpayServer['hostedDeliveries'] };
  const linkEvents = new Map<string, { event: string; id: string; entities: Parameters<RazorpayServer['webhook']>[1] }[]>();

  /** The hosted page at a link's `short_url`: GET shows it, POST pays it (once), delivers the events and goes to `callback_url`. */
  async function hostedPage(request: RecordedRequest, short: string): Promise<ProviderAnswer> {
    const link = paymentLinks.get(`plink_${short}`);
    if (!link) return { status: 404, body: null, text: 'No such payment link' };
    const amount = `${link.currency} ${(link.amount / 100).toFixed(2)}`;
    if (request.method === 'GET') return { status: 200, body: null, text: hostedPayPage('Razorpay', link.description, amount, link.status === 'paid') };
    if (link.status !== 'paid') {
      const order: Order = {
        id: newId('order'),
        entity: 'order',
        amount: link.amount,
        amount_paid: 0,
        amount_due: link.amount,
        currency: link.currency,
        receipt: null,
        status: 'created',
        attempts: 1,
        notes: {},
        created_at: now(),
      };
      orders.set(order.id, order);
      const payment: Payment = {
        id: newId('pay'),
        entity: 'payment',
        amount: link.amount,
        currency: link.currency,
        status: 'created',
        order_id: order.id,
        method: 'card',
        amount_refunded: 0,
        refund_status: null,
        captured: false,
        description: link.description,
        email: link.customer.email ?? null,
        contact: link.customer.contact ?? null,
        customer_id: '',
        token_id: '',
        recurring: false,
        notes: {},
        error_code: null,
        error_description: null,
        error_source: null,
        error_step: null,
        error_reason: null,
        created_at: now(),
      };
      payments.set(payment.id, payment);
      capture(payment);
      Object.assign(link, { status: 'paid', amount_paid: link.amount });
      link.payments.push({ payment_id: payment.id, amount: payment.amount, method: payment.method, status: 'captured', created_at: payment.created_at });
      linkEvents.set(link.id, [
        { event: 'payment.captured', id: newId('evt'), entities: { payment: { ...payment } } },
        { event: 'payment_link.paid', id: newId('evt'), entities: { payment_link: { ...link }, payment: { ...payment }, order: { ...order } } },
      ]);
    }
    const events = linkEvents.get(link.id)!;
    if (hosted.target) {
      const sent = events.map((e) => self.webhook(e.event, e.entities, { eventId: e.id }));
      const statuses = await deliverWebhooks(hosted.target, sent);
      events.forEach((e, k) => hosted.deliveries.push({ reference: link.id, type: e.event, id: e.id, status: statuses[k]!, sent: sent[k]! }));
    }
    const paymentId = link.payments[0] ? (link.payments[0] as { payment_id: string }).payment_id : '';
    const back = new URL(link.callback_url ?? `${baseUrl}/`);
    const reference = link.reference_id ?? '';
    back.searchParams.set('razorpay_payment_id', paymentId);
    back.searchParams.set('razorpay_payment_link_id', link.id);
    back.searchParams.set('razorpay_payment_link_reference_id', reference);
    back.searchParams.set('razorpay_payment_link_status', link.status);
    back.searchParams.set('razorpay_signature', createHmac('sha256', keySecret).update(`${link.id}|${reference}|${link.status}|${paymentId}`).digest('hex'));
    return { status: 303, body: null, text: '', headers: { location: back.toString() } };
  }

  /**
   * Create a Registration Link (Recurring Payments): the customer (created if new, as
   * `fail_existing: 0`), an order for the authorisation amount carrying the token's terms, and the
   * link, an invoice entity with a hosted page at `short_url`.
   */
  function createRegistrationLink(body: Record<string, unknown>): ProviderAnswer {
    const customerIn = (body.customer ?? {}) as Record<string, unknown>;
    if (typeof customerIn.email !== 'string' || typeof customerIn.name !== 'string')
      return error(400, 'The customer name and email are required.', { field: 'customer' });
    if (body.type !== 'link') return error(400, 'The type field is invalid.', { field: 'type' });
    if (!Number.isInteger(body.amount) || (body.amount as number) < 100) return error(400, 'The amount must be atleast INR 1.00', { field: 'amount' });
    if (body.currency !== 'INR') return error(400, 'Currency is not supported', { field: 'currency' });
    if (typeof body.description !== 'string' || body.description === '') return error(400, 'The description field is required.', { field: 'description' });
    const registration = (body.subscription_registration ?? {}) as Record<string, unknown>;
    if (!['upi', 'card', 'emandate'].includes(String(registration.method)))
      return error(400, 'The subscription_registration.method field is invalid.', { field: 'subscription_registration.method' });
    const maxAmount = registration.max_amount === undefined ? null : registration.max_amount;
    if (maxAmount !== null && (!Number.isInteger(maxAmount) || (maxAmount as number) < 100))
      return error(400, 'The max amount must be atleast INR 1.00', { field: 'subscription_registration.max_amount' });
    if (registration.method === 'upi' && maxAmount === null)
      return error(400, 'The max amount field is required.', { field: 'subscription_registration.max_amount' });
    if (typeof body.receipt === 'string' && body.receipt.length > 40)
      return error(400, 'The receipt may not be greater than 40 characters.', { field: 'receipt' });
    const notes = notesOf(body.notes);
    if (typeof notes === 'string') return error(400, notes, { field: 'notes' });
    const customer = findOrCreateCustomer({ name: customerIn.name, email: customerIn.email, contact: (customerIn.contact as string | undefined) ?? null });
    const order: Order = {
      id: newId('order'),
      entity: 'order',
      amount: body.amount as number,
      amount_paid: 0,
      amount_due: body.amount as number,
      currency: 'INR',
      receipt: (body.receipt as string | undefined) ?? null,
      status: 'created',
      attempts: 0,
      notes,
      created_at: now(),
    };
    orders.set(order.id, order);
    const id = newId('inv');
    const link: RegistrationLink = {
      id,
      entity: 'invoice',
      type: 'link',
      receipt: (body.receipt as string | undefined) ?? null,
      customer_id: customer.id,
      customer_details: { name: customer.name, email: customer.email, contact: customer.contact },
      order_id: order.id,
      payment_id: null,
      status: 'issued',
      amount: order.amount,
      amount_paid: 0,
      currency: 'INR',
      description: body.description,
      subscription_registration: {
        method: registration.method as 'upi' | 'card' | 'emandate',
        max_amount: maxAmount as number | null,
        expire_at: typeof registration.expire_at === 'number' ? registration.expire_at : null,
        frequency: typeof registration.frequency === 'string' ? registration.frequency : null,
      },
      notes,
      callback_url: (body.callback_url as string | undefined) ?? null,
      callback_method: (body.callback_method as string | undefined) ?? null,
      short_url: `${baseUrl}/rl/${id}`,
      email_notify: body.email_notify === true,
      sms_notify: body.sms_notify === true,
      created_at: now(),
      paid_at: null,
    };
    registrationLinks.set(id, link);
    return { status: 200, body: link };
  }

  const registrationEvents = new Map<string, { event: string; id: string; entities: Parameters<RazorpayServer['webhook']>[1] }[]>();

  /**
   * A registration link's hosted page: GET shows the mandate's terms, POST authorises it (once): the
   * authorisation payment is captured, a confirmed recurring token with the registration's limits
   * is made, `token.confirmed`, `payment.captured` and `invoice.paid` are delivered signed, and the
   * browser goes to `callback_url` with `razorpay_payment_id`, `razorpay_invoice_id`,
   * `razorpay_invoice_status`, `razorpay_invoice_receipt` and `razorpay_signature`; again: the same events.
   */
  async function hostedRegistrationPage(request: RecordedRequest, id: string): Promise<ProviderAnswer> {
    const link = registrationLinks.get(id);
    if (!link) return { status: 404, body: null, text: 'No such registration link' };
    const reg = link.subscription_registration;
    const terms = `${reg.method} mandate up to INR ${((reg.max_amount ?? 0) / 100).toFixed(2)} ${reg.frequency ?? ''}`.trim();
    if (request.method === 'GET')
      return { status: 200, body: null, text: hostedPayPage('Razorpay', `${link.description} — ${terms}`, 'INR 1.00', link.status === 'paid') };
    if (link.status === 'issued') {
      const customer = customers.get(link.customer_id)!;
      const tokenMethod = reg.method === 'card' ? 'card' : 'upi';
      const token: Token = {
        id: newId('token'),
        entity: 'token',
        customer_id: customer.id,
        method: tokenMethod,
        recurring: true,
        recurring_details: { status: 'confirmed', failure_reason: null },
        card: tokenMethod === 'card' ? { entity: 'card', network: 'Visa', last4: '1111', type: 'credit', issuer: null } : null,
        vpa: tokenMethod === 'upi' ? { username: 'customer', handle: 'okhdfcbank', name: customer.name } : null,
        created_at: now(),
        max_amount: reg.max_amount,
        expired_at: reg.expire_at,
        frequency: reg.frequency,
        outcome: tokenMethod === 'upi' ? { kind: 'pending' } : { kind: 'capture' },
      };
      tokens.set(token.id, token);
      const order = orders.get(link.order_id)!;
      const payment: Payment = {
        id: newId('pay'),
        entity: 'payment',
        amount: link.amount,
        currency: link.currency,
        status: 'created',
        order_id: order.id,
        method: tokenMethod,
        amount_refunded: 0,
        refund_status: null,
        captured: false,
        description: link.description,
        email: customer.email,
        contact: customer.contact,
        customer_id: customer.id,
        token_id: token.id,
        recurring: true,
        notes: { ...link.notes },
        error_code: null,
        error_description: null,
        error_source: null,
        error_step: null,
        error_reason: null,
        created_at: now(),
      };
      payments.set(payment.id, payment);
      capture(payment);
      Object.assign(link, { status: 'paid', payment_id: payment.id, amount_paid: link.amount, paid_at: now() });
      registrationEvents.set(link.id, [
        { event: 'token.confirmed', id: newId('evt'), entities: { token: publicToken(token) } },
        { event: 'payment.captured', id: newId('evt'), entities: { payment: { ...payment } } },
        { event: 'invoice.paid', id: newId('evt'), entities: { invoice: { ...link }, payment: { ...payment }, order: { ...order } } },
      ]);
    }
    const events = registrationEvents.get(link.id) ?? [];
    if (hosted.target) {
      const sent = events.map((e) => self.webhook(e.event, e.entities, { eventId: e.id }));
      const statuses = await deliverWebhooks(hosted.target, sent);
      events.forEach((e, k) => hosted.deliveries.push({ reference: link.id, type: e.event, id: e.id, status: statuses[k]!, sent: sent[k]! }));
    }
    const back = new URL(link.callback_url ?? `${baseUrl}/`);
    const receipt = link.receipt ?? '';
    const paymentId = link.payment_id ?? '';
    back.searchParams.set('razorpay_payment_id', paymentId);
    back.searchParams.set('razorpay_invoice_id', link.id);
    back.searchParams.set('razorpay_invoice_status', link.status);
    back.searchParams.set('razorpay_invoice_receipt', receipt);
    back.searchParams.set('razorpay_signature', createHmac('sha256', keySecret).update(`${link.id}|${receipt}|${link.status}|${paymentId}`).digest('hex'));
    return { status: 303, body: null, text: '', headers: { location: back.toString() } };
  }

  function handle(request: RecordedRequest): ProviderAnswer | Promise<ProviderAnswer> {
    const page = request.path.match(/^\/i\/([^/]+)$/);
    if (page) return hostedPage(request, page[1]!);
    const registration = request.path.match(/^\/rl\/([^/]+)$/);
    if (registration) return hostedRegistrationPage(request, registration[1]!);
    const auth = request.headers.authorization ?? '';
    const expected = `Basic ${Buffer.from(`${keyId}:${keySecret}`).toString('base64')}`;
    if (auth !== expected) return error(401, 'The api key provided is invalid');
    const body = (request.body ?? {}) as Record<string, unknown>;
    const { method, path } = request;
    let m: RegExpMatchArray | null;

    if (method === 'POST' && path === '/v1/customers') {
      if (typeof body.email !== 'string' && typeof body.contact !== 'string') return error(400, 'Either email or contact is required', { field: 'email' });
      const notes = notesOf(body.notes);
      if (typeof notes === 'string') return error(400, notes, { field: 'notes' });
      const email = String(body.email ?? '');
      const contact = typeof body.contact === 'string' ? body.contact : null;
      const existing = [...customers.values()].find((c) => c.email === email && c.contact === contact);
      if (existing && String(body.fail_existing ?? '1') !== '0') return error(400, 'Customer already exists for the merchant', { field: 'email' });
      return { status: 200, body: findOrCreateCustomer({ name: typeof body.name === 'string' ? body.name : '', email, contact, notes }) };
    }
    if (method === 'GET' && (m = path.match(/^\/v1\/customers\/([^/]+)\/tokens$/))) {
      if (!customers.has(m[1]!)) return error(400, 'The id provided does not exist', { field: 'id' });
      return { status: 200, body: collection([...tokens.values()].filter((t) => t.customer_id === m![1]).map(publicToken)) };
    }

    if (method === 'POST' && path === '/v1/orders') {
      if (!Number.isInteger(body.amount) || (body.amount as number) < 100) return error(400, 'The amount must be atleast INR 1.00', { field: 'amount' });
      if (typeof body.currency !== 'string' || !/^[A-Z]{3}$/.test(body.currency)) return error(400, 'The currency field is invalid', { field: 'currency' });
      if (body.receipt !== undefined && (typeof body.receipt !== 'string' || body.receipt.length > 40))
        return error(400, 'The receipt may not be greater than 40 characters.', { field: 'receipt' });
      const notes = notesOf(body.notes);
      if (typeof notes === 'string') return error(400, notes, { field: 'notes' });
      const order: Order = {
        id: newId('order'),
        entity: 'order',
        amount: body.amount as number,
        amount_paid: 0,
        amount_due: body.amount as number,
        currency: body.currency,
        receipt: (body.receipt as string | undefined) ?? null,
        status: 'created',
        attempts: 0,
        notes,
        created_at: now(),
      };
      orders.set(order.id, order);
      return { status: 200, body: order };
    }
    if (method === 'GET' && path === '/v1/orders') {
      const receipt = request.query.get('receipt');
      const expand = request.query.getAll('expand[]').includes('payments');
      const items = [...orders.values()].filter((o) => receipt === null || o.receipt === receipt).reverse();
      return { status: 200, body: collection(items.map((o) => (expand ? orderWithPayments(o) : o))) };
    }
    if (method === 'GET' && (m = path.match(/^\/v1\/orders\/([^/]+)(\/payments)?$/))) {
      const order = orders.get(m[1]!);
      if (!order) return error(400, 'The id provided does not exist', { field: 'id' });
      return { status: 200, body: m[2] ? collection([...payments.values()].filter((p) => p.order_id === order.id)) : order };
    }

    if (method === 'POST' && path === '/v1/payments/create/recurring') {
      for (const field of ['email', 'amount', 'currency', 'order_id', 'customer_id', 'token', 'recurring'] as const) {
        if (body[field] === undefined || body[field] === null || body[field] === '') return error(400, `The ${field} field is required.`, { field });
      }
      const order = orders.get(String(body.order_id));
      if (!order) return error(400, 'The id provided does not exist', { field: 'order_id' });
      if (order.status === 'paid') return error(400, 'Order has already been paid', { field: 'order_id' });
      if (body.amount !== order.amount || body.currency !== order.currency)
        return error(400, 'Amount or currency does not match the order', { field: 'amount' });
      const token = tokens.get(String(body.token));
      if (!token || token.customer_id !== body.customer_id) return error(400, 'The token provided does not exist for the customer', { field: 'token' });
      if (token.recurring_details.status !== 'confirmed') return error(400, 'The token is not active for recurring payments', { field: 'token' });
      const notes = notesOf(body.notes);
      if (typeof notes === 'string') return error(400, notes, { field: 'notes' });
      order.attempts += 1;
      order.status = 'attempted';
      const payment: Payment = {
        id: newId('pay'),
        entity: 'payment',
        amount: order.amount,
        currency: order.currency,
        status: 'created',
        order_id: order.id,
        method: token.method,
        amount_refunded: 0,
        refund_status: null,
        captured: false,
        description: typeof body.description === 'string' ? body.description : null,
        email: String(body.email),
        contact: typeof body.contact === 'string' ? body.contact : null,
        customer_id: token.customer_id,
        token_id: token.id,
        recurring: true,
        notes,
        error_code: null,
        error_description: null,
        error_source: null,
        error_step: null,
        error_reason: null,
        created_at: now(),
      };
      payments.set(payment.id, payment);
      if (token.outcome.kind === 'fail') {
        Object.assign(payment, {
          status: 'failed',
          error_code: 'BAD_REQUEST_ERROR',
          error_description: token.outcome.description,
          error_source: 'customer',
          error_step: 'payment_authorization',
          error_reason: token.outcome.reason,
        });
        return error(400, token.outcome.description, {
          reason: token.outcome.reason,
          source: 'customer',
          step: 'payment_authorization',
          metadata: { payment_id: payment.id, order_id: order.id },
        });
      }
      if (token.outcome.kind === 'capture') capture(payment);
      const signature = createHmac('sha256', keySecret).update(`${order.id}|${payment.id}`).digest('hex');
      return { status: 200, body: { razorpay_payment_id: payment.id, razorpay_order_id: order.id, razorpay_signature: signature } };
    }
    if (method === 'GET' && (m = path.match(/^\/v1\/payments\/([^/]+)$/))) {
      const payment = payments.get(m[1]!);
      return payment ? { status: 200, body: payment } : error(400, 'The id provided does not exist', { field: 'id' });
    }
    if ((m = path.match(/^\/v1\/payments\/([^/]+)\/refunds?$/))) {
      const payment = payments.get(m[1]!);
      if (!payment) return error(400, 'The id provided does not exist', { field: 'id' });
      if (method === 'GET' && path.endsWith('/refunds'))
        return { status: 200, body: collection([...refunds.values()].filter((r) => r.payment_id === payment.id)) };
      if (method === 'POST' && path.endsWith('/refund')) {
        if (payment.status !== 'captured' && payment.status !== 'refunded')
          return error(400, 'Only payments which have been captured can be refunded', { field: 'id' });
        const left = payment.amount - payment.amount_refunded;
        if (left === 0) return error(400, 'The payment has been fully refunded already', { field: 'id' });
        const amount = body.amount === undefined ? left : body.amount;
        if (!Number.isInteger(amount) || (amount as number) < 100) return error(400, 'The amount must be atleast INR 1.00', { field: 'amount' });
        if ((amount as number) > left) return error(400, 'The refund amount provided is greater than amount captured', { field: 'amount' });
        const notes = notesOf(body.notes);
        if (typeof notes === 'string') return error(400, notes, { field: 'notes' });
        const refund: Refund = {
          id: newId('rfnd'),
          entity: 'refund',
          amount: amount as number,
          currency: payment.currency,
          payment_id: payment.id,
          receipt: typeof body.receipt === 'string' ? body.receipt : null,
          notes,
          status: state.refundMode,
          speed_requested: typeof body.speed === 'string' ? body.speed : 'normal',
          created_at: now(),
        };
        refunds.set(refund.id, refund);
        payment.amount_refunded += refund.amount;
        payment.refund_status = payment.amount_refunded === payment.amount ? 'full' : 'partial';
        if (payment.refund_status === 'full') payment.status = 'refunded';
        return { status: 200, body: refund };
      }
    }
    if (method === 'GET' && (m = path.match(/^\/v1\/refunds\/([^/]+)$/))) {
      const refund = refunds.get(m[1]!);
      return refund ? { status: 200, body: refund } : error(400, 'The id provided does not exist', { field: 'id' });
    }

    if (method === 'POST' && path === '/v1/payment_links') {
      if (!Number.isInteger(body.amount) || (body.amount as number) < 100) return error(400, 'The amount must be atleast INR 1.00', { field: 'amount' });
      if (typeof body.currency !== 'string') return error(400, 'The currency field is required.', { field: 'currency' });
      if (typeof body.reference_id === 'string') {
        if (body.reference_id.length > 40) return error(400, 'The reference id may not be greater than 40 characters.', { field: 'reference_id' });
        if ([...paymentLinks.values()].some((l) => l.reference_id === body.reference_id)) {
          return error(400, `Payment Link with reference ${body.reference_id} already exists`, { field: 'reference_id' });
        }
      }
      const notes = notesOf(body.notes);
      if (typeof notes === 'string') return error(400, notes, { field: 'notes' });
      const id = newId('plink');
      const link: PaymentLink = {
        id,
        amount: body.amount as number,
        amount_paid: 0,
        currency: body.currency,
        accept_partial: body.accept_partial === true,
        description: String(body.description ?? ''),
        reference_id: (body.reference_id as string | undefined) ?? null,
        customer: (body.customer as Record<string, string> | undefined) ?? {},
        notify: (body.notify as { sms: boolean; email: boolean } | undefined) ?? { sms: false, email: false },
        reminder_enable: body.reminder_enable === true,
        notes,
        callback_url: (body.callback_url as string | undefined) ?? null,
        callback_method: (body.callback_method as string | undefined) ?? null,
        short_url: `${baseUrl}/i/${id.slice(6)}`,
        status: 'created',
        payments: [],
        created_at: now(),
      };
      paymentLinks.set(id, link);
      return { status: 200, body: link };
    }
    if (method === 'GET' && (m = path.match(/^\/v1\/payment_links\/(plink_[^/]+)$/))) {
      const link = paymentLinks.get(m[1]!);
      return link ? { status: 200, body: link } : error(400, 'The id provided does not exist', { field: 'id' });
    }
    if (method === 'POST' && path === '/v1/subscription_registration/auth_links') return createRegistrationLink(body);
    if (method === 'GET' && path === '/v1/invoices') {
      const receipt = request.query.get('receipt');
      return { status: 200, body: collection([...registrationLinks.values()].filter((i) => receipt === null || i.receipt === receipt).reverse()) };
    }
    if (method === 'GET' && (m = path.match(/^\/v1\/invoices\/([^/]+)$/))) {
      const invoice = registrationLinks.get(m[1]!);
      return invoice ? { status: 200, body: invoice } : error(400, 'The id provided does not exist', { field: 'id' });
    }
    if (method === 'GET' && (path === '/v1/payment_links' || path === '/v1/payment_links/')) {
      const reference = request.query.get('reference_id');
      return { status: 200, body: { payment_links: [...paymentLinks.values()].filter((l) => reference === null || l.reference_id === reference) } };
    }

    return {
      status: 404,
      body: {
        error: {
          code: 'BAD_REQUEST_ERROR',
          description: 'The requested URL was not found on the server.',
          source: 'NA',
          step: 'NA',
          reason: 'NA',
          metadata: {},
        },
      },
    };
  }

  function capture(payment: Payment) {
    const order = orders.get(payment.order_id)!;
    payment.status = 'captured';
    payment.captured = true;
    order.status = 'paid';
    order.amount_paid = order.amount;
    order.amount_due = 0;
  }

  const server = await startProviderServer({
    parseBody: (raw) => {
      try {
        return JSON.parse(raw) as unknown;
      } catch {
        return { unparsable: raw };
      }
    },
    handle,
    serverErrorBody: (status) => error(status, 'We are facing some trouble completing your request at the moment. Please try again shortly.').body,
  });
  baseUrl = server.url;

  const self: RazorpayServer = {
    ...server,
    get hostedCheckout() {
      return hosted.target;
    },
    set hostedCheckout(target) {
      hosted.target = target;
    },
    hostedDeliveries: hosted.deliveries,
    keyId,
    keySecret,
    webhookSecret,
    customers,
    tokens,
    orders,
    payments,
    refunds,
    paymentLinks,
    registrationLinks,
    get refundMode() {
      return state.refundMode;
    },
    set refundMode(mode) {
      state.refundMode = mode;
    },
    addToken(input) {
      const customer = findOrCreateCustomer({ name: input.name, email: input.email, contact: input.contact ?? null });
      const token: Token = {
        id: newId('token'),
        entity: 'token',
        customer_id: customer.id,
        method: input.method,
        recurring: true,
        recurring_details: { status: input.status ?? 'confirmed', failure_reason: null },
        card: input.method === 'card' ? { entity: 'card', network: input.network ?? 'Visa', last4: input.last4 ?? '1111', type: 'credit', issuer: null } : null,
        vpa: input.method === 'upi' ? { username: 'customer', handle: 'okhdfcbank', name: input.name ?? null } : null,
        created_at: now(),
        outcome: input.outcome ?? (input.method === 'upi' ? { kind: 'pending' } : { kind: 'capture' }),
      };
      tokens.set(token.id, token);
      return { customerId: customer.id, tokenId: token.id };
    },
    settlePayment(paymentId, status) {
      const payment = payments.get(paymentId);
      if (!payment) throw new Error(`no payment ${paymentId}`);
      if (status === 'captured') capture(payment);
      else Object.assign(payment, { status: 'failed', error_code: 'BAD_REQUEST_ERROR', error_description: 'Payment failed', error_reason: 'payment_failed' });
      return payment;
    },
    webhook(event, entities, webhookOptions = {}) {
      const payload = Object.fromEntries(
        Object.entries(entities)
          .filter(([, v]) => v !== undefined)
          .map(([k, v]) => [k, { entity: v }]),
      );
      const rawBody = Buffer.from(
        JSON.stringify({ entity: 'event', account_id: 'acc_KoshTest000001', event, contains: Object.keys(payload), payload, created_at: now() }),
      );
      const signature = createHmac('sha256', webhookOptions.secret ?? webhookSecret)
        .update(rawBody)
        .digest('hex');
      return {
        rawBody,
        headers: { 'content-type': 'application/json', 'x-razorpay-signature': signature, 'x-razorpay-event-id': webhookOptions.eventId ?? newId('evt') },
      };
    },
  };
  return self;
}
