import type { Kysely } from 'kysely';
import type { Ctx, ReadCtx } from '../../platform/context.js';
import type { DB } from '../../platform/db/schema.js';
import { errors } from '../../platform/errors.js';
import type { Page } from '../../platform/http/envelope.js';
import { newId } from '../../platform/ids.js';
import { enqueueJob } from '../../platform/jobs/jobs.js';
import { enqueueMail, isDeliverableAddress } from '../../platform/mail/index.js';
import { toIso } from '../../platform/time.js';
import { findCustomer, findCustomerByEmail, getCustomer, type Customer } from '../customers/index.js';
import { getInvoicePdf, type InvoicePdf } from '../documents/index.js';
import { getInvoiceRow, listInvoices, type Invoice } from '../invoices/index.js';
import { findPlan } from '../plans/index.js';
import { listSubscriptions, type Subscription } from '../subscriptions/index.js';
import { getTenant } from '../tenants/index.js';
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
  tenant: { id: string; name: string };
  session_expires_at: string;
  csrf_token: string;
};

export async function portalProfile(ctx: ReadCtx, session: PortalSession): Promise<PortalProfile> {
  const customer: Customer | undefined = await findCustomer(ctx.tx, ctx.tenantId, session.customerId);
  if (!customer) throw errors.unauthorized('invalid_session');
  const tenant = await getTenant(ctx);
  return {
    customer: { id: customer.id, email: customer.email, name: customer.name },
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
