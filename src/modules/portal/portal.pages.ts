import { escapeHtml } from '../../platform/html.js';
import { formatDate } from '../documents/index.js';
import { displayMoney } from '../../platform/money.js';
import type { PaymentMethod } from '../collections/index.js';
import type { Invoice } from '../invoices/index.js';
import type { Subscription } from '../subscriptions/index.js';
import type { PortalPermissions, PortalProfile } from './portal.service.js';
import type { CreditNote } from '../credit-notes/index.js';
import type { Customer } from '../customers/index.js';
import { CANCELLATION_REASONS, type PlanChange, type SubscriptionUpdate } from '../subscriptions/index.js';

/**
 * The portal's server-rendered pages: plain HTML forms that POST and redirect, so everything works
 * without JavaScript. Every value from the database or the request goes through `escapeHtml`.
 */
const TIME_ZONE = 'Asia/Kolkata';

const STYLE = `
  :root { color-scheme: light; --ink: #1d2330; --muted: #5d6675; --line: #e3e6eb; --accent: #2f5bd3; --ok: #1f7a4d; --bad: #b42318; }
  * { box-sizing: border-box; }
  body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); background: #f6f7f9; }
  header { background: #fff; border-bottom: 1px solid var(--line); }
  .bar { max-width: 960px; margin: 0 auto; padding: 14px 20px; display: flex; align-items: center; justify-content: space-between; gap: 12px; }
  .brand { font-weight: 650; font-size: 17px; }
  .who { color: var(--muted); font-size: 14px; }
  main { max-width: 960px; margin: 0 auto; padding: 24px 20px 48px; }
  section { background: #fff; border: 1px solid var(--line); border-radius: 10px; padding: 18px 20px; margin-bottom: 20px; }
  h1 { font-size: 22px; margin: 0 0 16px; }
  h2 { font-size: 17px; margin: 0 0 12px; }
  table { width: 100%; border-collapse: collapse; font-size: 14px; }
  th, td { text-align: left; padding: 8px 6px; border-bottom: 1px solid var(--line); vertical-align: top; }
  th { color: var(--muted); font-weight: 600; }
  td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
  .empty { color: var(--muted); margin: 0; }
  .pill { display: inline-block; padding: 1px 8px; border-radius: 999px; font-size: 12px; background: #eef1f6; }
  .pill.active, .pill.paid { background: #e5f4ec; color: var(--ok); }
  .pill.open, .pill.past_due, .pill.unpaid { background: #fff4e0; color: #8a5300; }
  .pill.void, .pill.canceled { background: #f1f1f1; color: var(--muted); }
  .notice, .error { padding: 10px 14px; border-radius: 8px; margin-bottom: 20px; }
  .notice { background: #e5f4ec; color: var(--ok); border: 1px solid #b9e0c9; }
  .error { background: #fdecea; color: var(--bad); border: 1px solid #f5c2bd; }
  .attention { background: #fff4e5; border: 1px solid #f5c98a; border-radius: 8px; padding: 12px 16px; margin-bottom: 20px; }
  .attention.blocked { background: #fdecea; border-color: #f5c2bd; }
  .attention ul { margin: 8px 0 0; padding-left: 0; list-style: none; }
  .attention li { display: flex; align-items: center; justify-content: space-between; gap: 12px; padding: 4px 0; }
  form.inline { display: inline; }
  label { display: block; font-weight: 600; margin-bottom: 6px; }
  .field { margin-bottom: 10px; }
  .preview { background: #f3f6fd; border: 1px solid #c9d6f5; border-radius: 8px; padding: 12px 16px; margin: 12px 0; }
  select, textarea { padding: 8px 10px; border: 1px solid #c8ced8; border-radius: 6px; font: inherit; max-width: 360px; width: 100%; }
  input[type=number] { width: 120px; padding: 8px 10px; border: 1px solid #c8ced8; border-radius: 6px; font: inherit; }
  input[type=text], input[type=email] { width: 100%; max-width: 360px; padding: 8px 10px; border: 1px solid #c8ced8; border-radius: 6px; font: inherit; }
  button { padding: 8px 14px; border: 0; border-radius: 6px; background: var(--accent); color: #fff; font: inherit; cursor: pointer; }
  button.link { background: none; color: var(--accent); padding: 0; }
  .row { display: flex; gap: 10px; align-items: center; flex-wrap: wrap; }
  nav.row { margin-bottom: 16px; }
  a { color: var(--accent); }
  .small { color: var(--muted); font-size: 13px; }
`;

export function layout(title: string, body: string, header = ''): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body>
${header}
<main>
${body}
</main>
</body>
</html>
`;
}

function messages(notice?: string, error?: string): string {
  return `${notice ? `<div class="notice" role="status">${escapeHtml(notice)}</div>` : ''}${error ? `<div class="error" role="alert">${escapeHtml(error)}</div>` : ''}`;
}

/** Asking for a sign-in link. Without a tenant (a bare /portal) there is nothing to ask against. */
export function loginPage(options: { tenantId?: string; notice?: string; error?: string } = {}): string {
  const form = options.tenantId
    ? `<form method="post" action="/portal/login">
  <input type="hidden" name="tenant_id" value="${escapeHtml(options.tenantId)}">
  <label for="email">Your e-mail address</label>
  <div class="row"><input id="email" type="email" name="email" required autocomplete="email"><button type="submit">E-mail me a sign-in link</button></div>
</form>`
    : '<p>Open the sign-in link from your e-mail, or ask the business you buy from to send you one.</p>';
  return layout('Sign in — billing portal', `<h1>Sign in to your billing portal</h1>${messages(options.notice, options.error)}<section>${form}</section>`);
}

export function checkEmailPage(): string {
  return layout(
    'Check your e-mail — billing portal',
    `<h1>Check your e-mail</h1><section><p>If that address belongs to an account, a sign-in link is on its way. It works once, within 15 minutes.</p></section>`,
  );
}

export function linkInvalidPage(tenantId: string | undefined): string {
  return loginPage({ tenantId, error: 'This sign-in link is invalid, expired or already used. Ask for a new one below.' });
}

export const money = (minor: number, currency: string) => escapeHtml(displayMoney(minor, currency));
export const date = (iso: string | null) => escapeHtml(formatDate(iso, TIME_ZONE));
export const pill = (status: string) => `<span class="pill ${escapeHtml(status)}">${escapeHtml(status.replace(/_/g, ' '))}</span>`;

/** The header of a signed-in page other than the dashboard: the business, the customer, and the way back. */
export function subpageHeader(profile: PortalProfile): string {
  return `<header><div class="bar"><div><div class="brand">${escapeHtml(profile.tenant.name)}</div><div class="who">${escapeHtml(profile.customer.name ?? '')} &lt;${escapeHtml(profile.customer.email)}&gt;</div></div><a href="/portal">Back to your billing</a></div></header>`;
}

function subscriptionRows(subscriptions: (Subscription & { plan_name: string })[]): string {
  if (subscriptions.length === 0) return '<p class="empty">You have no subscriptions yet.</p>';
  const rows = subscriptions.map((s) => {
    const ending = s.cancel_at_period_end || s.status === 'canceled' ? 'Ends' : 'Renews';
    const gift = s.gift_code ? ' <span class="pill">gift</span>' : '';
    const manage = s.status === 'canceled' || s.gift_code ? '' : `<a href="/portal/subscriptions/${escapeHtml(s.id)}">Manage</a>`;
    return `<tr data-subscription="${escapeHtml(s.id)}"><td>${escapeHtml(s.plan_name)}${gift}</td><td>${pill(s.status)}</td><td class="num">${s.quantity}</td><td>${date(s.current_period_start)} – ${date(s.current_period_end)}</td><td>${ending} ${date(s.current_period_end)}</td><td>${manage}</td></tr>`;
  });
  return `<table><thead><tr><th>Plan</th><th>Status</th><th class="num">Seats</th><th>Current period</th><th>Renewal</th><th></th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

/** Any open invoice with something due can be paid (hosted checkout), not only an overdue one. */
function invoiceRows(invoices: Invoice[], csrf: string): string {
  if (invoices.length === 0) return '<p class="empty">You have no invoices yet.</p>';
  const rows = invoices.map((i) => {
    const pay =
      (i.status === 'open' || i.status === 'uncollectible') && i.amount_due > 0
        ? ` <form class="inline" method="post" action="/portal/invoices/${escapeHtml(i.id)}/pay">${csrf}<button type="submit" aria-label="Pay ${escapeHtml(i.number ?? 'invoice')}">Pay</button></form>`
        : '';
    return `<tr data-invoice="${escapeHtml(i.id)}"><td>${escapeHtml(i.number ?? '—')}</td><td>${date(i.issued_at)}</td><td>${pill(i.status)}</td><td class="num">${money(i.total, i.currency)}</td><td class="num">${money(i.amount_due, i.currency)}</td><td><a href="/portal/api/invoices/${escapeHtml(i.id)}/pdf">PDF</a>${pay}</td></tr>`;
  });
  return `<table><thead><tr><th>Number</th><th>Date</th><th>Status</th><th class="num">Total</th><th class="num">Due</th><th></th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

function creditNoteRows(notes: CreditNote[]): string {
  if (notes.length === 0) return '<p class="empty">You have no credit notes.</p>';
  const rows = notes.map(
    (n) =>
      `<tr data-credit-note="${escapeHtml(n.id)}"><td>${escapeHtml(n.number ?? '—')}</td><td>${date(n.created_at)}</td><td>${pill(n.status)}</td><td class="num">${money(n.amount, n.currency)}</td><td class="num">${money(n.balance, n.currency)}</td><td><a href="/portal/api/credit-notes/${escapeHtml(n.id)}/pdf">PDF</a></td></tr>`,
  );
  return `<table><thead><tr><th>Number</th><th>Date</th><th>Status</th><th class="num">Amount</th><th class="num">Unspent</th><th></th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

function billingDetailsSection(view: DashboardView, csrf: string): string {
  const c = view.billing;
  if (!c || !view.permissions?.billing_details) return '';
  const a = c.billing_address;
  const field = (id: string, label: string, value: string | null | undefined, extra = '') =>
    `<div class="field"><label for="${id}">${label}</label><input id="${id}" type="${id === 'billing_email' ? 'email' : 'text'}" name="${id}" value="${escapeHtml(value ?? '')}" ${extra}></div>`;
  return `<section id="billing-details"><h2>Billing details</h2>
<form method="post" action="/portal/billing-details">${csrf}
${field('billing_email', 'Billing e-mail', c.email, 'required autocomplete="email" maxlength="254"')}
${field('gstin', 'GSTIN (leave empty if not registered)', c.gstin, 'maxlength="15" pattern="[0-9A-Za-z]{15}" autocomplete="off" spellcheck="false"')}
${field('line1', 'Address line 1', a?.line1, 'maxlength="200"')}
${field('line2', 'Address line 2', a?.line2, 'maxlength="200"')}
${field('city', 'City', a?.city, 'maxlength="100"')}
${field('state_code', 'State code (two digits, e.g. 29 for Karnataka)', a?.state_code, 'maxlength="2" pattern="[0-9]{2}" inputmode="numeric"')}
${field('postal_code', 'PIN code', a?.postal_code, 'maxlength="10"')}
${field('country', 'Country (two letters)', a?.country ?? 'IN', 'maxlength="2" pattern="[A-Za-z]{2}"')}
<button type="submit">Save billing details</button></form></section>`;
}

export type DashboardView = {
  profile: PortalProfile;
  subscriptions: (Subscription & { plan_name: string })[];
  invoices: Invoice[];
  notice?: string;
  error?: string;
  /** What the customer typed, kept in the field after a refused redemption. */
  code?: string;
  /** Saved payment methods (collections); the add form offers the test gateway's in test mode. */
  paymentMethods?: PaymentMethod[];
  testMode?: boolean;
  /** What the tenant's gateways can save on their hosted pages (docs/decisions/0730). */
  setupOptions?: SetupOption[];
  /** Invoices to pay now: overdue, or holding the payment wall (dunning) — shown as a banner with pay buttons. */
  attention?: { blocked: boolean; invoices: Invoice[] };
  creditNotes?: CreditNote[];
  permissions?: PortalPermissions;
  /** The customer's billing details, for the form. */
  billing?: Pick<Customer, 'email' | 'gstin' | 'billing_address'>;
};

/** The banner of a customer blocked by the payment wall or with overdue invoices: each invoice has a pay button (hosted checkout). */
function attentionBanner(view: DashboardView, csrf: string): string {
  const attention = view.attention;
  if (!attention || (attention.invoices.length === 0 && !attention.blocked)) return '';
  const title = attention.blocked
    ? 'Your account is paused until the invoices below are paid.'
    : `You have ${attention.invoices.length === 1 ? 'an overdue invoice' : `${attention.invoices.length} overdue invoices`}.`;
  const items = attention.invoices
    .map(
      (i) =>
        `<li data-pay-invoice="${escapeHtml(i.id)}"><span>${escapeHtml(i.number ?? '—')} — ${money(i.amount_due, i.currency)} due ${date(i.due_date)}</span>` +
        `<form class="inline" method="post" action="/portal/invoices/${escapeHtml(i.id)}/pay">${csrf}<button type="submit">Pay ${escapeHtml(i.number ?? 'now')}</button></form></li>`,
    )
    .join('');
  return `<section id="attention" role="alert" class="attention${attention.blocked ? ' blocked' : ''}"><strong>${escapeHtml(title)}</strong><ul>${items}</ul></section>`;
}

const TEST_METHODS: [string, string][] = [
  ['tok_visa', 'Test card — Visa •••• 4242'],
  ['tok_mastercard', 'Test card — Mastercard •••• 4444'],
  ['tok_upi_autopay', 'Test UPI AutoPay mandate'],
];

function paymentMethodsSection(view: DashboardView, csrf: string): string {
  const methods = view.paymentMethods ?? [];
  const rows = methods.length
    ? `<table><thead><tr><th>Method</th><th></th></tr></thead><tbody>${methods
        .map((m) => {
          const name =
            (m.type === 'upi_mandate'
              ? 'UPI AutoPay mandate'
              : `${escapeHtml((m.brand ?? 'card').replace(/^./, (c) => c.toUpperCase()))} •••• ${escapeHtml(m.last4 ?? '')}`) + mandateLimits(m);
          const action = m.is_default
            ? '<span class="pill active">default</span>'
            : `<form class="inline" method="post" action="/portal/payment-methods/default">${csrf}<input type="hidden" name="payment_method_id" value="${escapeHtml(m.id)}"><button type="submit" class="link">Make default</button></form>`;
          return `<tr data-payment-method="${escapeHtml(m.id)}"><td>${name}</td><td>${action}</td></tr>`;
        })
        .join('')}</tbody></table>`
    : '<p class="empty">No saved payment methods.</p>';
  // The test gateway's methods only where no real gateway is connected (test mode).
  const add =
    view.testMode && !view.setupOptions?.length
      ? `<form method="post" action="/portal/payment-methods">${csrf}
  <label for="token">Add a payment method</label>
  <div class="row"><select id="token" name="token">${TEST_METHODS.map(([token, label]) => `<option value="${token}">${escapeHtml(label)}</option>`).join('')}</select><button type="submit">Add</button></div>
  <p class="small">Test mode: these are the test gateway's cards and mandate; nothing is charged.</p>
</form>`
      : '';
  return `<section id="payment-methods"><h2>Payment methods</h2>${rows}${add}${setupForm(view.setupOptions ?? [], csrf)}</section>`;
}

/** A mandate's limits as the customer agreed them, under its name. */
function mandateLimits(m: PaymentMethod): string {
  const terms = m.mandate;
  if (!terms || terms.max_amount === null) return '';
  const until = terms.valid_until ? `until ${date(terms.valid_until)}` : 'until withdrawn';
  return `<div class="small" data-mandate-limits>Up to ${money(terms.max_amount, 'INR')} a debit, ${escapeHtml(frequencyWords(terms.frequency ?? 'as_presented'))}, ${until}</div>`;
}

/** One way to save a payment method on a gateway's hosted page: Razorpay (card or UPI AutoPay mandate) or Stripe (card). */
export type SetupOption = { provider: 'razorpay' | 'stripe'; method: 'card' | 'upi_mandate' };

const FREQUENCY_WORDS: Record<string, string> = {
  daily: 'daily',
  weekly: 'weekly',
  fortnightly: 'fortnightly',
  monthly: 'monthly',
  bimonthly: 'every two months',
  quarterly: 'quarterly',
  half_yearly: 'half-yearly',
  yearly: 'yearly',
  as_presented: 'as invoices fall due',
};
const frequencyWords = (f: string) => FREQUENCY_WORDS[f] ?? f.replace(/_/g, ' ');

function optionLabel(o: SetupOption): string {
  if (o.method === 'upi_mandate') return 'UPI AutoPay mandate (Razorpay)';
  return o.provider === 'razorpay' ? 'Card e-mandate (Razorpay)' : 'Card (Stripe)';
}

/**
 * The form that hands over to the gateway's hosted page: which method, and for an e-mandate
 * (Razorpay) its limits — the most one debit may take, how often, until when — which the customer
 * consents to before leaving (RBI e-mandate framework; docs/decisions/0520, 0730).
 */
function setupForm(options: SetupOption[], csrf: string): string {
  if (options.length === 0) return '';
  const radios = options
    .map((o, k) => {
      const value = `${o.provider}:${o.method}`;
      return `<div class="row"><input type="radio" id="setup-${k}" name="option" value="${escapeHtml(value)}"${k === 0 ? ' checked' : ''}><label for="setup-${k}" style="display:inline;font-weight:400">${escapeHtml(optionLabel(o))}</label></div>`;
    })
    .join('');
  const mandate = options.some((o) => o.provider === 'razorpay')
    ? `<fieldset id="mandate-terms"><legend>Mandate limits (Razorpay UPI AutoPay and card e-mandates)</legend>
  <div class="field"><label for="max_amount">Most one debit may take (₹)</label><input id="max_amount" type="number" name="max_amount" min="1" max="1000000" step="1" value="15000"></div>
  <div class="field"><label for="frequency">How often</label><select id="frequency" name="frequency">${Object.entries(FREQUENCY_WORDS)
    .map(([value, words]) => `<option value="${value}"${value === 'as_presented' ? ' selected' : ''}>${escapeHtml(words)}</option>`)
    .join('')}</select></div>
  <div class="field"><label for="valid_until">Valid until (empty: until you withdraw it)</label><input id="valid_until" type="date" name="valid_until"></div>
  <p class="small">Each debit is announced to you at least 24 hours before it is made, and you can skip it from that notice.</p>
</fieldset>`
    : '';
  return `<form method="post" action="/portal/payment-methods/setup" id="setup-form">${csrf}
  <h3>Save a card or set up UPI AutoPay</h3>
  ${radios}
  ${mandate}
  <div class="row"><input type="checkbox" id="consent" name="consent" value="yes" required><label for="consent" style="display:inline;font-weight:400">I authorise future invoices to be charged to this payment method within the limits above.</label></div>
  <button type="submit">Continue to the secure payment page</button>
  <p class="small">You finish on the payment provider's page and come back here; no card or UPI details are entered on this site.</p>
</form>`;
}

/** The step between the portal's pay button and the provider's hosted checkout: Kosh's checkout link, which hands over. */
export function payHandoverPage(view: { provider: string; url: string }): string {
  const provider = view.provider === 'razorpay' ? 'Razorpay' : 'Stripe';
  return layout(
    `Continue to ${provider} — billing portal`,
    `<h1>Continue to ${escapeHtml(provider)}</h1><section><p>You will pay on ${escapeHtml(provider)}'s secure page, then see your paid invoice.</p>
<p><a id="pay-continue" href="${escapeHtml(view.url)}" rel="noreferrer">Continue to ${escapeHtml(provider)}</a> · <a href="/portal#invoices">Back</a></p></section>`,
  );
}

/** The step between the form and the provider: what is being set up, and the link to the provider's page. */
export function setupHandoverPage(view: {
  provider: string;
  method: 'card' | 'upi_mandate';
  url: string;
  mandate: { maxAmount: number; frequency: string; validUntil: Date | null } | null;
}): string {
  const provider = view.provider === 'razorpay' ? 'Razorpay' : 'Stripe';
  const terms = view.mandate
    ? `<p data-mandate-terms>Mandate: up to ${money(view.mandate.maxAmount, 'INR')} a debit, ${escapeHtml(frequencyWords(view.mandate.frequency))}, ${
        view.mandate.validUntil ? `until ${date(view.mandate.validUntil.toISOString())}` : 'until you withdraw it'
      }.</p>`
    : '';
  const what = view.method === 'upi_mandate' ? 'register your UPI AutoPay mandate' : 'save your card';
  return layout(
    `Continue to ${provider} — billing portal`,
    `<h1>Continue to ${escapeHtml(provider)}</h1><section><p>You will ${what} on ${escapeHtml(provider)}'s secure page, then come back to your billing portal.</p>${terms}
<p><a id="setup-continue" href="${escapeHtml(view.url)}" rel="noreferrer">Continue to ${escapeHtml(provider)}</a> · <a href="/portal#payment-methods">Back</a></p></section>`,
  );
}

/** A child billed to its parent (decision 0550): who is invoiced for and pays its subscriptions. */
function billedTo(view: DashboardView): string {
  const parent = view.profile.billed_to;
  if (!parent) return '';
  return `<section id="billed-to"><p><strong>Billed to ${escapeHtml(parent.name)}.</strong> Your subscriptions are invoiced to ${escapeHtml(parent.name)}, which pays them: their invoices are not listed here.</p></section>`;
}

export function dashboardPage(view: DashboardView): string {
  const { profile } = view;
  const csrf = `<input type="hidden" name="csrf_token" value="${escapeHtml(profile.csrf_token)}">`;
  const header = `<header><div class="bar"><div><div class="brand">${escapeHtml(profile.tenant.name)}</div><div class="who">${escapeHtml(profile.customer.name ?? '')} &lt;${escapeHtml(profile.customer.email)}&gt;</div></div>
<form class="inline" method="post" action="/portal/logout">${csrf}<button type="submit" class="link">Sign out</button></form></div></header>`;
  const body = `<h1>Your billing</h1>
<nav aria-label="More of your account" class="row"><a href="/portal/credits">Prepaid credits</a><a href="/portal/features">Features</a></nav>
${messages(view.notice, view.error)}
${attentionBanner(view, csrf)}
${billedTo(view)}
<section id="subscriptions"><h2>Subscriptions</h2>${subscriptionRows(view.subscriptions)}</section>
<section id="invoices"><h2>Invoices</h2>${invoiceRows(view.invoices, csrf)}</section>
<section id="credit-notes"><h2>Credit notes</h2>${creditNoteRows(view.creditNotes ?? [])}
<p><a href="/portal/api/statement" download>Download your account statement (CSV)</a></p></section>
${paymentMethodsSection(view, csrf)}
${billingDetailsSection(view, csrf)}
<section id="redeem"><h2>Redeem a gift code</h2>
<form method="post" action="/portal/redeem">${csrf}
  <label for="code">Gift code</label>
  <div class="row"><input id="code" type="text" name="code" value="${escapeHtml(view.code ?? '')}" placeholder="XXXX-XXXX-XXXX-XXXX" autocomplete="off" spellcheck="false" required maxlength="40"><button type="submit">Redeem</button></div>
  <p class="small">The gifted subscription starts today and ends after the gifted months; it is not renewed or charged.</p>
</form></section>`;
  return layout(`${profile.tenant.name} — billing portal`, body, header);
}

/** What a cancellation would do, as the API's cancel preview answers it (subscription fields plus `preview`). */
export type CancelPreview = {
  cancel_at_period_end: boolean;
  current_period_end: string;
  currency: string;
  proration?: { unused_value: number; unused_credit: number; remaining_days: number; period_days: number };
  preview?: { credit_note: { amount: number } | null; final_invoice: { total: number; amount_due: number } | null; refundable_amount: number };
};

/** A retention offer as the portal shows it (the coupons module's portal answer, decision 0560). */
export type RetentionOfferView = {
  message: string | null;
  coupon: {
    name: string;
    percent_off: number | null;
    amount_off: number | null;
    currency: string | null;
    duration: 'once' | 'repeating' | 'forever';
    duration_in_months: number | null;
  };
};

export type SubscriptionView = {
  profile: PortalProfile;
  subscription: Subscription & { plan_name: string };
  permissions: PortalPermissions;
  plans: { id: string; name: string; amount: number | null; interval: string }[];
  error?: string;
  /** A previewed action awaiting confirmation. */
  pending?:
    | { kind: 'quantity'; quantity: number; result: SubscriptionUpdate }
    | { kind: 'plan'; planId: string; planName: string; result: PlanChange }
    | { kind: 'cancel'; reason: string; feedback: string; result: CancelPreview; offer?: RetentionOfferView | null };
};

const REASON_LABELS: Record<string, string> = {
  too_expensive: 'Too expensive',
  missing_features: 'Missing features I need',
  switched_service: 'Switched to another service',
  unused: 'Not using it enough',
  customer_service: 'Customer service',
  too_complex: 'Too complicated',
  low_quality: 'Quality was not good enough',
  other: 'Something else',
};

/** The charge and credit of a seat or plan change, in words a customer reads. */
function changeSummary(result: SubscriptionUpdate | PlanChange, currency: string): string {
  const p = result.proration;
  const parts = [`For the ${p.remaining_days} of ${p.period_days} days left in this period:`];
  if (p.unused_credit > 0) parts.push(`a credit of ${money(p.unused_credit, currency)} for the unused time,`);
  if (result.invoice) {
    parts.push(`an invoice of ${money(result.invoice.total, currency)} (GST included)`);
    parts.push(`— ${money(result.invoice.amount_due, currency)} to pay after the credit.`);
  } else parts.push('nothing to pay now.');
  return `<p data-preview-summary>${parts.join(' ')}</p>`;
}

function cancelSummary(result: CancelPreview): string {
  if (result.cancel_at_period_end) {
    return `<p data-preview-summary>Your subscription stays active until ${date(result.current_period_end)} and is not renewed. Usage until then is billed on a final invoice.</p>`;
  }
  const credit = result.preview?.credit_note?.amount ?? 0;
  const final = result.preview?.final_invoice;
  const lines = [`Your subscription ends today.`];
  if (credit > 0) lines.push(`The unused time is credited: ${money(credit, result.currency)}.`);
  if (final) lines.push(`A final invoice for usage so far: ${money(final.total, result.currency)}.`);
  if ((result.preview?.refundable_amount ?? 0) > 0)
    lines.push(`${money(result.preview!.refundable_amount, result.currency)} stays as credit on your account (refundable on request).`);
  return `<p data-preview-summary>${lines.join(' ')}</p>`;
}

/** The coupon's terms in words: "20% off for 3 months", "₹500.00 off your next invoice", "10% off for as long as you stay". */
export function couponTerms(coupon: RetentionOfferView['coupon']): string {
  const off = coupon.percent_off !== null ? `${coupon.percent_off}% off` : `${money(coupon.amount_off ?? 0, coupon.currency ?? 'INR')} off`;
  if (coupon.duration === 'once') return `${off} your next invoice`;
  if (coupon.duration === 'forever') return `${off} for as long as you stay`;
  const months = coupon.duration_in_months ?? 1;
  return `${off} for ${months} ${months === 1 ? 'month' : 'months'}`;
}

function offerBox(id: string, p: { reason: string; feedback: string; offer?: RetentionOfferView | null }, csrf: string): string {
  if (!p.offer) return '';
  const message = p.offer.message ?? 'Before you go, we would like to offer you a discount to stay.';
  return `<section class="preview" id="retention-offer" aria-live="polite"><h2>An offer to stay</h2><p>${escapeHtml(message)}</p>
<p data-offer-terms><strong>${escapeHtml(p.offer.coupon.name)}</strong>: ${couponTerms(p.offer.coupon)}.</p>
<form method="post" action="/portal/subscriptions/${id}/retention-offer">${csrf}${hidden('reason', p.reason)}${hidden('feedback', p.feedback)}<button type="submit">Accept the offer and stay</button></form></section>`;
}

function hidden(name: string, value: string): string {
  return `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`;
}

function pendingBox(view: SubscriptionView, csrf: string): string {
  const p = view.pending;
  if (!p) return '';
  const id = escapeHtml(view.subscription.id);
  const currency = view.subscription.currency;
  const back = `<a href="/portal/subscriptions/${id}">Keep things as they are</a>`;
  if (p.kind === 'quantity') {
    return `<section class="preview" id="pending" aria-live="polite"><h2>Change to ${p.quantity} seats?</h2>${changeSummary(p.result, currency)}
<form method="post" action="/portal/subscriptions/${id}/quantity">${csrf}${hidden('quantity', String(p.quantity))}${hidden('step', 'confirm')}<div class="row"><button type="submit">Confirm ${p.quantity} seats</button>${back}</div></form></section>`;
  }
  if (p.kind === 'plan') {
    return `<section class="preview" id="pending" aria-live="polite"><h2>Change to ${escapeHtml(p.planName)}?</h2>${changeSummary(p.result, currency)}
<form method="post" action="/portal/subscriptions/${id}/plan">${csrf}${hidden('plan_id', p.planId)}${hidden('step', 'confirm')}<div class="row"><button type="submit">Confirm the change to ${escapeHtml(p.planName)}</button>${back}</div></form></section>`;
  }
  const confirm = p.offer ? 'No thanks, cancel' : 'Confirm cancellation';
  return `${offerBox(id, p, csrf)}<section class="preview" id="pending" aria-live="polite"><h2>Cancel your subscription?</h2>${cancelSummary(p.result)}
<form method="post" action="/portal/subscriptions/${id}/cancel">${csrf}${hidden('reason', p.reason)}${hidden('feedback', p.feedback)}${hidden('step', 'confirm')}<div class="row"><button type="submit">${confirm}</button>${back}</div></form></section>`;
}

/** One subscription and what the tenant lets the customer do with it: seats, plan, cancel — each previewed, then confirmed. */
export function subscriptionPage(view: SubscriptionView): string {
  const { profile, subscription: s, permissions } = view;
  const csrf = hidden('csrf_token', profile.csrf_token);
  const id = escapeHtml(s.id);
  const header = subpageHeader(profile);
  const live = s.status !== 'canceled';
  const seats =
    live && permissions.quantity_change
      ? `<section id="seats"><h2>Seats</h2><form method="post" action="/portal/subscriptions/${id}/quantity">${csrf}${hidden('step', 'preview')}
<label for="quantity">Number of seats</label><div class="row"><input id="quantity" type="number" name="quantity" min="1" max="1000000" step="1" value="${s.quantity}" required><button type="submit">Preview the change</button></div></form></section>`
      : '';
  const planOptions = view.plans
    .map(
      (p) =>
        `<option value="${escapeHtml(p.id)}">${escapeHtml(p.name)}${p.amount === null ? '' : ` — ${money(p.amount, s.currency)} a ${escapeHtml(p.interval)}`}</option>`,
    )
    .join('');
  const plan =
    live && permissions.plan_change && view.plans.length > 0
      ? `<section id="plan"><h2>Plan</h2><form method="post" action="/portal/subscriptions/${id}/plan">${csrf}${hidden('step', 'preview')}
<label for="plan_id">Change to</label><div class="row"><select id="plan_id" name="plan_id">${planOptions}</select><button type="submit">Preview the change</button></div></form></section>`
      : '';
  const reasons = CANCELLATION_REASONS.map((r) => `<option value="${r}">${escapeHtml(REASON_LABELS[r] ?? r.replace(/_/g, ' '))}</option>`).join('');
  const cancel =
    live && !s.cancel_at_period_end && permissions.cancellation !== 'disabled'
      ? `<section id="cancel"><h2>Cancel</h2><form method="post" action="/portal/subscriptions/${id}/cancel">${csrf}${hidden('step', 'preview')}
<div class="field"><label for="reason">Why are you leaving?</label><select id="reason" name="reason" required><option value="">Choose a reason</option>${reasons}</select></div>
<div class="field"><label for="feedback">Anything you would like to tell us (optional)</label><textarea id="feedback" name="feedback" rows="3" maxlength="2000"></textarea></div>
<button type="submit">Preview the cancellation</button></form></section>`
      : '';
  const ends = s.cancel_at_period_end ? `<p class="notice" role="status">Cancelled: ends on ${date(s.current_period_end)}.</p>` : '';
  const body = `<h1>${escapeHtml(s.plan_name)}</h1>
${messages(undefined, view.error)}
<section id="summary"><table><tbody>
<tr><th>Status</th><td>${pill(s.status)}</td></tr>
<tr><th>Seats</th><td data-quantity>${s.quantity}</td></tr>
<tr><th>Current period</th><td>${date(s.current_period_start)} – ${date(s.current_period_end)}</td></tr>
</tbody></table>${ends}</section>
${pendingBox(view, csrf)}
${view.pending ? '' : `${seats}${plan}${cancel}`}`;
  return layout(`${s.plan_name} — billing portal`, body, header);
}
