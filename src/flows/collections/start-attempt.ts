import type { Ctx } from '../../platform/context.js';
import { errors, KoshError } from '../../platform/errors.js';
import { emitEvents } from '../../platform/events/events.js';
import { newId } from '../../platform/ids.js';
import { enqueueJobs } from '../../platform/jobs/jobs.js';
import { findCustomers } from '../../modules/customers/index.js';
import { CREDIT_TOP_UP_REASON, getInvoiceRow, getInvoiceRows, renderInvoices, setLastPaymentErrors, type InvoiceRow } from '../../modules/invoices/index.js';
import { topUpPaymentMethods } from '../../modules/credits/index.js';
import {
  AUTOPAY_MAX_ATTEMPTS,
  failedAutopayAttemptsOf,
  MANDATE_STOP_CODES,
  mandateDebitBlock,
  mandateStopsOf,
  outsideUpiPeak,
  defaultPaymentMethod,
  defaultPaymentMethodsOf,
  findPaymentMethod,
  gatewayForCurrency,
  gatewayOfPaymentMethod,
  getCustomerPaymentMethod,
  insertAttempts,
  pendingAttemptOf,
  pendingAttemptsOfInvoices,
  savedPaymentMethod,
  type AttemptRow,
  type CollectionsEnv,
  type GatewayCustomer,
  type PaymentMethodRow,
  type ResolvedGateway,
  type SavedPaymentMethod,
} from '../../modules/collections/index.js';
import { getEntity } from '../../modules/entities/index.js';
import { newSkipToken, queuePreDebitNotice } from './pre-debit-notice.js';

/**
 * Step 1 of collecting an invoice: the attempt is committed `pending` BEFORE any gateway call.
 * One path for every start — a request to pay one invoice (`startAttempt`) and the charge job's
 * chunk of invoices (`startAutomaticAttempts`): plan each attempt (payment method, gateway),
 * insert the rows in one statement, queue the pre-debit notice of each mandate debit.
 */

/** RBI: a mandate debit is announced at least 24 hours before it is attempted. */
export const PRE_DEBIT_NOTICE_MS = 24 * 60 * 60 * 1000;

/** An invoice a payment may still be applied to. */
export const payable = (invoice: Pick<InvoiceRow, 'status'>) => invoice.status === 'open' || invoice.status === 'uncollectible';

export type StartAttemptOptions = {
  paymentMethodId?: string;
  /** The hosted checkout page: a one-off card, not saved on the customer. */
  checkout?: { sessionId: string; saved: SavedPaymentMethod; resolved: ResolvedGateway };
};

/**
 * An attempt of the charge job, and what its gateway call needs (read once for the chunk); no call
 * for one found pending or waiting out a notice. `payLink`: a mandate debit not attempted (above
 * the authentication limit or the mandate's terms: canceled with why) — the customer is sent a pay link.
 */
export type StartedAttempt = {
  attempt: AttemptRow;
  fresh: boolean;
  call?: { saved: SavedPaymentMethod; resolved: ResolvedGateway; customer: GatewayCustomer };
  payLink?: true;
};

/** How an attempt is paid: a saved payment method of the customer, or a checkout session's one-off card. */
type PaymentSource = { method: PaymentMethodRow } | { checkout: NonNullable<StartAttemptOptions['checkout']> };

/** An attempt decided, not yet written. */
type PlannedAttempt = {
  invoice: InvoiceRow;
  saved: SavedPaymentMethod;
  resolved: ResolvedGateway;
  paymentMethodId: string | null;
  checkoutSessionId: string | null;
  /** The saved method charged (null: a checkout's one-off card). */
  method: PaymentMethodRow | null;
};

/**
 * The attempt on one invoice, in the caller's transaction: locks the invoice, checks it can be
 * paid, picks the payment method (given, else the customer's default) and the gateway, and writes
 * the attempt `pending`. The partial unique index on pending attempts makes "one attempt in flight
 * per invoice" a database fact. A mandate debit is announced by e-mail and waits 24 hours
 * (charge_after).
 */
export async function startAttempt(ctx: Ctx, env: CollectionsEnv, invoiceId: string, options: StartAttemptOptions = {}): Promise<AttemptRow> {
  const invoice = await getInvoiceRow(ctx, invoiceId, true);
  if (!payable(invoice)) throw errors.conflict(`cannot pay an invoice whose status is ${invoice.status}`, 'invalid_invoice_state');
  if (invoice.amount_due <= 0) throw errors.conflict('the invoice has nothing due', 'invalid_invoice_state');
  if (await pendingAttemptOf(ctx.tx, ctx.tenantId, invoice.id))
    throw errors.conflict('a payment attempt on this invoice is already in progress', 'payment_in_progress');
  const routing = gatewayRouting(ctx, env);
  // No gateway for the invoice's currency is refused before the payment method is looked at.
  await routing.route(invoice.currency);
  const source: PaymentSource = options.checkout
    ? { checkout: options.checkout }
    : { method: await chosenPaymentMethod(ctx, invoice.customer_id, options.paymentMethodId) };
  if ('method' in source && source.method.type === 'upi_mandate') {
    // An explicit request is a new debit the customer is told of (a skipped or refused one may be
    // asked again), but NPCI's retry limit holds for every debit of the invoice.
    const failures = (await failedAutopayAttemptsOf(ctx.tx, ctx.tenantId, [invoice.id])).get(invoice.id) ?? 0;
    const refusal = mandateRefusal(source.method, undefined, failures);
    if (refusal) throw errors.conflict(refusal.message, 'autopay_retry_limit');
  }
  const [attempt] = await insertAttemptsPlanned(ctx, env, [await planAttempt(routing, invoice, source)], EXPLICIT_BLOCK_TAIL);
  return attempt!;
}

/**
 * The charge job's start, set-based for a chunk of invoices in one transaction: locks them, keeps
 * those still open (or uncollectible), charge_automatically and owing, resumes any attempt already
 * pending (what a rerun after a crash finds: resolved by lookup, `fresh: false`), and starts one on
 * the customer's default payment method for each of the others — one statement per step for the
 * whole chunk. No default method, or no gateway for the currency or the method: the invoice gets
 * last_payment_error and `invoice.payment_failed`, once (not again on a rerun with the same error).
 */
export async function startAutomaticAttempts(ctx: Ctx, env: CollectionsEnv, invoiceIds: string[]): Promise<StartedAttempt[]> {
  const invoices = (await getInvoiceRows(ctx, invoiceIds, true)).filter(
    (invoice) => invoice.collection_method === 'charge_automatically' && payable(invoice) && invoice.amount_due > 0,
  );
  if (invoices.length === 0) return [];
  const pending = new Map(
    (
      await pendingAttemptsOfInvoices(
        ctx.tx,
        ctx.tenantId,
        invoices.map((i) => i.id),
      )
    ).map((a) => [a.invoice_id, a]),
  );
  const out: StartedAttempt[] = invoices.flatMap((invoice) => {
    const attempt = pending.get(invoice.id);
    return attempt ? [{ attempt, fresh: false }] : [];
  });
  const fresh = invoices.filter((invoice) => !pending.has(invoice.id));
  if (fresh.length === 0) return out;
  const customerIds = [...new Set(fresh.map((i) => i.customer_id))];
  const defaults = new Map((await defaultPaymentMethodsOf(ctx.tx, ctx.tenantId, customerIds)).map((m) => [m.customer_id, m]));
  const named = await namedPaymentMethods(ctx, fresh);
  const freshIds = fresh.map((i) => i.id);
  const [stops, autopayFailures] = await Promise.all([
    mandateStopsOf(ctx.tx, ctx.tenantId, freshIds, MANDATE_STOP_CODES),
    failedAutopayAttemptsOf(ctx.tx, ctx.tenantId, freshIds),
  ]);
  const customerOf = new Map((await findCustomers(ctx.tx, ctx.tenantId, customerIds)).map((c) => [c.id, c]));
  const routing = gatewayRouting(ctx, env);
  const cannot: { invoice: InvoiceRow; error: { code: string; message: string } }[] = [];
  const planned: PlannedAttempt[] = [];
  for (const invoice of fresh) {
    const choice = named.get(invoice.id);
    if (choice && !choice.method) {
      cannot.push({ invoice, error: { code: 'payment_method_unavailable', message: choice.reason } });
      continue;
    }
    const method = choice?.method ?? defaults.get(invoice.customer_id);
    if (!method) {
      cannot.push({ invoice, error: { code: 'no_payment_method', message: 'the customer has no default payment method' } });
      continue;
    }
    const mandateStop = mandateRefusal(method, stops.get(invoice.id), autopayFailures.get(invoice.id) ?? 0);
    if (mandateStop) {
      cannot.push({ invoice, error: mandateStop });
      continue;
    }
    try {
      planned.push(await planAttempt(routing, invoice, { method }));
    } catch (error) {
      if (!(error instanceof KoshError)) throw error;
      cannot.push({ invoice, error: { code: error.reason ?? error.kind, message: error.message } });
    }
  }
  const attempts = await insertAttemptsPlanned(ctx, env, planned, AUTOMATIC_BLOCK_TAIL);
  attempts.forEach((attempt, k) => {
    const { saved, resolved, invoice } = planned[k]!;
    if (attempt.status === 'canceled') {
      out.push({ attempt, fresh: true, payLink: true });
      return;
    }
    const customer = customerOf.get(invoice.customer_id)!;
    // A mandate debit waits out its notice: the sweep charges it when it is due.
    const call =
      attempt.pending_reason === 'notice'
        ? undefined
        : { saved, resolved, customer: { id: customer.id, email: customer.email, name: customer.name, phone: customer.phone } };
    out.push({ attempt, fresh: true, call });
  });
  await failUnchargeable(ctx, cannot);
  return out;
}

/**
 * The invoices that must be charged to one named payment method and no other — top-ups bought by
 * an auto top-up that names its method (decision 0410) — with that method, or, when it was
 * detached or revoked since, why nothing is charged.
 */
async function namedPaymentMethods(ctx: Ctx, invoices: InvoiceRow[]): Promise<Map<string, { method?: PaymentMethodRow; reason: string }>> {
  const out = new Map<string, { method?: PaymentMethodRow; reason: string }>();
  const topUps = invoices.filter((i) => i.billing_reason === CREDIT_TOP_UP_REASON);
  if (topUps.length === 0) return out;
  const wanted = await topUpPaymentMethods(
    ctx,
    topUps.map((i) => i.id),
  );
  for (const invoice of topUps) {
    const id = wanted.get(invoice.id);
    if (!id) continue;
    const pm = await findPaymentMethod(ctx.tx, ctx.tenantId, id);
    if (pm && pm.customer_id === invoice.customer_id && pm.status === 'active') out.set(invoice.id, { method: pm, reason: '' });
    else out.set(invoice.id, { reason: `the auto top-up's payment method ${id} is ${pm?.status ?? 'gone'}; no other method is charged` });
  }
  return out;
}

/**
 * Why the charge job does not debit a mandate again (docs/decisions/0520): an earlier debit of the
 * invoice was skipped by the customer or not attempted for the mandate's terms (it waits for the
 * customer's own payment), or a UPI AutoPay debit used its one attempt and three retries (NPCI).
 */
function mandateRefusal(method: PaymentMethodRow, stop: string | undefined, autopayFailures: number): { code: string; message: string } | undefined {
  if (!method.requires_pre_debit_notice) return undefined;
  if (stop === 'mandate_debit_skipped')
    return { code: stop, message: 'the customer skipped the mandate debit of this invoice from its pre-debit notice; the invoice waits for their own payment' };
  if (stop) return { code: stop, message: 'a mandate debit of this invoice was not attempted and the customer was sent a pay link; it is not debited again' };
  if (method.type === 'upi_mandate' && autopayFailures >= AUTOPAY_MAX_ATTEMPTS)
    return {
      code: 'autopay_retry_limit',
      message: `UPI AutoPay allows one attempt and three retries per debit (NPCI); ${autopayFailures} debits of this invoice failed`,
    };
  return undefined;
}

/** Invoices the job cannot charge get the error, announced once: one already marked with the same error is not failed again on every rerun. */
async function failUnchargeable(ctx: Ctx, cannot: { invoice: InvoiceRow; error: { code: string; message: string } }[]): Promise<void> {
  const failing = cannot.filter(({ invoice, error }) => invoice.last_payment_error?.code !== error.code);
  const marked = await setLastPaymentErrors(
    ctx,
    failing.map(({ invoice, error }) => ({ id: invoice.id, error })),
  );
  await emitEvents(
    ctx,
    (await renderInvoices(ctx, marked)).map((invoice) => ({ type: 'invoice.payment_failed' as const, object: invoice })),
  );
}

async function chosenPaymentMethod(ctx: Ctx, customerId: string, paymentMethodId: string | undefined): Promise<PaymentMethodRow> {
  const method = paymentMethodId
    ? await getCustomerPaymentMethod(ctx, customerId, paymentMethodId)
    : await defaultPaymentMethod(ctx.tx, ctx.tenantId, customerId);
  if (!method) throw errors.invalidField('payment_method_id', 'the customer has no default payment method; give payment_method_id');
  return method;
}

/** Gateways of one start, resolved once per currency and once per payment method's connection. */
function gatewayRouting(ctx: Ctx, env: CollectionsEnv) {
  const routes = new Map<string, Promise<ResolvedGateway>>();
  const homes = new Map<string, Promise<ResolvedGateway>>();
  const route = (currency: string): Promise<ResolvedGateway> => {
    if (!routes.has(currency)) routes.set(currency, gatewayForCurrency(ctx, env, currency));
    return routes.get(currency)!;
  };
  /** The currency's gateway when the method is saved there, else the gateway the method belongs to. */
  const ofMethod = async (method: PaymentMethodRow, currency: string): Promise<ResolvedGateway> => {
    const routed = await route(currency);
    if (method.gateway === routed.provider && method.connection_id === routed.connectionId) return routed;
    const home = `${method.gateway}:${method.connection_id ?? ''}`;
    if (!homes.has(home)) homes.set(home, gatewayOfPaymentMethod(ctx, env, method));
    return homes.get(home)!;
  };
  return { route, ofMethod };
}

/** Decides an attempt: its payment method and gateway. Throws a KoshError when the invoice has no gateway to be charged through. */
async function planAttempt(routing: ReturnType<typeof gatewayRouting>, invoice: InvoiceRow, source: PaymentSource): Promise<PlannedAttempt> {
  if ('checkout' in source) {
    const { saved, resolved, sessionId } = source.checkout;
    return { invoice, saved, resolved, paymentMethodId: null, checkoutSessionId: sessionId, method: null };
  }
  const resolved = await routing.ofMethod(source.method, invoice.currency);
  return { invoice, saved: savedPaymentMethod(source.method), resolved, paymentMethodId: source.method.id, checkoutSessionId: null, method: source.method };
}

/** The job that e-mails the pay links of mandate debits not attempted: `{ attempt_ids: [...] }` (mandate-pay-links.ts). */
export const MANDATE_PAY_LINKS_JOB = 'collections.mandate_pay_links';

export const AUTOMATIC_BLOCK_TAIL = '; not debited: the customer was sent a pay link';
const EXPLICIT_BLOCK_TAIL = '; not debited: the customer must pay with their own authentication (a checkout session)';

/**
 * Writes the planned attempts (one statement) and queues the pre-debit notice of each mandate
 * debit, with its "skip this debit" link. A mandate debit the terms do not allow (above the
 * entity's AFA-free limit or the mandate's maximum, or outside its validity: docs/decisions/0520)
 * is written `canceled` with why, and never sent.
 */
async function insertAttemptsPlanned(ctx: Ctx, env: CollectionsEnv, planned: PlannedAttempt[], blockTail: string): Promise<AttemptRow[]> {
  const limits = new Map<string, Promise<number>>();
  const limitOf = (entityId: string) => {
    if (!limits.has(entityId))
      limits.set(
        entityId,
        getEntity(ctx, entityId).then((e) => e.emandate.afa_free_limit),
      );
    return limits.get(entityId)!;
  };
  const skipTokens = new Map<number, string>();
  const rows: AttemptRow[] = [];
  for (const [k, p] of planned.entries()) {
    const row = attemptRow(ctx, p.invoice, {
      notice: p.saved.requiresPreDebitNotice,
      upi: p.saved.type === 'upi_mandate',
      resolved: p.resolved,
      paymentMethodId: p.paymentMethodId,
      checkoutSessionId: p.checkoutSessionId,
    });
    if (row.pending_reason === 'notice' && p.method) {
      const block = mandateDebitBlock(p.method, { amount: row.amount, currency: row.currency, at: row.charge_after! }, await limitOf(p.invoice.entity_id));
      if (block) {
        rows.push({
          ...row,
          status: 'canceled',
          pending_reason: null,
          charge_after: null,
          failure_code: block.code,
          failure_message: block.message + blockTail,
        });
        continue;
      }
      const skip = newSkipToken();
      skipTokens.set(k, skip.token);
      row.skip_token_hash = skip.hash;
    }
    rows.push(row);
  }
  await insertAttempts(ctx.tx, rows);
  const blocked = rows.filter((r) => r.status === 'canceled').map((r) => r.id);
  if (blocked.length > 0 && blockTail === AUTOMATIC_BLOCK_TAIL)
    await enqueueJobs(ctx.tx, ctx.now, [{ kind: MANDATE_PAY_LINKS_JOB, tenantId: ctx.tenantId, payload: { attempt_ids: blocked } }]);
  for (const [k, row] of rows.entries()) {
    if (row.pending_reason !== 'notice') continue;
    await queuePreDebitNotice(ctx, env, planned[k]!.invoice, {
      id: row.id,
      amount: row.amount,
      currency: row.currency,
      charge_after: row.charge_after!,
      mandateReference: planned[k]!.saved.reference,
      skipToken: skipTokens.get(k)!,
    });
  }
  return rows;
}

/** A new pending attempt on the invoice's whole amount due (waiting out the pre-debit notice on a mandate). */
export function attemptRow(
  ctx: Ctx,
  invoice: InvoiceRow,
  how: {
    /** A mandate debit: announced, and charged no earlier than PRE_DEBIT_NOTICE_MS from now. */
    notice: boolean;
    /** A UPI AutoPay debit: charged outside NPCI's peak hours too. */
    upi?: boolean;
    resolved: Pick<ResolvedGateway, 'provider' | 'connectionId'>;
    paymentMethodId: string | null;
    checkoutSessionId: string | null;
  },
): AttemptRow {
  return {
    tenant_id: ctx.tenantId,
    id: newId(),
    invoice_id: invoice.id,
    customer_id: invoice.customer_id,
    payment_method_id: how.paymentMethodId,
    checkout_session_id: how.checkoutSessionId,
    gateway: how.resolved.provider,
    connection_id: how.resolved.connectionId,
    amount: invoice.amount_due,
    currency: invoice.currency,
    status: 'pending',
    pending_reason: how.notice ? 'notice' : 'charging',
    charge_after: how.notice ? debitTime(ctx.now, how.upi ?? false) : null,
    gateway_payment_id: null,
    failure_code: null,
    failure_message: null,
    payment_id: null,
    skip_token_hash: null,
    created_at: ctx.now,
    updated_at: ctx.now,
  };
}

/** When an announced mandate debit is made: 24 hours after the notice, and for UPI AutoPay the next instant outside NPCI's peak hours. */
export function debitTime(now: Date, upi: boolean): Date {
  const after = new Date(now.getTime() + PRE_DEBIT_NOTICE_MS);
  return upi ? outsideUpiPeak(after) : after;
}
