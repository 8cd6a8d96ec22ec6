import { createHash, randomBytes } from 'node:crypto';
import { sameSecret } from '../../platform/auth/secrets-compare.js';
import type { Ctx, ReadCtx } from '../../platform/context.js';
import { errors, isKoshError } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import { getCustomer } from '../../modules/customers/index.js';
import { getInvoiceRow, type InvoiceRow } from '../../modules/invoices/index.js';
import {
  callContext,
  findCheckoutSession,
  gatewayForCurrency,
  insertCheckoutSessions,
  type ResolvedGateway,
  testCardToken,
  type CheckoutSession,
  type CheckoutSessionRow,
  type CollectionsEnv,
} from '../../modules/collections/index.js';
import { chargeAndCommit } from './collect-invoice-payment.js';
import { startAttempt } from './start-attempt.js';

/** How long a hosted checkout link stays usable. */
export const CHECKOUT_TTL_MS = 24 * 60 * 60 * 1000;

export function checkoutUrl(env: CollectionsEnv, row: Pick<CheckoutSessionRow, 'tenant_id' | 'id'>, token: string): string {
  return `${env.config.publicUrl}/checkout/${row.tenant_id}/${row.id}?token=${token}`;
}

/** The stored form of a link's token: its SHA-256, so the table never holds a usable link. */
function checkoutTokenHash(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** The answer to the call that made the session: the only time its token (in `url`) is known. */
function toSession(env: CollectionsEnv, row: CheckoutSessionRow, token: string): CheckoutSession {
  return {
    id: row.id,
    invoice_id: row.invoice_id,
    url: checkoutUrl(env, row, token),
    status: row.status,
    expires_at: row.expires_at.toISOString(),
    created_at: row.created_at.toISOString(),
  };
}

function assertPayable(status: string, amountDue: number): void {
  if ((status !== 'open' && status !== 'uncollectible') || amountDue <= 0) {
    throw errors.conflict(`cannot pay an invoice whose status is ${status}`, 'invalid_invoice_state');
  }
}

/** `amount` and `currency`: what the provider was asked to collect; a payment event for the session must match them. */
export type PreparedCheckout = {
  id: string;
  token: string;
  gateway: string;
  connectionId: string | null;
  amount: number;
  currency: string;
  redirect: { url: string; reference: string } | null;
};

type CheckoutInvoice = Pick<InvoiceRow, 'id' | 'number' | 'currency' | 'amount_due'>;
type CheckoutCustomer = { id: string; email: string; name: string | null; phone: string | null };

/** The gateway call for one invoice already read and checked (no transaction open). */
async function askGateway(
  read: ReadCtx,
  env: CollectionsEnv,
  resolved: ResolvedGateway,
  invoice: CheckoutInvoice,
  customer: CheckoutCustomer,
): Promise<PreparedCheckout> {
  const id = newId();
  const token = randomBytes(24).toString('base64url');
  // The provider sends the customer back to Kosh's return page, which the link's token opens.
  const back = `${env.config.publicUrl}/checkout/${read.tenantId}/${id}/return?token=${token}`;
  const outcome = await resolved.gateway.adapter.createCheckout(callContext(env, resolved, read.now), {
    idempotencyKey: `kosh_chk_${id}`,
    amount: invoice.amount_due,
    currency: invoice.currency,
    customer: { id: customer.id, email: customer.email, name: customer.name, phone: customer.phone },
    description: `Invoice ${invoice.number}`,
    successUrl: back,
    cancelUrl: `${back}&cancelled=1`,
    metadata: { tenant_id: read.tenantId, invoice_id: invoice.id, checkout_session_id: id },
  });
  return {
    id,
    token,
    gateway: resolved.provider,
    connectionId: resolved.connectionId,
    amount: invoice.amount_due,
    currency: invoice.currency,
    redirect: outcome.kind === 'redirect' ? { url: outcome.url, reference: outcome.gatewayReference } : null,
  };
}

/**
 * Step 1 of POST /v1/invoices/{id}/checkout-sessions, outside any transaction: checks the invoice
 * and asks the currency's gateway for a checkout (the test gateway: Kosh's own page; Razorpay and
 * Stripe: their hosted page, a network call — hence before the transaction).
 */
export async function prepareCheckout(read: ReadCtx, env: CollectionsEnv, invoiceId: string): Promise<PreparedCheckout> {
  const invoice = await getInvoiceRow(read, invoiceId);
  assertPayable(invoice.status, invoice.amount_due);
  const prepared = (await prepareCheckouts(read, env, [{ invoice, customer: await getCustomer(read, invoice.customer_id) }])).get(invoice.id)!;
  if (prepared instanceof Error) throw prepared;
  return prepared;
}

/** Gateway calls in flight at once for a batch: the test gateway answers in memory, Razorpay and Stripe over the network. */
export const CHECKOUT_BATCH_CONCURRENCY = 8;

/**
 * Step 1 for many invoices the caller has read (docs/decisions/0189): the gateway of each currency
 * is resolved once, and the gateways are asked with bounded concurrency, outside any transaction.
 * Each invoice gets its prepared checkout or the error that kept it from one — one invoice's
 * failure never stops the others.
 */
export async function prepareCheckouts(
  read: ReadCtx,
  env: CollectionsEnv,
  items: { invoice: CheckoutInvoice & { status: string }; customer: CheckoutCustomer }[],
  concurrency = CHECKOUT_BATCH_CONCURRENCY,
): Promise<Map<string, PreparedCheckout | Error>> {
  const gateways = new Map<string, Promise<ResolvedGateway>>();
  const results = new Map<string, PreparedCheckout | Error>();
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const { invoice, customer } = items[next++]!;
      try {
        assertPayable(invoice.status, invoice.amount_due);
        let resolved = gateways.get(invoice.currency);
        if (!resolved) gateways.set(invoice.currency, (resolved = gatewayForCurrency(read, env, invoice.currency)));
        results.set(invoice.id, await askGateway(read, env, await resolved, invoice, customer));
      } catch (error) {
        results.set(invoice.id, error instanceof Error ? error : new Error(String(error)));
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, items.length)) }, lane));
  return results;
}

function sessionRow(ctx: Ctx, invoiceId: string, prepared: PreparedCheckout): CheckoutSessionRow {
  return {
    tenant_id: ctx.tenantId,
    id: prepared.id,
    invoice_id: invoiceId,
    token: null,
    token_hash: checkoutTokenHash(prepared.token),
    gateway: prepared.gateway,
    connection_id: prepared.connectionId,
    status: 'open',
    gateway_reference: prepared.redirect?.reference ?? null,
    redirect_url: prepared.redirect?.url ?? null,
    amount: prepared.amount,
    currency: prepared.currency,
    expires_at: new Date(ctx.now.getTime() + CHECKOUT_TTL_MS),
    created_at: ctx.now,
    updated_at: ctx.now,
  };
}

/** Step 2, in the action's transaction: the session row. */
export async function createCheckoutSession(ctx: Ctx, env: CollectionsEnv, invoiceId: string, prepared: PreparedCheckout): Promise<CheckoutSession> {
  const invoice = await getInvoiceRow(ctx, invoiceId, true);
  assertPayable(invoice.status, invoice.amount_due);
  return (await createCheckoutSessions(ctx, env, [{ invoice, prepared }])).get(invoice.id)!;
}

/**
 * Step 2 for many invoices, in the caller's transaction, which has locked and re-read them (they
 * are passed in): one multi-row insert. An invoice no longer payable gets no session.
 */
export async function createCheckoutSessions(
  ctx: Ctx,
  env: CollectionsEnv,
  items: { invoice: { id: string; status: string; amount_due: number }; prepared: PreparedCheckout }[],
): Promise<Map<string, CheckoutSession>> {
  const made = items
    .filter(({ invoice }) => (invoice.status === 'open' || invoice.status === 'uncollectible') && invoice.amount_due > 0)
    .map(({ invoice, prepared }) => ({ row: sessionRow(ctx, invoice.id, prepared), token: prepared.token }));
  await insertCheckoutSessions(
    ctx.tx,
    made.map((m) => m.row),
  );
  return new Map(made.map(({ row, token }) => [row.invoice_id, toSession(env, row, token)]));
}

/** The session behind a checkout link, when the link's token matches and it has not expired. */
export async function openCheckoutSession(read: ReadCtx, sessionId: string, token: unknown): Promise<CheckoutSessionRow | null> {
  const row = await findCheckoutSession(read.tx, read.tenantId, sessionId);
  if (!row || typeof token !== 'string') return null;
  // Compared as hashes (equal length); a session made before migration 0212 by its plain token.
  const stored = row.token_hash ?? (row.token !== null ? checkoutTokenHash(row.token) : null);
  if (stored === null) return null;
  if (!sameSecret(stored, checkoutTokenHash(token))) return null;
  if (row.expires_at <= read.now && row.status === 'open') return null;
  return row;
}

export type CheckoutSubmission = { kind: 'charged' } | { kind: 'already'; reason: string } | { kind: 'bad_card' };

/**
 * The page's POST: the typed card stands for a test-gateway token; one attempt is committed
 * pending (the invoice lock and the one-pending-attempt index make a double submission find the
 * first one, or the invoice paid), charged, and its outcome committed. It pays once however often
 * the form is submitted.
 */
export async function submitCheckout(env: CollectionsEnv, session: CheckoutSessionRow, cardNumber: string, now: Date): Promise<CheckoutSubmission> {
  const token = testCardToken(cardNumber);
  if (!token) return { kind: 'bad_card' };
  const read: ReadCtx = { tx: env.db, tenantId: session.tenant_id, now };
  const resolved = await gatewayForCurrency(read, env, (await getInvoiceRow(read, session.invoice_id)).currency);
  const saved = await resolved.gateway.adapter.attachPaymentMethod(callContext(env, resolved, now), {
    token,
    customer: { id: '', email: '', name: null },
    gatewayCustomerId: null,
  });
  let attempt;
  try {
    attempt = await env.db
      .transaction()
      .execute((tx) =>
        startAttempt({ tx, tenantId: session.tenant_id, now }, env, session.invoice_id, { checkout: { sessionId: session.id, saved, resolved } }),
      );
  } catch (error) {
    if (isKoshError(error) && error.kind === 'conflict') return { kind: 'already', reason: error.message };
    throw error;
  }
  await chargeAndCommit(env, attempt, { saved, resolved, now });
  return { kind: 'charged' };
}
