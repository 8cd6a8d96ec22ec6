import type { Ctx } from '../../platform/context.js';
import { errors } from '../../platform/errors.js';
import { emitEvent } from '../../platform/events/events.js';
import { newId } from '../../platform/ids.js';
import { enqueueJobs } from '../../platform/jobs/jobs.js';
import { enqueueMail, isDeliverableAddress } from '../../platform/mail/index.js';
import { getCustomer } from '../../modules/customers/index.js';
import { getEntity } from '../../modules/entities/index.js';
import { applyToInvoice, getInvoiceRow, renderInvoice, setLastPaymentError, type InvoiceRow } from '../../modules/invoices/index.js';
import { Account, postEntry } from '../../modules/ledger/index.js';
import { savePayment } from '../../modules/payments/index.js';
import {
  callContext,
  completeCheckoutSession,
  defaultPaymentMethod,
  duePendingAttempts,
  findAttempt,
  findPaymentMethod,
  finishAttempt,
  gatewayForCurrency,
  gatewayOfPaymentMethod,
  getCustomerPaymentMethod,
  insertAttempt,
  pendingAttemptOf,
  savedPaymentMethod,
  type AttemptRow,
  type ChargeOutcome,
  type CollectionsEnv,
  type ResolvedGateway,
  type SavedPaymentMethod,
} from '../../modules/collections/index.js';

/** The job that charges finalized charge_automatically invoices: `{ invoice_ids: [...] }`, one per finalizing transaction. */
export const CHARGE_INVOICES_JOB = 'collections.charge_invoices';
/** The recurring sweep that resolves attempts left pending (worker died mid-call, unknown outcome, mandate notice served). */
export const RESOLVE_ATTEMPTS_JOB = 'collections.resolve_attempts';
/** RBI: a mandate debit is announced at least 24 hours before it is attempted. */
export const PRE_DEBIT_NOTICE_MS = 24 * 60 * 60 * 1000;
/** A pending attempt untouched this long is no longer in anyone's hands: the sweep resolves it. */
export const RESOLVE_AFTER_MS = 60_000;

const idempotencyKeyOf = (attemptId: string) => `kosh_att_${attemptId}`;

/**
 * Queues the automatic charge of the charge_automatically invoices among `invoices` that are still
 * open with something due, in the finalizing transaction: the charge itself happens in the job,
 * after commit, never inside it.
 */
export async function scheduleAutomaticCharges(ctx: Ctx, invoices: Pick<InvoiceRow, 'id' | 'status' | 'amount_due' | 'collection_method'>[]): Promise<void> {
  const ids = invoices.filter((i) => i.collection_method === 'charge_automatically' && i.status === 'open' && i.amount_due > 0).map((i) => i.id);
  if (ids.length === 0) return;
  await enqueueJobs(ctx.tx, ctx.now, [{ kind: CHARGE_INVOICES_JOB, tenantId: ctx.tenantId, payload: { invoice_ids: ids } }]);
}

export type StartAttemptOptions = {
  paymentMethodId?: string;
  /** The hosted checkout page: a one-off card, not saved on the customer. */
  checkout?: { sessionId: string; saved: SavedPaymentMethod; resolved: ResolvedGateway };
};

function formatAmount(amount: number, currency: string): string {
  return `${currency} ${(amount / 100).toFixed(2)}`;
}

/**
 * First half of an attempt, in the caller's transaction: locks the invoice, checks it can be paid,
 * picks the payment method and gateway, and commits the attempt as `pending` BEFORE any gateway
 * call. The partial unique index on pending attempts makes "one attempt in flight per invoice" a
 * database fact. A mandate debit is announced by e-mail and waits 24 hours (charge_after).
 */
export async function startAttempt(ctx: Ctx, env: CollectionsEnv, invoiceId: string, options: StartAttemptOptions = {}): Promise<AttemptRow> {
  const invoice = await getInvoiceRow(ctx, invoiceId, true);
  if (invoice.status !== 'open' && invoice.status !== 'uncollectible') {
    throw errors.conflict(`cannot pay an invoice whose status is ${invoice.status}`, 'invalid_invoice_state');
  }
  if (invoice.amount_due <= 0) throw errors.conflict('the invoice has nothing due', 'invalid_invoice_state');
  if (await pendingAttemptOf(ctx.tx, ctx.tenantId, invoice.id))
    throw errors.conflict('a payment attempt on this invoice is already in progress', 'payment_in_progress');
  const route = await gatewayForCurrency(ctx, env, invoice.currency);

  let saved: SavedPaymentMethod;
  let resolved: ResolvedGateway;
  let paymentMethodId: string | null = null;
  if (options.checkout) {
    saved = options.checkout.saved;
    resolved = options.checkout.resolved;
  } else {
    const pm = options.paymentMethodId
      ? await getCustomerPaymentMethod(ctx, invoice.customer_id, options.paymentMethodId)
      : await defaultPaymentMethod(ctx.tx, ctx.tenantId, invoice.customer_id);
    if (!pm) throw errors.invalidField('payment_method_id', 'the customer has no default payment method; give payment_method_id');
    saved = savedPaymentMethod(pm);
    resolved = pm.gateway === route.provider && pm.connection_id === route.connectionId ? route : await gatewayOfPaymentMethod(ctx, env, pm);
    paymentMethodId = pm.id;
  }

  const notice = saved.requiresPreDebitNotice;
  const attempt: AttemptRow = {
    tenant_id: ctx.tenantId,
    id: newId(),
    invoice_id: invoice.id,
    customer_id: invoice.customer_id,
    payment_method_id: paymentMethodId,
    checkout_session_id: options.checkout?.sessionId ?? null,
    gateway: resolved.provider,
    connection_id: resolved.connectionId,
    amount: invoice.amount_due,
    currency: invoice.currency,
    status: 'pending',
    pending_reason: notice ? 'notice' : 'charging',
    charge_after: notice ? new Date(ctx.now.getTime() + PRE_DEBIT_NOTICE_MS) : null,
    gateway_payment_id: null,
    failure_code: null,
    failure_message: null,
    payment_id: null,
    created_at: ctx.now,
    updated_at: ctx.now,
  };
  await insertAttempt(ctx.tx, attempt);
  if (notice) {
    const customer = await getCustomer(ctx, invoice.customer_id);
    if (isDeliverableAddress(customer.email)) {
      await enqueueMail(ctx.tx, ctx.now, {
        tenantId: ctx.tenantId,
        to: customer.email,
        subject: `Upcoming UPI AutoPay debit of ${formatAmount(attempt.amount, attempt.currency)} for invoice ${invoice.number}`,
        text:
          `Dear ${customer.name ?? customer.email},\n\n` +
          `${formatAmount(attempt.amount, attempt.currency)} will be debited from your UPI AutoPay mandate on or after ` +
          `${attempt.charge_after!.toISOString()} for invoice ${invoice.number}.\n\n` +
          `To stop this debit, revoke the mandate in your UPI app before then.\n`,
      });
    }
  }
  return attempt;
}

function unknownFrom(error: unknown): ChargeOutcome {
  return { status: 'unknown', reason: error instanceof Error ? error.message : String(error) };
}

/**
 * Second half: asks the gateway (outside any transaction) and commits the outcome. A fresh attempt
 * is charged with the key derived from its id; one found pending later (the worker died mid-call,
 * the outcome was unknown) is first looked up, and charged (same key) only when the provider never
 * saw it. Returns the attempt as committed.
 */
export async function executeAttempt(env: CollectionsEnv, tenantId: string, attemptId: string, now: Date, fresh: boolean): Promise<AttemptRow | undefined> {
  const asked = await outcomeOf(env, tenantId, attemptId, now, fresh);
  if (!asked) return findAttempt(env.db, tenantId, attemptId);
  return commitOutcome(env, tenantId, attemptId, now, asked);
}

/** What the gateway says of a pending attempt (charging it if it never saw it); null when it is not pending or not yet due. Commits nothing. */
async function outcomeOf(env: CollectionsEnv, tenantId: string, attemptId: string, now: Date, fresh: boolean): Promise<ChargeOutcome | null> {
  const read: Ctx = { tx: env.db, tenantId, now };
  const attempt = await findAttempt(env.db, tenantId, attemptId);
  if (!attempt || attempt.status !== 'pending') return null;
  if (attempt.charge_after && attempt.charge_after > now) return null;
  let saved: SavedPaymentMethod;
  let resolved: ResolvedGateway;
  let blocked: string | undefined;
  if (attempt.payment_method_id) {
    const pm = await findPaymentMethod(env.db, tenantId, attempt.payment_method_id);
    if (!pm) throw new Error(`attempt ${attempt.id}: payment method missing`);
    saved = savedPaymentMethod(pm);
    // Removed or revoked (a mandate) meanwhile: whatever was sent is still looked up, nothing new is charged.
    if (pm.status !== 'active') blocked = `the payment method was ${pm.status}`;
    resolved = await gatewayOfPaymentMethod(read, env, pm);
  } else {
    // Checkout attempts carry a one-off card: only lookups can finish them after the request.
    saved = { type: 'card', brand: null, last4: null, reference: '', gatewayCustomerId: null, requiresPreDebitNotice: false };
    resolved = await gatewayForCurrency(read, env, attempt.currency);
  }
  return askGateway(env, attempt, saved, resolved, now, fresh, blocked);
}

export async function chargeAndCommit(
  env: CollectionsEnv,
  attempt: AttemptRow,
  saved: SavedPaymentMethod,
  resolved: ResolvedGateway,
  now: Date,
  fresh: boolean,
): Promise<AttemptRow | undefined> {
  return commitOutcome(env, attempt.tenant_id, attempt.id, now, await askGateway(env, attempt, saved, resolved, now, fresh));
}

async function askGateway(
  env: CollectionsEnv,
  attempt: AttemptRow,
  saved: SavedPaymentMethod,
  resolved: ResolvedGateway,
  now: Date,
  fresh: boolean,
  blocked?: string,
): Promise<ChargeOutcome> {
  const adapter = resolved.gateway.adapter;
  const call = callContext(env, resolved, now);
  const key = idempotencyKeyOf(attempt.id);
  const metadata = { tenant_id: attempt.tenant_id, invoice_id: attempt.invoice_id, attempt_id: attempt.id };
  try {
    if (!fresh) {
      const looked = await adapter.lookupCharge(call, { idempotencyKey: key, gatewayPaymentId: attempt.gateway_payment_id, metadata });
      if (looked.status !== 'not_found') return looked;
    }
    if (blocked) return { status: 'failed', gatewayPaymentId: null, failureCode: 'payment_method_unavailable', failureMessage: blocked };
    if (!saved.reference)
      return { status: 'failed', gatewayPaymentId: null, failureCode: 'checkout_abandoned', failureMessage: 'the checkout payment never reached the gateway' };
    const read: Ctx = { tx: env.db, tenantId: attempt.tenant_id, now };
    const invoice = await getInvoiceRow(read, attempt.invoice_id);
    if ((invoice.status !== 'open' && invoice.status !== 'uncollectible') || invoice.amount_due < attempt.amount) {
      // Paid, credited or voided while the attempt waited (a mandate's notice period): nothing to charge.
      return {
        status: 'failed',
        gatewayPaymentId: null,
        failureCode: 'invoice_not_payable',
        failureMessage: `the invoice is ${invoice.status} with ${invoice.amount_due} due`,
      };
    }
    const customer = await getCustomer(read, attempt.customer_id);
    return await adapter.charge(call, {
      idempotencyKey: key,
      amount: attempt.amount,
      currency: attempt.currency,
      paymentMethod: saved,
      customer: { id: customer.id, email: customer.email, name: customer.name, phone: customer.phone },
      description: `Invoice ${invoice.number ?? attempt.invoice_id}`,
      metadata,
    });
  } catch (error) {
    return unknownFrom(error);
  }
}

/** Commits a gateway outcome in one transaction (see recordChargeOutcome). */
export async function commitOutcome(
  env: CollectionsEnv,
  tenantId: string,
  attemptId: string,
  now: Date,
  outcome: ChargeOutcome,
): Promise<AttemptRow | undefined> {
  return env.db.transaction().execute((tx) => recordChargeOutcome({ tx, tenantId, now }, attemptId, outcome));
}

/**
 * Applies what the gateway said to a pending attempt, in the caller's transaction (the attempt's
 * commit, or an inbound webhook's). Succeeded: the payment (card/upi) is recorded and applied to
 * the invoice, Dr gateway clearing, Cr receivables (anything the invoice no longer owes — it was
 * paid another way meanwhile — goes to customer advances); invoice.paid when it closes. Failed:
 * `last_payment_error` on the invoice and invoice.payment_failed. Pending/unknown: it stays pending
 * for the webhook or the sweep. The guarded UPDATE out of `pending` makes it happen once.
 */
export async function recordChargeOutcome(ctx: Ctx, attemptId: string, outcome: ChargeOutcome): Promise<AttemptRow | undefined> {
  if (outcome.status === 'pending' || outcome.status === 'unknown') {
    return finishAttempt(ctx.tx, ctx.tenantId, attemptId, {
      pending_reason: outcome.status === 'pending' ? 'gateway' : 'unknown',
      gateway_payment_id: outcome.status === 'pending' ? outcome.gatewayPaymentId : undefined,
      updated_at: ctx.now,
    });
  }
  if (outcome.status === 'failed') {
    const attempt = await finishAttempt(ctx.tx, ctx.tenantId, attemptId, {
      status: 'failed',
      pending_reason: null,
      gateway_payment_id: outcome.gatewayPaymentId,
      failure_code: outcome.failureCode,
      failure_message: outcome.failureMessage,
      updated_at: ctx.now,
    });
    if (!attempt) return findAttempt(ctx.tx, ctx.tenantId, attemptId);
    const current = await getInvoiceRow(ctx, attempt.invoice_id);
    if (current.status !== 'open' && current.status !== 'uncollectible') return attempt;
    const invoice = await setLastPaymentError(ctx, attempt.invoice_id, { code: outcome.failureCode, message: outcome.failureMessage });
    await emitEvent(ctx, 'invoice.payment_failed', await renderInvoice(ctx, invoice));
    return attempt;
  }
  const paymentId = newId();
  const attempt = await finishAttempt(ctx.tx, ctx.tenantId, attemptId, {
    status: 'succeeded',
    pending_reason: null,
    gateway_payment_id: outcome.gatewayPaymentId,
    payment_id: paymentId,
    failure_code: null,
    failure_message: null,
    updated_at: ctx.now,
  });
  if (!attempt) return findAttempt(ctx.tx, ctx.tenantId, attemptId);
  const invoice = await getInvoiceRow(ctx, attempt.invoice_id, true);
  const settleable = invoice.status === 'open' || invoice.status === 'uncollectible';
  const applied = settleable ? Math.min(attempt.amount, invoice.amount_due) : 0;
  const advance = attempt.amount - applied;
  const entity = await getEntity(ctx, invoice.entity_id);
  await postEntry(ctx, {
    ledgerId: entity.tb_ledger_id,
    entityId: entity.id,
    kind: 'payment.recorded',
    referenceType: 'payment',
    referenceId: paymentId,
    currency: attempt.currency,
    description: `${outcome.paymentType === 'upi' ? 'UPI' : 'Card'} payment through ${attempt.gateway} for invoice ${invoice.number}`,
    lines: [
      { account: Account.GATEWAY_CLEARING, debit: attempt.amount, customerId: attempt.customer_id },
      { account: Account.RECEIVABLES, credit: applied, customerId: attempt.customer_id, invoiceId: invoice.id },
      { account: Account.CUSTOMER_ADVANCES, credit: advance, customerId: attempt.customer_id },
    ],
  });
  const payment = await savePayment(ctx, {
    tenant_id: ctx.tenantId,
    id: paymentId,
    customer_id: attempt.customer_id,
    invoice_id: invoice.id,
    payment_type: outcome.paymentType,
    channel: 'gateway',
    status: 'succeeded',
    amount: attempt.amount,
    tds_amount: 0,
    currency: attempt.currency,
    reference_number: outcome.gatewayPaymentId,
    notes: '',
    recorded_by: `gateway:${attempt.gateway}`,
    recorded_at: ctx.now,
    gateway: attempt.gateway,
    gateway_payment_id: outcome.gatewayPaymentId,
    attempt_id: attempt.id,
    created_at: ctx.now,
    updated_at: ctx.now,
  });
  if (invoice.last_payment_error) await setLastPaymentError(ctx, invoice.id, null);
  if (applied > 0) await applyToInvoice(ctx, invoice.id, { paid: applied });
  if (attempt.checkout_session_id) await completeCheckoutSession(ctx.tx, ctx.tenantId, attempt.checkout_session_id, ctx.now);
  await emitEvent(ctx, 'payment.recorded', payment);
  return attempt;
}

/**
 * The job CHARGE_INVOICES_JOB, in chunks of CHARGE_CHUNK invoices: one transaction commits a
 * pending attempt on the customer's default payment method for each invoice still open and
 * charge_automatically (an invoice with an attempt already pending is resolved instead — that is
 * what a rerun of this job after a crash finds); then the gateway is asked for each, a few at a
 * time; then one transaction commits the outcomes. One commit before and one after the calls per
 * chunk, not per invoice — the order that makes a charge happen once is the same. If the outcome
 * transaction fails, the attempts stay pending and the sweep resolves them by lookup.
 * No default method: last_payment_error `no_payment_method` and invoice.payment_failed.
 */
export async function chargeInvoices(env: CollectionsEnv, tenantId: string, invoiceIds: string[], now: Date): Promise<void> {
  for (let i = 0; i < invoiceIds.length; i += CHARGE_CHUNK) {
    const chunk = invoiceIds.slice(i, i + CHARGE_CHUNK);
    const started = await env.db.transaction().execute(async (tx) => {
      const ctx: Ctx = { tx, tenantId, now };
      const out: { attempt: AttemptRow; fresh: boolean }[] = [];
      for (const invoiceId of chunk) {
        const one = await startAutomaticAttempt(ctx, env, invoiceId);
        if (one) out.push(one);
      }
      return out;
    });
    const outcomes = new Array<ChargeOutcome | null>(started.length).fill(null);
    let next = 0;
    const lane = async () => {
      for (let k = next++; k < started.length; k = next++) outcomes[k] = await outcomeOf(env, tenantId, started[k]!.attempt.id, now, started[k]!.fresh);
    };
    await Promise.all(Array.from({ length: Math.min(CHARGE_PARALLELISM, started.length) }, lane));
    if (outcomes.every((o) => o === null)) continue;
    await env.db.transaction().execute(async (tx) => {
      const ctx: Ctx = { tx, tenantId, now };
      for (const [k, outcome] of outcomes.entries()) if (outcome) await recordChargeOutcome(ctx, started[k]!.attempt.id, outcome);
    });
  }
}

/** Invoices per charge transaction pair, and gateway calls in flight at once, of the charge job. */
export const CHARGE_CHUNK = 50;
export const CHARGE_PARALLELISM = 8;

async function startAutomaticAttempt(ctx: Ctx, env: CollectionsEnv, invoiceId: string): Promise<{ attempt: AttemptRow; fresh: boolean } | null> {
  const invoice = await getInvoiceRow(ctx, invoiceId, true);
  if (invoice.collection_method !== 'charge_automatically' || (invoice.status !== 'open' && invoice.status !== 'uncollectible') || invoice.amount_due <= 0)
    return null;
  const pending = await pendingAttemptOf(ctx.tx, ctx.tenantId, invoiceId);
  if (pending) return { attempt: pending, fresh: false };
  if (!(await defaultPaymentMethod(ctx.tx, ctx.tenantId, invoice.customer_id))) {
    if (invoice.last_payment_error?.code === 'no_payment_method') return null;
    const marked = await setLastPaymentError(ctx, invoiceId, { code: 'no_payment_method', message: 'the customer has no default payment method' });
    await emitEvent(ctx, 'invoice.payment_failed', await renderInvoice(ctx, marked));
    return null;
  }
  return { attempt: await startAttempt(ctx, env, invoiceId), fresh: true };
}

/** The sweep RESOLVE_ATTEMPTS_JOB: every pending attempt nobody holds (see RESOLVE_AFTER_MS) is looked up, then charged if the gateway never saw it. */
export async function resolvePendingAttempts(env: CollectionsEnv, now: Date, limit = 500): Promise<number> {
  const due = await duePendingAttempts(env.db, env.config.mode, new Date(now.getTime() - RESOLVE_AFTER_MS), limit);
  for (const a of due) await executeAttempt(env, a.tenant_id, a.id, now, false);
  return due.length;
}
