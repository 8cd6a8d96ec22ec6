import type { Role } from '../platform/auth/actor.js';

/**
 * The role table (DESIGN §17, §21, docs/decisions/0120-operators.md, 0220): the minimum role an
 * operator or an API key (keys carry a role) needs for each `/v1` route. Every resource (the first path
 * segment after `/v1/`) must be listed; a route under an unlisted resource has no decision, is
 * refused to every operator, and fails test/platform/access.test.ts. Reads default to `viewer`;
 * writes to the resource's `write` role; `overrides` (`METHOD /v1/pattern`) win over both.
 */
type ResourcePolicy = { read: Role; write: Role };

const MONEY: ResourcePolicy = { read: 'viewer', write: 'finance' };
const ADMIN: ResourcePolicy = { read: 'viewer', write: 'admin' };

export const RESOURCE_ROLES: Record<string, ResourcePolicy> = {
  // Money and its records: finance.
  invoices: MONEY,
  einvoices: MONEY,
  payments: MONEY,
  refunds: MONEY,
  'credit-notes': MONEY,
  advances: MONEY,
  subscriptions: MONEY,
  plans: MONEY,
  gifts: MONEY,
  referrals: MONEY,
  quotes: MONEY,
  'dunning-campaigns': MONEY,
  'dunning-executions': MONEY,
  finance: MONEY,
  gst: MONEY,
  tds: MONEY,
  ledger: MONEY,
  collections: MONEY,
  imports: MONEY,
  analytics: MONEY,
  events: MONEY,
  'credit-grants': MONEY,
  features: MONEY,
  alerts: MONEY,
  // Simulated billing of test customers (test mode only).
  'test-clocks': MONEY,
  // Pricing and what it bills: coupons, billable metrics and the usage recorded against them.
  coupons: MONEY,
  'retention-offers': MONEY,
  'billable-metrics': MONEY,
  usage: MONEY,
  // Customers: support may create and update them; their payment methods are money.
  customers: { read: 'viewer', write: 'support' },
  // Operators, API keys, webhook endpoints, connections, settings, entities: admin.
  users: ADMIN,
  developer: ADMIN,
  webhooks: ADMIN,
  'gateway-connections': ADMIN,
  accounting: ADMIN,
  settings: ADMIN,
  entities: ADMIN,
  organizations: ADMIN,
  'audit-log': ADMIN,
  // What Kosh sends customers, and the SMS provider's credentials.
  'email-templates': ADMIN,
  'notification-settings': ADMIN,
  'sms-connections': ADMIN,
  // The operator's own session, password and TOTP: any signed-in operator.
  auth: { read: 'viewer', write: 'viewer' },
};

export const ROUTE_OVERRIDES: Record<string, Role> = {
  // Support: portal links and sending invoices, no money.
  'POST /v1/customers/:id/portal-sessions': 'support',
  'POST /v1/invoices/:id/send': 'support',
  // A customer's saved cards and mandates are money.
  'POST /v1/customers/:id/payment-methods': 'finance',
  'DELETE /v1/customers/:id/payment-methods/:pm_id': 'finance',
  'POST /v1/customers/:id/payment-methods/:pm_id/default': 'finance',
  // Prepaid credit is money.
  'POST /v1/customers/:id/credit-grants': 'finance',
  'PUT /v1/customers/:id/auto-top-up': 'finance',
  // What plans and subscriptions grant is pricing: finance.
  'PUT /v1/plans/:id/entitlements': 'finance',
  'PUT /v1/subscriptions/:id/entitlements': 'finance',
  // Re-sending events to webhook endpoints is the endpoints' business: admin.
  'POST /v1/events/:id/redeliver': 'admin',
  // Who works here (e-mails, roles, two-factor status), and what they did, is shown to admins only
  // (decision 0120). An operator reads their own record through GET /v1/auth/me.
  'GET /v1/users': 'admin',
  'GET /v1/users/:id': 'admin',
  'GET /v1/users/invitations': 'admin',
  'GET /v1/developer/keys': 'admin',
  'GET /v1/audit-log': 'admin',
  // Periods (DESIGN §18): finance closes a month; only an owner reopens one.
  'GET /v1/entities/:id/periods': 'viewer',
  'POST /v1/entities/:id/periods/:period/close': 'finance',
  'POST /v1/entities/:id/periods/:period/reopen': 'owner',
};

/** The minimum role for a route (its pattern, `/v1/invoices/:id/void`), or undefined when the table has none. */
export function minimumRole(method: string, pattern: string): Role | undefined {
  const override = ROUTE_OVERRIDES[`${method} ${pattern}`];
  if (override) return override;
  const resource = pattern.replace(/^\/v1\//, '').split('/')[0] ?? '';
  const policy = Object.hasOwn(RESOURCE_ROLES, resource) ? RESOURCE_ROLES[resource] : undefined;
  if (!policy) return undefined;
  return method === 'GET' || method === 'HEAD' ? policy.read : policy.write;
}
