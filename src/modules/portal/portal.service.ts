import type { Kysely } from 'kysely';
import type { Ctx, ReadCtx } from '../../platform/context.js';
import type { DB } from '../../platform/db/schema.js';
import { errors } from '../../platform/errors.js';
import type { Page } from '../../platform/http/envelope.js';
import { newId } from '../../platform/ids.js';
import { enqueueJob } from '../../platform/jobs/jobs.js';
import { enqueueMail, isDeliverableAddress } from '../../platform/mail/index.js';
import { toIso } from '../../platform/time.js';
import { findCustomer, findCustomerByEmail, getCustomer, updateCustomer, type Customer } from '../customers/index.js';
import { getCreditNotePdf, getInvoicePdf, type InvoicePdf } from '../documents/index.js';
import { getInvoiceRow, listInvoices, type Invoice, type InvoiceRow } from '../invoices/index.js';
import { findPlan, listPlans } from '../plans/index.js';
import { getSubscription, listSubscriptions, type Subscription } from '../subscriptions/index.js';
import { getTenant, readSettings, type PortalCancellation } from '../tenants/index.js';
import { customerBalance, listBalanceTransactions, type BalanceTransaction } from '../balances/index.js';
import { getCreditNote, listCreditNotes, type CreditNote } from '../credit-notes/index.js';
import { formatAmount } from '../../platform/money.js';
import type { BillingDetailsBody } from './portal.schemas.js';
import {
  countEmailedLinksSince,
  findLiveSession,
  lockEmailedLinks,
  insertLoginToken,
  insertSession,
  revokeSession,
  useLoginToken,
} from './portal.repository.js';
import { csrfTokenFor, formatCredential, hashSecret, newSecret, parseCredential } from './portal.tokens.js';

/** A sign-in link works once, for 15 minutes; the session it opens lasts 7 days. */
export const LOGIN_LINK_TTL_MS = 15 * 60_000;
export const SESSION_TTL_MS = 7 * 86_400_000;
/** At most this many sign-in links are e-mailed to one customer per requester per window (an hour). */
export const MAX_EMAILED_LINKS_PER_WINDOW = 5;
const EMAILED_LINK_WINDOW_MS = 3_600_000;

export type PortalLink = { url: string; token: string; expires_at: string };

/** The signed-in customer of a portal request. */
export type PortalSession = { tenantId: string; customerId: string; sessionId: string; csrfToken: string; expiresAt: Date };

export function loginUrl(publicUrl: string, token: string): string {
  return `${publicUrl.replace(/\/+$/, '')}/portal/login?token=${encodeURIComponent(token)}`;
}

/** A one-time sign-in link for a customer of ctx's tenant (404 for a missing or foreign one). */
export async function createPortalLink(
  ctx: Ctx,
  customerId: string,
  publicUrl: string,
  source: 'api' | 'email' = 'api',
  requester: string | null = null,
): Promise<PortalLink> {
  const customer = await getCustomer(ctx, customerId);
  const secret = newSecret();
  const expiresAt = new Date(ctx.now.getTime() + LOGIN_LINK_TTL_MS);
  await insertLoginToken(ctx.tx, {
    tenant_id: ctx.tenantId,
    id: newId(),
    customer_id: customer.id,
    token_hash: hashSecret(secret),
    source,
    requester,
    expires_at: expiresAt,
    used_at: null,
    created_at: ctx.now,
  });
  const token = formatCredential(ctx.tenantId, secret);
  return { url: loginUrl(publicUrl, token), token, expires_at: toIso(expiresAt) };
}

/** The job that looks the address up and e-mails the link, outside the request. */
export const LOGIN_LINK_JOB = 'portal.login_link';

/** A requester as stored: a hash of the client address, so the table holds no addresses. */
export function requesterOf(clientAddress: string): string {
  return hashSecret(`portal-login:${clientAddress}`).slice(0, 32);
}

/**
 * `POST /portal/api/login`: queues the lookup and the e-mail. The request does the same work —
 * one job insert — whether or not the tenant and address exist, so neither its answer nor its
 * timing tells them apart; the worker does the lookup (`sendLoginLink`).
 */
export async function requestLoginLink(db: Kysely<DB>, now: Date, input: { tenant_id: string; email: string }, requester: string): Promise<void> {
  await enqueueJob(db, now, { kind: LOGIN_LINK_JOB, tenantId: input.tenant_id, payload: { email: input.email, requester }, maxAttempts: 3 });
}

/**
 * The job of `requestLoginLink`: e-mails a sign-in link through the mail outbox when the tenant has
 * a customer with this address, and does nothing otherwise. Anyone may ask for a link to any
 * address, so a cap keeps that from flooding an inbox: at most MAX_EMAILED_LINKS_PER_WINDOW an hour
 * per customer *and requester* — a stranger's requests spend the stranger's allowance, never the
 * customer's own.
 */
export async function sendLoginLink(
  db: Kysely<DB>,
  now: Date,
  input: { tenant_id: string; email: string; requester: string },
  publicUrl: string,
): Promise<void> {
  await db.transaction().execute(async (tx) => {
    const ctx: Ctx = { tx, tenantId: input.tenant_id, now };
    const customer = await findCustomerByEmail(tx, input.tenant_id, input.email);
    if (!customer || !isDeliverableAddress(customer.email)) return;
    await lockEmailedLinks(tx, input.tenant_id, customer.id);
    const since = new Date(now.getTime() - EMAILED_LINK_WINDOW_MS);
    if ((await countEmailedLinksSince(tx, input.tenant_id, customer.id, input.requester, since)) >= MAX_EMAILED_LINKS_PER_WINDOW) return;
    const tenant = await getTenant(ctx);
    const link = await createPortalLink(ctx, customer.id, publicUrl, 'email', input.requester);
    await enqueueMail(tx, now, {
      tenantId: ctx.tenantId,
      to: customer.email,
      fromName: tenant.name.replace(/[\r\n]/g, ' ').slice(0, 200),
      subject: `Your sign-in link for ${tenant.name}`.replace(/[\r\n]/g, ' ').slice(0, 500),
      text: [
        `Hello${customer.name ? ` ${customer.name}` : ''},`,
        '',
        `Open this link to see your subscriptions and invoices with ${tenant.name}:`,
        link.url,
        '',
        'The link works once, within 15 minutes. If you did not ask for it, you can ignore this e-mail.',
      ].join('\n'),
    });
  });
}

/**
 * Opens a sign-in link: spends it (one-time) and starts a session, one transaction. Null for an
 * unknown, used or expired link. The session credential is returned once, for the cookie.
 */
export async function signIn(db: Kysely<DB>, now: Date, token: string): Promise<{ cookieValue: string; expiresAt: Date } | null> {
  const credential = parseCredential(token);
  if (!credential) return null;
  return db.transaction().execute(async (tx) => {
    const used = await useLoginToken(tx, credential.tenantId, hashSecret(credential.secret), now);
    if (!used) return null;
    const secret = newSecret();
    const expiresAt = new Date(now.getTime() + SESSION_TTL_MS);
    await insertSession(tx, {
      tenant_id: credential.tenantId,
      id: newId(),
      customer_id: used.customer_id,
      token_hash: hashSecret(secret),
      expires_at: expiresAt,
      revoked_at: null,
      created_at: now,
    });
    return { cookieValue: formatCredential(credential.tenantId, secret), expiresAt };
  });
}

/** The live session a cookie names, or null (missing, malformed, unknown, expired, signed out). */
export async function authenticate(db: Kysely<DB>, now: Date, cookieValue: string | undefined): Promise<PortalSession | null> {
  const credential = parseCredential(cookieValue);
  if (!credential) return null;
  const row = await findLiveSession(db, credential.tenantId, hashSecret(credential.secret), now);
  if (!row) return null;
  return { tenantId: row.tenant_id, customerId: row.customer_id, sessionId: row.id, csrfToken: csrfTokenFor(credential.secret), expiresAt: row.expires_at };
}

export async function signOut(db: Kysely<DB>, now: Date, session: PortalSession): Promise<void> {
  await revokeSession(db, session.tenantId, session.sessionId, now);
}

export type PortalProfile = {
  customer: { id: string; email: string; name: string | null };
  /** The parent that is invoiced for and pays this customer's subscriptions (decision 0550); null when it pays. */
  billed_to: { name: string } | null;
  tenant: { id: string; name: string };
  session_expires_at: string;
  csrf_token: string;
};

export async function portalProfile(ctx: ReadCtx, session: PortalSession): Promise<PortalProfile> {
  const customer: Customer | undefined = await findCustomer(ctx.tx, ctx.tenantId, session.customerId);
  if (!customer) throw errors.unauthorized('invalid_session');
  const tenant = await getTenant(ctx);
  // A child billed to its parent (decision 0550): its renewals are the parent's invoices, not its own.
  const parent =
    customer.bill_to === 'parent' && customer.parent_customer_id ? await findCustomer(ctx.tx, ctx.tenantId, customer.parent_customer_id) : undefined;
  return {
    customer: { id: customer.id, email: customer.email, name: customer.name },
    billed_to: parent ? { name: parent.name ?? parent.email } : null,
    tenant: { id: tenant.id, name: tenant.name },
    session_expires_at: toIso(session.expiresAt),
    csrf_token: session.csrfToken,
  };
}

/** The customer's subscriptions, each with its plan's name for display. */
export async function portalSubscriptions(
  ctx: ReadCtx,
  customerId: string,
  page: Page,
): Promise<{ subscriptions: (Subscription & { plan_name: string })[]; total: number }> {
  const { subscriptions, total } = await listSubscriptions(ctx, { customer_id: customerId }, page);
  const names = new Map<string, string>();
  for (const planId of new Set(subscriptions.map((s) => s.plan_id))) names.set(planId, (await findPlan(ctx.tx, ctx.tenantId, planId))?.name ?? '');
  return { subscriptions: subscriptions.map((s) => ({ ...s, plan_name: names.get(s.plan_id) ?? '' })), total };
}

/** The customer's invoices; drafts are the business's work in progress and are not shown. */
export async function portalInvoices(ctx: ReadCtx, customerId: string, page: Page): Promise<{ invoices: Invoice[]; total: number }> {
  return listInvoices(ctx, { customer_id: customerId, statuses: ['open', 'paid', 'void', 'uncollectible'] }, page);
}

/** The PDF of one of the customer's own invoices; another customer's, or a draft, is a 404. */
export async function portalInvoicePdf(ctx: ReadCtx, customerId: string, invoiceId: string): Promise<InvoicePdf> {
  const invoice = await getInvoiceRow(ctx, invoiceId);
  if (invoice.customer_id !== customerId || invoice.status === 'draft') throw errors.notFound('invoice');
  return getInvoicePdf(ctx, invoiceId);
}

// ---- self-service (decision 0500): what the tenant lets a customer do, on their own records ----

export type PortalPermissions = {
  cancellation: PortalCancellation;
  plan_change: boolean;
  quantity_change: boolean;
  billing_details: boolean;
};

/** The tenant's portal settings (GET/PATCH /v1/settings, portal_*). */
export async function portalPermissions(ctx: ReadCtx): Promise<PortalPermissions> {
  const settings = await readSettings(ctx);
  return {
    cancellation: settings.portal_cancellation,
    plan_change: settings.portal_plan_change,
    quantity_change: settings.portal_quantity_change,
    billing_details: settings.portal_billing_details,
  };
}

/** A 403 (portal_action_disabled) when the tenant does not let customers do this in the portal. */
export function assertPortalAllows(allowed: boolean, what: string): void {
  if (!allowed) throw errors.forbidden(`${what} is not available in this portal; contact the business you buy from`, 'portal_action_disabled');
}

/** One of the customer's own subscriptions; another customer's is a 404, as a missing one. */
export async function ownSubscription(ctx: ReadCtx, customerId: string, id: string): Promise<Subscription> {
  const subscription = await getSubscription(ctx, id);
  if (subscription.customer_id !== customerId) throw errors.notFound('subscription');
  return subscription;
}

/** One of the customer's own invoices, not a draft; anything else is a 404. */
export async function ownInvoice(ctx: ReadCtx, customerId: string, id: string): Promise<InvoiceRow> {
  const invoice = await getInvoiceRow(ctx, id);
  if (invoice.customer_id !== customerId || invoice.status === 'draft') throw errors.notFound('invoice');
  return invoice;
}

/** The plans a customer may move to: active, with a price in the subscription's currency, not the current one. */
export async function portalPlanChoices(
  ctx: ReadCtx,
  subscription: Subscription,
): Promise<{ id: string; name: string; amount: number | null; interval: string }[]> {
  const { plans } = await listPlans(ctx, { currency: subscription.currency }, { limit: 100, page: 1, offset: 0 });
  const choices = [];
  for (const plan of plans) {
    if (plan.id === subscription.plan_id || !plan.active) continue;
    const price = plan.prices.find((p) => p.currency === subscription.currency && p.active && p.billing_scheme !== 'metered');
    if (!price) continue;
    const interval = `${plan.interval_count === 1 ? '' : `${plan.interval_count} `}${plan.interval_unit}${plan.interval_count === 1 ? '' : 's'}`;
    choices.push({ id: plan.id, name: plan.name, amount: price.billing_scheme === 'per_unit' ? price.amount : null, interval });
  }
  return choices;
}

/** GSTIN, billing address and billing e-mail, validated and written exactly as PATCH /v1/customers/{id}. */
export async function updateBillingDetails(ctx: Ctx, customerId: string, input: BillingDetailsBody): Promise<Customer> {
  return updateCustomer(ctx, customerId, input);
}

/** The customer's credit notes as issued (pending, rejected ones are the business's work in progress). */
export async function portalCreditNotes(ctx: ReadCtx, customerId: string, page: Page): Promise<{ notes: CreditNote[]; total: number }> {
  const { notes, total } = await listCreditNotes(ctx, { customer_id: customerId }, page);
  const shown = notes.filter((n) => n.status !== 'pending_approval' && n.status !== 'rejected');
  return { notes: shown, total: total - (notes.length - shown.length) };
}

/** The PDF of one of the customer's own issued credit notes; anything else is a 404. */
export async function portalCreditNotePdf(ctx: ReadCtx, customerId: string, id: string): Promise<{ filename: string; content: Buffer }> {
  const note = await getCreditNote(ctx, id);
  if (note.customer_id !== customerId || note.status === 'pending_approval' || note.status === 'rejected') throw errors.notFound('credit note');
  return getCreditNotePdf(ctx, id);
}

const csvCell = (value: string | number | null) => {
  const text = value === null ? '' : String(value);
  // A cell that a spreadsheet would run as a formula is quoted with a leading apostrophe (OWASP CSV injection).
  const safe = /^[=+\-@\t\r]/.test(text) && typeof value !== 'number' ? `'${text}` : text;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
};

/**
 * The customer balance statement (balances service: GET /v1/customers/{id}/balance-transactions)
 * as CSV: every movement, oldest first, with a running balance per currency, and the balance now.
 * Amounts in major units with the currency's digits (formatAmount, without grouping).
 */
export async function portalStatementCsv(ctx: ReadCtx, customerId: string): Promise<{ filename: string; content: string }> {
  const movements: BalanceTransaction[] = [];
  for (let page = 1; ; page += 1) {
    const { transactions, total } = await listBalanceTransactions(ctx, customerId, {}, { limit: 100, page, offset: (page - 1) * 100 });
    movements.push(...transactions);
    if (movements.length >= total || transactions.length === 0) break;
  }
  const plain = (minor: number, currency: string) => formatAmount(minor, currency).replace(/,/g, '');
  const running = new Map<string, number>();
  const rows = [['date', 'type', 'document', 'number', 'currency', 'amount', 'balance'].join(',')];
  for (const m of movements.reverse()) {
    const balance = (running.get(m.currency) ?? 0) + m.amount;
    running.set(m.currency, balance);
    rows.push(
      [m.created_at, m.type, m.document.type, m.document.number, m.currency, plain(m.amount, m.currency), plain(balance, m.currency)].map(csvCell).join(','),
    );
  }
  const balance = await customerBalance(ctx, customerId);
  for (const b of balance.balances)
    rows.push([toIso(ctx.now), 'closing_balance', '', '', b.currency, '', plain(b.available, b.currency)].map(csvCell).join(','));
  return { filename: `statement-${toIso(ctx.now).slice(0, 10)}.csv`, content: `${rows.join('\r\n')}\r\n` };
}
