import { escapeHtml } from '../../platform/html.js';
import { date, layout, money, pill, subpageHeader } from './portal.pages.js';
import type { PortalProfile } from './portal.service.js';

/**
 * The customer's prepaid credits and features (DESIGN §23), read-only: what the API answers for
 * `GET /v1/customers/{id}/credit-grants`, `.../balance-transactions` and `.../entitlements`,
 * shown in words. Every value goes through `escapeHtml`.
 */

/** A credit grant as the API shows it (the fields this page reads). */
export type CreditGrantView = {
  id: string;
  category: 'paid' | 'promotional';
  status: string;
  name: string | null;
  currency: string;
  amount: number;
  remaining: number;
  expires_at: string | null;
  created_at: string;
};

/** A draw-down: credit taken by one of the customer's invoices (a `credit_drawn` balance transaction). */
export type CreditDrawView = {
  id: string;
  source: string;
  currency: string;
  amount: number;
  document: { id: string; number: string | null };
  created_at: string;
};

export type CreditsView = {
  profile: PortalProfile;
  balances: { currency: string; paid: number; promotional: number }[];
  grants: CreditGrantView[];
  draws: CreditDrawView[];
};

const CATEGORY_WORDS: Record<CreditGrantView['category'], string> = { paid: 'Paid (top-up)', promotional: 'Promotional' };

function balanceTable(balances: CreditsView['balances']): string {
  if (balances.length === 0) return '<p class="empty">You have no credit to spend.</p>';
  const rows = balances.map(
    (b) =>
      `<tr data-credit-balance="${escapeHtml(b.currency)}"><td>${escapeHtml(b.currency)}</td><td class="num">${money(b.paid, b.currency)}</td><td class="num">${money(b.promotional, b.currency)}</td><td class="num">${money(b.paid + b.promotional, b.currency)}</td></tr>`,
  );
  return `<table><thead><tr><th>Currency</th><th class="num">Paid</th><th class="num">Promotional</th><th class="num">Spendable now</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

function grantTable(grants: CreditGrantView[]): string {
  if (grants.length === 0) return '<p class="empty">You have no credit grants.</p>';
  const rows = grants.map(
    (g) =>
      `<tr data-credit-grant="${escapeHtml(g.id)}"><td>${escapeHtml(g.name ?? '—')}</td><td>${escapeHtml(CATEGORY_WORDS[g.category])}</td><td>${pill(g.status)}</td><td>${date(g.created_at)}</td><td class="num">${money(g.amount, g.currency)}</td><td class="num">${money(g.remaining, g.currency)}</td><td>${g.expires_at ? date(g.expires_at) : 'Never'}</td></tr>`,
  );
  return `<table><thead><tr><th>Name</th><th>Kind</th><th>Status</th><th>Granted</th><th class="num">Amount</th><th class="num">Remaining</th><th>Expires</th></tr></thead><tbody>${rows.join('')}</tbody></table>
<p class="small">Paid credit is bought with a top-up invoice (GST is charged on it then) and can be spent once that invoice is paid. Promotional credit is a discount, taken off an invoice before GST.</p>`;
}

function drawTable(draws: CreditDrawView[]): string {
  if (draws.length === 0) return '<p class="empty">No credit has been used yet.</p>';
  const rows = draws.map(
    (d) =>
      `<tr data-credit-draw="${escapeHtml(d.id)}"><td>${date(d.created_at)}</td><td>${escapeHtml(d.document.number ?? '—')}</td><td>${d.source === 'promotional_credit' ? 'Promotional' : 'Paid'}</td><td class="num">${money(-d.amount, d.currency)}</td><td><a href="/portal/api/invoices/${escapeHtml(d.document.id)}/pdf">PDF</a></td></tr>`,
  );
  return `<table><thead><tr><th>Date</th><th>Invoice</th><th>Credit</th><th class="num">Used</th><th></th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

export function creditsPage(view: CreditsView): string {
  const body = `<h1>Prepaid credits</h1>
<section id="credit-balance"><h2>Balance</h2>${balanceTable(view.balances)}</section>
<section id="credit-grants"><h2>Credit grants</h2>${grantTable(view.grants)}</section>
<section id="credit-draws"><h2>Recent use</h2>${drawTable(view.draws)}</section>`;
  return layout(`Prepaid credits — ${view.profile.tenant.name}`, body, subpageHeader(view.profile));
}

/** A feature of the tenant's catalogue (the fields this page reads). */
export type FeatureView = { key: string; name: string; type: 'boolean' | 'quantity' | 'enum' };

export type FeaturesView = {
  profile: PortalProfile;
  features: FeatureView[];
  /** The customer's value per feature key, as `GET /v1/customers/{id}/entitlements` answers it. */
  values: Record<string, boolean | number | string | null>;
  blocked: boolean;
  blockedReason: 'payment_wall' | 'alert' | null;
};

/** A feature's value in words: included or not, a limit or unlimited, the tier. */
export function featureWords(type: FeatureView['type'], value: boolean | number | string | null | undefined): string {
  if (type === 'boolean') return value === true ? 'Included' : 'Not included';
  if (type === 'quantity') {
    if (value === null) return 'Unlimited';
    return typeof value === 'number' && value > 0 ? `Up to ${value.toLocaleString('en-IN')}` : 'Not included';
  }
  return value === null || value === undefined || value === '' ? 'Not included' : String(value);
}

const BLOCKED_WORDS = {
  payment_wall: 'Your access is paused until your overdue invoices are paid.',
  alert: 'Your access is paused: a usage or spend limit set on your account has been reached.',
};

export function featuresPage(view: FeaturesView): string {
  const blocked = view.blocked
    ? `<section id="features-blocked" role="alert" class="attention blocked"><strong>${escapeHtml(BLOCKED_WORDS[view.blockedReason ?? 'payment_wall'])}</strong>${
        view.blockedReason === 'payment_wall' ? ' <a href="/portal#attention">Pay now</a>' : ''
      }</section>`
    : '';
  const rows = view.features.map(
    (f) => `<tr data-feature="${escapeHtml(f.key)}"><td>${escapeHtml(f.name)}</td><td>${escapeHtml(featureWords(f.type, view.values[f.key]))}</td></tr>`,
  );
  const table =
    view.features.length === 0
      ? '<p class="empty">Your plan lists no features.</p>'
      : `<table><thead><tr><th>Feature</th><th>Your plan</th></tr></thead><tbody>${rows.join('')}</tbody></table>
<p class="small">What your current subscriptions include. Limits are what you may use; your usage so far is on your invoices.</p>`;
  const body = `<h1>Features</h1>${blocked}<section id="features"><h2>What you can use</h2>${table}</section>`;
  return layout(`Features — ${view.profile.tenant.name}`, body, subpageHeader(view.profile));
}
