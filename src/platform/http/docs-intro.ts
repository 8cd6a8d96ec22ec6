/**
 * What a new user reads first on `/docs`: the OpenAPI document's `info.description` (a getting
 * started text with the first calls) and the order of its tags — as a user meets them, from
 * registering to a paid invoice, then everything else.
 */
export const API_INTRODUCTION = `Multi-tenant subscription billing with a double-entry ledger and India GST.

## Getting started

1. **Register** — \`POST /auth/register\` with \`{ "name", "email", "owner": { "email", "password", "name" } }\`.
   The answer holds your API key (\`sk_test_…\`) once; the owner signs in to the dashboard at \`/dashboard\`.
2. **Authorize** — send \`Authorization: Bearer sk_test_…\` on every \`/v1\` call (the *Authorize* button here).
3. **A plan** — \`POST /v1/plans\` \`{ "name": "Pro", "code": "pro", "interval_unit": "month", "amount": 49900, "currency": "INR" }\`.
   Amounts are integers in minor units (paise: 49900 is ₹499.00).
4. **A customer** — \`POST /v1/customers\` \`{ "email": "priya@example.in", "name": "Priya" }\`.
5. **A subscription** — \`POST /v1/subscriptions\` \`{ "customer_id", "plan_id" }\` issues its first invoice
   (\`GET /v1/invoices?subscription_id=…\`); or a **one-off invoice** — \`POST /v1/invoices\` \`{ "customer_id", "lines": [{ "description", "quantity", "unit_amount" }] }\`.
6. **Paid** — \`POST /v1/payments/offline\` \`{ "customer_id", "invoice_id", "payment_type": "bank_transfer", "amount" }\`,
   then \`GET /v1/invoices/{id}/pdf\` for the tax invoice.

Every write takes an \`Idempotency-Key\` header (a retry with the same key is answered once). Lists page with
\`limit\` and \`starting_after\`/\`ending_before\`. Every refusal is \`{ "error": { "code", "message", "reason", "details" } }\`
in plain words. The README walks the same calls with curl.`;

/** Tags in the order a user meets them; tags not named here follow, alphabetically. */
export const TAG_ORDER = [
  'tenants',
  'plans',
  'customers',
  'subscriptions',
  'invoices',
  'payments',
  'credit notes',
  'coupons',
  'usage',
  'webhooks',
  'events',
  'dunning',
  'collections',
  'entities',
  'gst',
  'finance',
  'ledger',
  'analytics',
  'quotes',
  'gifts',
  'referrals',
  'notifications',
  'portal',
  'accounting',
  'imports',
  'organizations',
  'operators',
];

/** `names` in TAG_ORDER's order, unknown ones after, alphabetically. */
export function orderTags(names: Iterable<string>): string[] {
  const rank = (name: string) => {
    const i = TAG_ORDER.indexOf(name);
    return i === -1 ? TAG_ORDER.length : i;
  };
  return [...names].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
}

/** `GET /`: where to go from the front door. */
export function frontDoor(version: string) {
  return {
    name: 'kosh',
    version,
    docs: '/docs',
    dashboard: '/dashboard',
    openapi: '/openapi.json',
    health: '/healthz',
    message: 'Kosh billing API. Read /docs to start (register with POST /auth/register); operators sign in at /dashboard.',
  };
}
