import { randomBytes, randomUUID } from 'node:crypto';
import type { ApiResponse, Tenant } from './harness.js';
import { connectThroughBrowser, sharedAccountingSandbox } from './accounting-sandbox.js';

/**
 * The factory registry of the shared security suite (test/security/routes.test.ts) and the fuzz
 * test (test/security/fuzz.test.ts).
 *
 * Key: the path of a resource up to its `{id}` (OpenAPI form), e.g. `/v1/plans`. Value: creates a
 * fresh record of that resource for `tenant` through the public API and answers its id. Every
 * route under the prefix (`/v1/plans/{id}`, `/v1/invoices/{id}/pay`, …) uses it; a route with a
 * second path parameter (`/v1/events/{id}/deliveries/{delivery_id}`) is keyed by the path up to
 * that parameter, and its factory gets the ids already chosen for the parameters before it.
 *
 * When you add a route with a path parameter, add its factory here — the security suite fails and
 * names the prefix until you do.
 */
export type Factory = (tenant: Tenant, parentIds: Record<string, string>) => Promise<string>;

/** A short value no other call in this process has produced (codes, e-mails, prefixes). */
export function unique(prefix = ''): string {
  return `${prefix}${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
}

let prefixCounter = 0;

/** An invoice prefix (1–9 of A–Z, 0–9, "/", "-") unique within this process. */
function uniqueInvoicePrefix(): string {
  prefixCounter += 1;
  return `E${prefixCounter.toString(36).toUpperCase()}${randomBytes(2).toString('hex').toUpperCase()}`.slice(0, 9);
}

/** The id of a 201 answer, or an error that shows what the API said instead. */
export function createdId(res: ApiResponse, what: string): string {
  if (res.status !== 201 || typeof res.body?.data?.id !== 'string') {
    throw new Error(`factory for ${what}: expected 201 with data.id, got ${res.status} ${res.text}`);
  }
  return res.body.data.id;
}

export const factories: Record<string, Factory> = {
  // An operator (viewer) written straight into the tenant: the API makes one only through an e-mailed invitation.
  '/v1/users': async (tenant) => {
    const id = randomUUID();
    const now = tenant.testKosh.clock.now();
    await tenant.testKosh.database.db
      .insertInto('users')
      .values({
        tenant_id: tenant.tenantId,
        id,
        email: `${unique('op')}@factory.test`,
        name: 'Factory operator',
        role: 'viewer',
        password_hash: '$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0$9Q0sVd0c8T2Mn1Wmo1o3sQ',
        totp_secret: null,
        totp_pending_secret: null,
        totp_enabled_at: null,
        totp_last_step: null,
        last_sign_in_at: null,
        created_at: now,
        updated_at: now,
      })
      .execute();
    return id;
  },
  '/v1/users/invitations': async (tenant) =>
    createdId(await tenant.api('POST', '/v1/users/invitations', { email: `${unique('inv')}@factory.test`, role: 'viewer' }), '/v1/users/invitations'),
  '/v1/sms-connections': async (tenant) =>
    createdId(
      await tenant.api('POST', '/v1/sms-connections', {
        provider: 'twilio',
        sender: '+15005550006',
        credentials: { account_sid: `AC${'0'.repeat(32)}`, auth_token: 'factory-auth-token-0123' },
      }),
      '/v1/sms-connections',
    ),
  '/v1/dunning-campaigns': async (tenant) =>
    createdId(await tenant.api('POST', '/v1/dunning-campaigns', { name: 'Factory campaign' }), '/v1/dunning-campaigns'),
  '/v1/dunning-campaigns/{id}/steps': async (tenant, ids) => {
    const campaign = ids.id ?? (await factories['/v1/dunning-campaigns']!(tenant, {}));
    return createdId(
      await tenant.api('POST', `/v1/dunning-campaigns/${campaign}/steps`, { delay_hours: 24, channel: 'email' }),
      '/v1/dunning-campaigns/{id}/steps',
    );
  },

  // A tenant belongs to one organization at a time: leave the current one, then create a fresh one.
  '/v1/organizations': async (tenant) => {
    const current = await tenant.api('GET', '/v1/organizations');
    for (const org of current.body?.data ?? []) await tenant.api('DELETE', `/v1/organizations/${org.id}/tenants/${tenant.tenantId}`);
    return createdId(await tenant.api('POST', '/v1/organizations', { name: 'Factory organization', reporting_currency: 'INR' }), '/v1/organizations');
  },
  // The member the route names: the owner itself (a tenant can only ever detach itself).
  '/v1/organizations/{id}/tenants': async (tenant) => tenant.tenantId,
  // A currency, not an id: the route sets that currency's rate.
  '/v1/organizations/{id}/fx-rates': async () => 'USD',

  '/v1/plans': async (tenant) =>
    createdId(
      await tenant.api('POST', '/v1/plans', { name: 'Factory plan', code: unique('plan-'), interval_unit: 'month', amount: 49900, currency: 'INR' }),
      '/v1/plans',
    ),

  '/v1/billable-metrics': async (tenant) =>
    createdId(
      await tenant.api('POST', '/v1/billable-metrics', { code: unique('metric-'), name: 'Factory metric', aggregation: 'count' }),
      '/v1/billable-metrics',
    ),

  '/v1/entities': async (tenant) =>
    createdId(await tenant.api('POST', '/v1/entities', { name: 'Factory entity', invoice_prefix: uniqueInvoicePrefix(), state_code: '29' }), '/v1/entities'),

  // A key other than the one the tenant calls with, so revoking it leaves the tenant able to call.
  '/v1/developer/keys': async (tenant) => createdId(await tenant.api('POST', '/v1/developer/keys', { name: 'factory key' }), '/v1/developer/keys'),

  '/v1/customers': async (tenant) =>
    createdId(await tenant.api('POST', '/v1/customers', { email: `${unique('c-')}@customer.test`, name: 'Factory customer' }), '/v1/customers'),

  // A purchased gift (with its open purchase invoice) of a fresh plan and buyer.
  '/v1/gifts': async (tenant) =>
    createdId(
      await tenant.api('POST', '/v1/gifts', {
        plan_id: await factories['/v1/plans']!(tenant, {}),
        buyer_customer_id: await factories['/v1/customers']!(tenant, {}),
        recipient_email: `${unique('r-')}@customer.test`,
        duration_months: 3,
      }),
      '/v1/gifts',
    ),

  // A pending referral between two fresh customers.
  '/v1/referrals': async (tenant) =>
    createdId(
      await tenant.api('POST', '/v1/referrals', {
        referrer_id: await factories['/v1/customers']!(tenant, {}),
        referred_id: await factories['/v1/customers']!(tenant, {}),
      }),
      '/v1/referrals',
    ),

  // A reconciliation run over a fresh entity (its own scope, so repeated calls never meet a running run).
  '/v1/finance/reconciliation/runs': async (tenant) => {
    const entityId = await factories['/v1/entities']!(tenant, {});
    const res = await tenant.api('POST', '/v1/finance/reconciliation/runs', { entity_id: entityId });
    if (res.status !== 202 || typeof res.body?.data?.id !== 'string') throw new Error(`factory for /v1/finance/reconciliation/runs: ${res.status} ${res.text}`);
    return res.body.data.id;
  },

  // A test clock frozen at the harness's start.
  '/v1/test-clocks': async (tenant) => createdId(await tenant.api('POST', '/v1/test-clocks', { frozen_time: '2026-04-01T00:00:00Z' }), '/v1/test-clocks'),

  // An open (draft) quote for a fresh customer.
  '/v1/quotes': async (tenant) =>
    createdId(
      await tenant.api('POST', '/v1/quotes', {
        customer_id: await factories['/v1/customers']!(tenant, {}),
        line_items: [{ description: 'Factory work', quantity: 2, unit_amount: 10_000 }],
      }),
      '/v1/quotes',
    ),

  // An active subscription (its first invoice finalized) of a fresh plan and customer; a second
  // plan of the same tenant is kept for the change-plan body below.
  '/v1/subscriptions': async (tenant) => {
    const planId = await factories['/v1/plans']!(tenant, {});
    subscriptionTargetPlan = await factories['/v1/plans']!(tenant, {});
    subscriptionTargetPrice = (await tenant.api('GET', `/v1/plans/${subscriptionTargetPlan}`)).body.data.prices[0].id;
    subscriptionTargetCoupon = (await tenant.api('GET', `/v1/coupons/${await factories['/v1/coupons']!(tenant, {})}`)).body.data.code;
    return createdId(
      await tenant.api('POST', '/v1/subscriptions', { customer_id: await factories['/v1/customers']!(tenant, {}), plan_id: planId }),
      '/v1/subscriptions',
    );
  },

  '/v1/coupons': async (tenant) =>
    createdId(await tenant.api('POST', '/v1/coupons', { code: unique('cpn-'), percent_off: 10, duration: 'forever' }), '/v1/coupons'),
  // Deactivated once made, so the next one may take the same reason (a reason has at most one active offer).
  '/v1/retention-offers': async (tenant) => {
    const coupon = await factories['/v1/coupons']!(tenant, {});
    const id = createdId(await tenant.api('POST', '/v1/retention-offers', { coupon, reasons: ['too_expensive'] }), '/v1/retention-offers');
    await tenant.api('PATCH', `/v1/retention-offers/${id}`, { active: false });
    return id;
  },
  // The plan's (only) price: the security suite archives it with the plan id it chose.
  '/v1/plans/{id}/prices': async (tenant, ids) => {
    const planId = ids.id ?? (await factories['/v1/plans']!(tenant, {}));
    const res = await tenant.api('GET', `/v1/plans/${planId}`);
    if (res.status !== 200) throw new Error(`factory for /v1/plans/{id}/prices: ${res.status} ${res.text}`);
    return res.body.data.prices[0].id;
  },

  // An open invoice (auto-finalized: numbered, GST computed, posted to the ledger) for a fresh customer.
  '/v1/invoices': async (tenant) => (await openInvoice(tenant)).id,

  // A part payment recorded offline against a fresh open invoice.
  '/v1/payments': async (tenant) => {
    const invoice = await openInvoice(tenant);
    return createdId(
      await tenant.api('POST', '/v1/payments/offline', {
        customer_id: invoice.customer_id,
        invoice_id: invoice.id,
        payment_type: 'bank_transfer',
        amount: 1_000,
      }),
      '/v1/payments',
    );
  },

  // A refund (offline, manual) of part of a fresh offline payment.
  '/v1/refunds': async (tenant) => {
    const payment = await factories['/v1/payments']!(tenant, {});
    const res = await tenant.api('POST', `/v1/payments/${payment}/refunds`, { amount: 100, reason: 'factory refund' });
    return createdId(res, '/v1/refunds');
  },

  // An issued credit note for the customer of a fresh open invoice; that invoice is kept for the
  // apply body below.
  '/v1/credit-notes': async (tenant) => {
    const invoice = await openInvoice(tenant);
    creditNoteTargetInvoice = invoice.id;
    return createdId(await tenant.api('POST', '/v1/credit-notes', { customer_id: invoice.customer_id, amount: 500, reason: 'factory' }), '/v1/credit-notes');
  },

  // The journal entry a fresh invoice posted when it was finalized.
  '/v1/ledger/journal-entries': async (tenant) => {
    const invoice = await openInvoice(tenant);
    const res = await tenant.api('GET', `/v1/invoices/${invoice.id}/journal-entries`);
    const id = res.body?.data?.[0]?.id;
    if (res.status !== 200 || typeof id !== 'string') throw new Error(`factory for /v1/ledger/journal-entries: ${res.status} ${res.text}`);
    return id;
  },

  // The plan.created event of a fresh plan.
  '/v1/events': async (tenant) => {
    const planId = await factories['/v1/plans']!(tenant, {});
    const res = await tenant.api('GET', `/v1/events?object_id=${planId}`);
    const id = res.body?.data?.[0]?.id;
    if (res.status !== 200 || typeof id !== 'string') throw new Error(`factory for /v1/events: ${res.status} ${res.text}`);
    return id;
  },

  '/v1/webhooks': async (tenant) => createdId(await tenant.api('POST', '/v1/webhooks', { url: `https://hooks.example.com/${unique()}` }), '/v1/webhooks'),

  // A QuickBooks connection made through the real flow (connect → authorize → callback) against
  // the local OAuth server and QuickBooks stand-in; the tenant's Kosh is pointed at them.
  '/v1/accounting/connections': async (tenant) => {
    const sandbox = await sharedAccountingSandbox();
    sandbox.configure(tenant.testKosh);
    const { location } = await connectThroughBrowser(tenant.testKosh, tenant, 'quickbooks');
    const id = location.searchParams.get('connection_id');
    if (!id) throw new Error(`factory for /v1/accounting/connections: the callback redirected to ${location.href}`);
    return id;
  },

  // A test-gateway connection (collections).
  '/v1/gateway-connections': async (tenant) =>
    createdId(
      await tenant.api('POST', '/v1/gateway-connections', { provider: 'test', credentials: { webhook_secret: unique('whsec_') }, currencies: [] }),
      '/v1/gateway-connections',
    ),

  // A saved test card of the customer chosen for `{id}`.
  '/v1/customers/{id}/payment-methods': async (tenant, parentIds) => {
    const customer = parentIds.id ?? (await factories['/v1/customers']!(tenant, {}));
    return createdId(await tenant.api('POST', `/v1/customers/${customer}/payment-methods`, { token: 'tok_visa' }), '/v1/customers/{id}/payment-methods');
  },

  // An advance: an offline payment of a fresh customer without an invoice (decision 0280).
  '/v1/advances': async (tenant) => {
    const customer = await factories['/v1/customers']!(tenant, {});
    createdId(
      await tenant.api('POST', '/v1/payments/offline', { customer_id: customer, amount: 11_800, currency: 'INR', payment_type: 'bank_transfer' }),
      '/v1/payments/offline',
    );
    const res = await tenant.api('GET', `/v1/advances?customer_id=${customer}`);
    const id = res.body?.data?.[0]?.id;
    if (typeof id !== 'string') throw new Error(`factory for /v1/advances: no advance listed, got ${res.status} ${res.text}`);
    return id;
  },

  // A promotional credit grant of a fresh customer (DESIGN §23).
  '/v1/credit-grants': async (tenant) => {
    const customer = await factories['/v1/customers']!(tenant, {});
    return createdId(
      await tenant.api('POST', `/v1/customers/${customer}/credit-grants`, { category: 'promotional', amount: 1_000, currency: 'INR' }),
      '/v1/credit-grants',
    );
  },

  // A spend alert of a fresh customer.
  '/v1/alerts': async (tenant) => {
    const customer = await factories['/v1/customers']!(tenant, {});
    return createdId(
      await tenant.api('POST', '/v1/alerts', { customer_id: customer, type: 'spend_threshold', currency: 'INR', threshold: 100_000 }),
      '/v1/alerts',
    );
  },

  // An add-on item (a fresh plan's price) of the subscription chosen for `{id}`.
  '/v1/subscriptions/{id}/items': async (tenant, parentIds) => {
    const subscription = parentIds.id ?? (await factories['/v1/subscriptions']!(tenant, {}));
    const addOn = await factories['/v1/plans']!(tenant, {});
    const priceId = (await tenant.api('GET', `/v1/plans/${addOn}`)).body.data.prices[0].id;
    const res = await tenant.api('POST', `/v1/subscriptions/${subscription}/items`, { price_id: priceId, quantity: 1 });
    if (res.status !== 200 || typeof res.body?.data?.item?.id !== 'string') {
      throw new Error(`factory for /v1/subscriptions/{id}/items: expected 200 with data.item.id, got ${res.status} ${res.text}`);
    }
    return res.body.data.item.id;
  },

  // A pending one-off charge of the customer chosen for `{id}`.
  '/v1/customers/{id}/pending-charges': async (tenant, parentIds) => {
    const customer = parentIds.id ?? (await factories['/v1/customers']!(tenant, {}));
    return createdId(
      await tenant.api('POST', `/v1/customers/${customer}/pending-charges`, { description: 'Setup', amount: 1_000, hsn_code: '998313' }),
      '/v1/customers/{id}/pending-charges',
    );
  },
};

async function openInvoice(tenant: Tenant): Promise<{ id: string; customer_id: string }> {
  const customerId = await factories['/v1/customers']!(tenant, {});
  const res = await tenant.api('POST', '/v1/invoices', {
    customer_id: customerId,
    currency: 'INR',
    lines: [{ description: 'Factory work', unit_amount: 10_000 }],
  });
  createdId(res, '/v1/invoices');
  return res.body.data;
}

/** The open invoice of the customer whose credit note the factory made last (see validBodies). */
let creditNoteTargetInvoice: string | undefined;

/** The other plan of the tenant whose subscription the factory made last (see validBodies). */
let subscriptionTargetPlan: string | undefined;

/** The price of that other plan (an add-on for POST /v1/subscriptions/{id}/items; see validBodies). */
let subscriptionTargetPrice: string | undefined;

/** A coupon code of the tenant whose subscription the factory made last (see validBodies). */
let subscriptionTargetCoupon: string | undefined;

/**
 * A valid request body for routes with a path parameter whose body has required fields, keyed
 * `METHOD /path` (OpenAPI form). The security suite needs one so that a foreign id is refused by
 * the tenant check (404) rather than by body validation (400). Routes whose body has no required
 * field are sent `{}` and need no entry.
 */
export const validBodies: Record<string, unknown> = {
  'POST /v1/dunning-campaigns/{id}/steps': { delay_hours: 24, channel: 'email' },
  // A member needs no code to attach itself again; to anyone else a wrong code is a 404.
  'POST /v1/organizations/{id}/tenants': { join_code: 'orgjoin_not-the-code' },
  'PUT /v1/organizations/{id}/fx-rates/{currency}': { rate: '83.25' },
  'POST /v1/customers/{id}/payment-methods': { token: 'tok_visa' },
  'POST /v1/test-clocks/{id}/advance': { to: '2026-04-02T00:00:00Z' },
  'POST /v1/customers/{id}/pending-charges': { description: 'Setup', amount: 1_000, hsn_code: '998313' },
  'POST /v1/customers/{id}/credit-grants': { category: 'promotional', amount: 1_000, currency: 'INR' },
  'PUT /v1/customers/{id}/auto-top-up': { enabled: true, threshold: 1_000, amount: 10_000, currency: 'INR' },
  'PUT /v1/entities/{id}/luts/{financial_year}': { arn: 'AD290426000001X' },
  'PUT /v1/plans/{id}/entitlements': [],
  'PUT /v1/subscriptions/{id}/entitlements': [],
  'POST /v1/payments/{id}/refunds': { amount: 100, reason: 'factory refund' },
  'POST /v1/credit-notes/{id}/refunds': { amount: 100 },
  'POST /v1/refunds/{id}/mark_paid': { reference: 'UTR-0001' },
  'POST /v1/refunds/{id}/mark_failed': {},
  // A getter: read when the body is sent, after the factory made the subscription and its owner's
  // second plan — so the owner's own call succeeds and only the subscription id decides the 404.
  'POST /v1/subscriptions/{id}/change-plan': {
    get plan_id() {
      return subscriptionTargetPlan ?? '00000000-0000-7000-8000-000000000000';
    },
    preview: true,
  },
  'POST /v1/subscriptions/{id}/discount': {
    get coupon() {
      return subscriptionTargetCoupon ?? 'no-such-coupon';
    },
  },
  'PATCH /v1/subscriptions/{id}': { quantity: 2, preview: true },
  'POST /v1/subscriptions/{id}/items': {
    get price_id() {
      return subscriptionTargetPrice ?? '00000000-0000-7000-8000-000000000000';
    },
    preview: true,
  },
  'PATCH /v1/subscriptions/{id}/items/{item_id}': { quantity: 3, preview: true },
  'PUT /v1/subscriptions/{id}/minimum-commitment': { amount: 50_000 },
  'POST /v1/plans/{id}/prices': { amount: 1000, currency: 'INR' },
  'PUT /v1/entities/{id}/exchange-rates': { currency: 'USD', rate: '83.25' },
  'POST /v1/entities/{id}/periods/{period}/reopen': { reason: 'Factory correction' },
  'POST /v1/invoices/{id}/tds': { tds_amount: 1 },
  'POST /v1/payments/{id}/tds-certificate': { certificate_number: 'ABCDEFGH' },
  'POST /v1/invoices/{id}/gst-details': { place_of_supply: '27' },
  // Same idea: the credit note's owner applies it to their own open invoice.
  'POST /v1/credit-notes/{id}/apply': {
    get invoice_id() {
      return creditNoteTargetInvoice ?? '00000000-0000-7000-8000-000000000000';
    },
    amount: 100,
  },
  'POST /v1/invoices/{id}/einvoice/cancel': { reason_code: 2, remarks: 'Data entry mistake' },
  'POST /v1/credit-notes/{id}/einvoice/cancel': { reason_code: 2, remarks: 'Data entry mistake' },
  'POST /v1/invoices/{id}/einvoice/retry': { refresh_buyer: false },
  'POST /v1/credit-notes/{id}/einvoice/retry': { refresh_buyer: false },
};

/**
 * Path parameters that are values, not records (`{period}`, a month `YYYY-MM`): the security
 * suite fills them with this value and judges tenant isolation on the route's other parameters
 * (or its body's ids), as it does for enum parameters.
 */
export const pathValues: Record<string, string> = { period: '2026-03', financial_year: '2026-27' };

/**
 * Where SPEC prescribes another answer than 404 not_found for an id that does not exist in the
 * caller's tenant, keyed `METHOD /path`. The security suite still requires a foreign id to answer
 * exactly like a random one; only the expected status and code change. Cite the SPEC section.
 */
export const missingIdAnswers: Record<string, { status: number; code: string }> = {
  // SPEC 4.8: every refusal of send, "invoice not found in tenant" included, is 400 validation_failed.
  'POST /v1/invoices/{id}/send': { status: 400, code: 'validation_failed' },
};
