import type { Ctx } from '../../platform/context.js';
import { errors, KoshError } from '../../platform/errors.js';
import { emitEvents, type EventType } from '../../platform/events/events.js';
import { newId } from '../../platform/ids.js';
import { enqueueJobs } from '../../platform/jobs/jobs.js';
import { findCustomers, getCustomer } from '../../modules/customers/index.js';
import { receiveAdvance } from '../../modules/advances/index.js';
import { getEntity, transactionRate, type TransactionRate } from '../../modules/entities/index.js';
import { convertMinorUnits } from '../../platform/money.js';
import { queueDebitCanceledNotice, queuePreDebitNotice } from './pre-debit-notice.js';
import {
  applyPaymentsToInvoices,
  getInvoiceRow,
  getInvoiceRows,
  renderInvoices,
  setLastPaymentError,
  setLastPaymentErrors,
  type InvoiceRow,
} from '../../modules/invoices/index.js';
import { Account, postEntries, type Posting } from '../../modules/ledger/index.js';
import { savePayments } from '../../modules/payments/index.js';
import {
  callContext,
  cancelNoticeAttempt,
  claimNoticeAttempt,
  completeCheckoutSession,
  defaultPaymentMethod,
  defaultPaymentMethodsOf,
  duePendingAttempts,
  findAttempt,
  findAttempts,
  findPaymentMethod,
  finishAttempt,
  finishAttempts,
  gatewayForCurrency,
  gatewayOfPaymentMethod,
  gatewayName,
  getCustomerPaymentMethod,
  insertAttempt,
  insertAttempts,
  lockCheckoutSession,
  pendingAttemptOf,
  pendingAttemptsOfInvoices,
  savedPaymentMethod,
  type AttemptFinish,
  type AttemptRow,
  type ChargeOutcome,
  type CollectionsEnv,
  type GatewayCustomer,
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
  const attempt = attemptRow(ctx, invoice, notice, resolved, paymentMethodId, options.checkout?.sessionId ?? null);
  await insertAttempt(ctx.tx, attempt);
  if (notice) await queuePreDebitNotice(ctx, invoice, { amount: attempt.amount, currency: attempt.currency, charge_after: attempt.charge_after! });
  return attempt;
}

/** A new pending attempt on the invoice's whole amount due (waiting out the pre-debit notice on a mandate). */
function attemptRow(
  ctx: Ctx,
  invoice: InvoiceRow,
  notice: boolean,
  resolved: Pick<ResolvedGateway, 'provider' | 'connectionId'>,
  paymentMethodId: string | null,
  checkoutSessionId: string | null,
): AttemptRow {
  return {
    tenant_id: ctx.tenantId,
    id: newId(),
    invoice_id: invoice.id,
    customer_id: invoice.customer_id,
    payment_method_id: paymentMethodId,
    checkout_session_id: checkoutSessionId,
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
}

/** What a hosted-checkout payment event came to: applied, not this connection's unpaid session, or not what the session asked for. */
export type HostedCheckoutOutcome =
  { kind: 'applied' } | { kind: 'ignored' } | { kind: 'mismatch'; invoiceId: string; expected: { amount: number; currency: string } };

/**
 * A payment taken on the provider's hosted checkout (Stripe Checkout, a Razorpay Payment Link),
 * announced by its verified webhook, in the webhook's transaction: no attempt was in flight, so
 * one is written for the session and settled at once with what the provider collected. The session
 * row is locked first and must still be unpaid: a second event for the same payment (Stripe's
 * `checkout.session.completed` and `payment_intent.succeeded`, Razorpay's `payment_link.paid` and
 * `payment.captured`) finds it complete and changes nothing. The payment must be exactly what the
 * session asked the provider for (amount and currency; a session older than migration 0240: the
 * invoice's amount due): a signed event is believed about what happened, not about how much
 * (DESIGN §20). Anything else is a `mismatch` and nothing is applied.
 */
export async function recordHostedCheckoutPayment(
  ctx: Ctx,
  input: {
    sessionId: string;
    provider: string;
    connectionId: string;
    gatewayPaymentId: string;
    amount: number | null;
    currency: string | null;
    paymentType: 'card' | 'upi';
  },
): Promise<HostedCheckoutOutcome> {
  const session = await lockCheckoutSession(ctx.tx, ctx.tenantId, input.sessionId);
  if (!session || session.status === 'complete' || session.gateway !== input.provider || session.connection_id !== input.connectionId) {
    return { kind: 'ignored' };
  }
  const invoice = await getInvoiceRow(ctx, session.invoice_id, true);
  const expected = { amount: session.amount ?? invoice.amount_due, currency: session.currency ?? invoice.currency };
  if (input.amount !== expected.amount || input.currency !== expected.currency) return { kind: 'mismatch', invoiceId: invoice.id, expected };
  // A mandate debit still in its notice wait was never sent: it is canceled here, so the customer
  // pays once. One already sent to the gateway stays in flight (one pending attempt per invoice is
  // a database fact); the provider redelivers after this 409 (docs/decisions/0196).
  await cancelNoticeDebit(ctx, invoice, 'paid_by_checkout', `the invoice was paid on the ${gatewayName(session.gateway)} checkout page`);
  if (await pendingAttemptOf(ctx.tx, ctx.tenantId, invoice.id))
    throw errors.conflict('a payment attempt on this invoice is in progress; deliver the event again later', 'payment_in_progress');
  const attempt = attemptRow(ctx, invoice, false, { provider: session.gateway, connectionId: session.connection_id }, null, session.id);
  await insertAttempt(ctx.tx, { ...attempt, amount: expected.amount, pending_reason: 'gateway' });
  await recordChargeOutcome(ctx, attempt.id, { status: 'succeeded', gatewayPaymentId: input.gatewayPaymentId, paymentType: input.paymentType });
  return { kind: 'applied' };
}

/**
 * Cancels the invoice's mandate debit that is still waiting out its pre-debit notice (never sent to
 * the gateway), in the caller's transaction, and tells the customer the announced debit will not
 * happen. The guarded UPDATE races the sweep's claim (claimNoticeAttempt) on the attempt row:
 * whichever commits first wins, so a debit is either canceled or sent, never both. Answers the
 * canceled attempt, if any.
 */
async function cancelNoticeDebit(ctx: Ctx, invoice: InvoiceRow, code: string, message: string): Promise<AttemptRow | undefined> {
  const canceled = await cancelNoticeAttempt(ctx.tx, ctx.tenantId, invoice.id, { code, message }, ctx.now);
  if (!canceled) return undefined;
  await queueDebitCanceledNotice(ctx, invoice, canceled, message);
  return canceled;
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
  // Leaving the notice wait for the gateway is committed first: a hosted payment canceling the
  // debit meanwhile wins or loses this row, never both (cancelNoticeDebit).
  if (attempt.pending_reason === 'notice' && !(await claimNoticeAttempt(env.db, tenantId, attempt.id, now))) return null;
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
  /** Read by the caller for a whole batch: the invoice as it is now (undefined: gone) and the customer. */
  known?: { invoice: InvoiceRow | undefined; customer: ChargeCustomer },
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
    const invoice = known ? known.invoice : await getInvoiceRow(read, attempt.invoice_id);
    if (!invoice) throw errors.notFound('invoice');
    if ((invoice.status !== 'open' && invoice.status !== 'uncollectible') || invoice.amount_due < attempt.amount) {
      // Paid, credited or voided while the attempt waited (a mandate's notice period): nothing to charge.
      return {
        status: 'failed',
        gatewayPaymentId: null,
        failureCode: 'invoice_not_payable',
        failureMessage: `the invoice is ${invoice.status} with ${invoice.amount_due} due`,
      };
    }
    const customer = known ? known.customer : await getCustomer(read, attempt.customer_id);
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
 * commit, or an inbound webhook's). See recordChargeOutcomes, which this is for one attempt.
 */
export async function recordChargeOutcome(ctx: Ctx, attemptId: string, outcome: ChargeOutcome): Promise<AttemptRow | undefined> {
  const [attempt] = await recordChargeOutcomes(ctx, [{ attemptId, outcome }]);
  return attempt;
}

type SucceededOutcome = Extract<ChargeOutcome, { status: 'succeeded' }>;
type FailedOutcome = Extract<ChargeOutcome, { status: 'failed' }>;

/**
 * Applies what the gateway said to many pending attempts at once, in the caller's transaction —
 * a statement per step for the whole batch, not per attempt. Succeeded: the payment (card/upi) is
 * recorded and applied to its invoice, Dr gateway clearing, Cr receivables (anything the invoice no
 * longer owes — it was paid another way meanwhile — goes to customer advances); `invoice.paid`
 * when it closes, then `payment.recorded`. Failed: `last_payment_error` on the invoice and
 * `invoice.payment_failed` (unless it was paid, voided or written off meanwhile). Pending/unknown:
 * it stays pending for the webhook or the sweep. The guarded UPDATE out of `pending` makes each
 * happen once. Answers each item's attempt as it is after (finished here or by someone else).
 */
export async function recordChargeOutcomes(ctx: Ctx, items: { attemptId: string; outcome: ChargeOutcome }[]): Promise<(AttemptRow | undefined)[]> {
  const after = new Map<string, AttemptRow | undefined>();
  const finishes: AttemptFinish[] = [];
  const outcomes = new Map<string, SucceededOutcome | FailedOutcome>();
  for (const { attemptId, outcome } of items) {
    if (outcome.status === 'pending' || outcome.status === 'unknown') {
      // Rare (a mandate debit in flight, a dropped answer): one statement each.
      after.set(
        attemptId,
        await finishAttempt(ctx.tx, ctx.tenantId, attemptId, {
          pending_reason: outcome.status === 'pending' ? 'gateway' : 'unknown',
          gateway_payment_id: outcome.status === 'pending' ? outcome.gatewayPaymentId : undefined,
          updated_at: ctx.now,
        }),
      );
      continue;
    }
    outcomes.set(attemptId, outcome);
    finishes.push(
      outcome.status === 'succeeded'
        ? { id: attemptId, status: 'succeeded', gateway_payment_id: outcome.gatewayPaymentId, payment_id: newId(), failure_code: null, failure_message: null }
        : {
            id: attemptId,
            status: 'failed',
            gateway_payment_id: outcome.gatewayPaymentId,
            payment_id: null,
            failure_code: outcome.failureCode,
            failure_message: outcome.failureMessage,
          },
    );
  }
  const finished = await finishAttempts(ctx.tx, ctx.tenantId, finishes, ctx.now);
  for (const a of finished) after.set(a.id, a);
  const elsewhere = finishes.filter((f) => !after.has(f.id)).map((f) => f.id);
  for (const a of await findAttempts(ctx.tx, ctx.tenantId, elsewhere)) after.set(a.id, a);

  const succeeded = finished.filter((a) => a.status === 'succeeded');
  const failed = finished.filter((a) => a.status === 'failed');
  const events: { type: EventType; object: Record<string, unknown> & { id?: unknown } }[] = [];
  if (succeeded.length > 0 || failed.length > 0) {
    const invoices = new Map(
      (
        await getInvoiceRows(
          ctx,
          [...succeeded, ...failed].map((a) => a.invoice_id),
          true,
        )
      ).map((r) => [r.id, r]),
    );
    if (succeeded.length > 0) events.push(...(await recordGatewayPayments(ctx, succeeded, invoices, outcomes)));
    if (failed.length > 0) events.push(...(await recordFailures(ctx, failed, invoices, outcomes)));
  }
  await emitEvents(ctx, events);
  return items.map((i) => after.get(i.attemptId));
}

const payable = (invoice: InvoiceRow) => invoice.status === 'open' || invoice.status === 'uncollectible';

async function recordGatewayPayments(
  ctx: Ctx,
  attempts: AttemptRow[],
  invoices: Map<string, InvoiceRow>,
  outcomes: Map<string, SucceededOutcome | FailedOutcome>,
): Promise<{ type: EventType; object: Record<string, unknown> & { id?: unknown } }[]> {
  const entities = new Map<string, Awaited<ReturnType<typeof getEntity>>>();
  for (const a of attempts) {
    const entityId = invoices.get(a.invoice_id)!.entity_id;
    if (!entities.has(entityId)) entities.set(entityId, await getEntity(ctx, entityId));
  }
  // What each invoice still owes, spent in order (two payments of one invoice in one batch: the second finds less).
  const owed = new Map<string, number>();
  for (const invoice of invoices.values()) owed.set(invoice.id, payable(invoice) ? invoice.amount_due : 0);
  const appliedTo = new Map<string, number>();
  const rates = new Map<string, TransactionRate>();
  const postings: Posting[] = [];
  const payments: Parameters<typeof savePayments>[1] = [];
  for (const attempt of attempts) {
    const outcome = outcomes.get(attempt.id) as SucceededOutcome;
    const invoice = invoices.get(attempt.invoice_id)!;
    const entity = entities.get(invoice.entity_id)!;
    const applied = Math.min(attempt.amount, owed.get(invoice.id)!);
    owed.set(invoice.id, owed.get(invoice.id)! - applied);
    if (applied > 0) appliedTo.set(invoice.id, (appliedTo.get(invoice.id) ?? 0) + applied);
    const paymentId = attempt.payment_id!;
    // Money captured at the rate of its date (the entity's table, else the invoice's own rate).
    const rateKey = `${entity.id}:${attempt.currency}:${invoice.exchange_rate}`;
    if (!rates.has(rateKey)) rates.set(rateKey, await transactionRate(ctx, entity, attempt.currency, null, ctx.now, invoice.exchange_rate));
    const rate = rates.get(rateKey)!;
    postings.push({
      ledgerId: entity.tb_ledger_id,
      entityId: entity.id,
      kind: 'payment.recorded',
      referenceType: 'payment',
      referenceId: paymentId,
      currency: attempt.currency,
      description: `${outcome.paymentType === 'upi' ? 'UPI' : 'Card'} payment through ${attempt.gateway} for invoice ${invoice.number}`,
      rate: rate.rate,
      exchangeDifference: 'realized',
      lines: [
        { account: Account.GATEWAY_CLEARING, debit: attempt.amount, customerId: attempt.customer_id },
        { account: Account.RECEIVABLES, credit: applied, customerId: attempt.customer_id, invoiceId: invoice.id },
        { account: Account.CUSTOMER_ADVANCES, credit: attempt.amount - applied, customerId: attempt.customer_id },
      ],
    });
    payments.push({
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
      exchange_rate: rate.rate,
      exchange_rate_source: rate.source,
      functional_amount: rate.rate === null ? null : convertMinorUnits(attempt.amount, attempt.currency, entity.functional_currency, rate.rate),
      created_at: ctx.now,
      updated_at: ctx.now,
    });
  }
  await postEntries(ctx, postings);
  const saved = await savePayments(ctx, payments);
  const { closed } = await applyPaymentsToInvoices(
    ctx,
    [...appliedTo].map(([id, paid]) => ({ id, paid })),
  );
  // What an invoice no longer needed (it was paid another way meanwhile) is the customer's
  // advance: a receipt voucher with its GST, applicable to the next invoice or refundable.
  for (const [k, attempt] of attempts.entries()) {
    const rest = attempt.amount - (postings[k]!.lines.find((l) => l.account === Account.RECEIVABLES)?.credit ?? 0);
    if (rest <= 0) continue;
    await receiveAdvance(ctx, {
      paymentId: attempt.payment_id!,
      entityId: invoices.get(attempt.invoice_id)!.entity_id,
      customer: await getCustomer(ctx, attempt.customer_id),
      currency: attempt.currency,
      amount: rest,
      // The payment's rate of its date: the advance's rupee values (CGST Rules, rule 34).
      exchangeRate: payments[k]!.exchange_rate,
    });
  }
  // Paid, but nothing applied (the invoice was settled another way): its old error still goes.
  for (const invoice of invoices.values())
    if (!appliedTo.has(invoice.id) && invoice.last_payment_error && attempts.some((a) => a.invoice_id === invoice.id))
      await setLastPaymentError(ctx, invoice.id, null);
  for (const a of attempts) if (a.checkout_session_id) await completeCheckoutSession(ctx.tx, ctx.tenantId, a.checkout_session_id, ctx.now);
  const closedNow = new Map(closed.map((i) => [i.id, i]));
  const events: { type: EventType; object: Record<string, unknown> & { id?: unknown } }[] = [];
  saved.forEach((payment, k) => {
    const invoice = closedNow.get(attempts[k]!.invoice_id);
    if (invoice) {
      events.push({ type: 'invoice.paid', object: invoice });
      closedNow.delete(invoice.id);
    }
    events.push({ type: 'payment.recorded', object: payment });
  });
  return events;
}

async function recordFailures(
  ctx: Ctx,
  attempts: AttemptRow[],
  invoices: Map<string, InvoiceRow>,
  outcomes: Map<string, SucceededOutcome | FailedOutcome>,
): Promise<{ type: EventType; object: Record<string, unknown> & { id?: unknown } }[]> {
  // The last failure of each invoice still open is its error; one paid, voided or written off meanwhile keeps none.
  const errorOf = new Map<string, { code: string; message: string }>();
  for (const a of attempts) {
    const outcome = outcomes.get(a.id) as FailedOutcome;
    if (payable(invoices.get(a.invoice_id)!)) errorOf.set(a.invoice_id, { code: outcome.failureCode, message: outcome.failureMessage });
  }
  const rows = await setLastPaymentErrors(
    ctx,
    [...errorOf].map(([id, error]) => ({ id, error })),
  );
  return (await renderInvoices(ctx, rows)).map((invoice) => ({ type: 'invoice.payment_failed' as const, object: invoice }));
}

/** An attempt the charge job committed, and what the gateway call needs (read once for the batch); none for one found pending. */
type StartedAttempt = { attempt: AttemptRow; fresh: boolean; call?: { saved: SavedPaymentMethod; resolved: ResolvedGateway; customer: ChargeCustomer } };
type ChargeCustomer = GatewayCustomer;

/**
 * The job CHARGE_INVOICES_JOB, set-based in chunks of CHARGE_CHUNK invoices (a billing-run batch
 * is one chunk). Per chunk:
 *  1. one transaction locks the chunk's invoices, reads their pending attempts, the customers'
 *     default payment methods and the customers, and inserts a pending attempt (idempotency key
 *     derived from its id) for every invoice still open, charge_automatically and owing — one
 *     statement each for the whole chunk — and COMMITS them before any gateway call. An invoice
 *     with an attempt already pending (what a rerun after a crash finds) is resolved instead, by
 *     lookup first. No default method (or no gateway for the currency or the method): the invoice
 *     gets last_payment_error and invoice.payment_failed, once.
 *  2. one read of the invoices as they are now; then the gateway is asked for each attempt, a few
 *     at a time, outside any transaction (an invoice paid another way meanwhile is not charged).
 *  3. one transaction records the outcomes (recordChargeOutcomes).
 * If step 3 fails, the attempts stay pending and the sweep resolves them by lookup, never by a
 * second charge: a crash never charges a card twice.
 */
export async function chargeInvoices(env: CollectionsEnv, tenantId: string, invoiceIds: string[], now: Date): Promise<void> {
  const ids = [...new Set(invoiceIds)];
  for (let i = 0; i < ids.length; i += CHARGE_CHUNK) {
    const chunk = ids.slice(i, i + CHARGE_CHUNK);
    const started = await env.db.transaction().execute((tx) => startAutomaticAttempts({ tx, tenantId, now }, env, chunk));
    if (started.length === 0) continue;
    const read: Ctx = { tx: env.db, tenantId, now };
    const current = new Map(
      (
        await getInvoiceRows(
          read,
          started.filter((s) => s.call).map((s) => s.attempt.invoice_id),
        )
      ).map((r) => [r.id, r]),
    );
    const outcomes = new Array<ChargeOutcome | null>(started.length).fill(null);
    let next = 0;
    const lane = async () => {
      for (let k = next++; k < started.length; k = next++) {
        const { attempt, fresh, call } = started[k]!;
        outcomes[k] = call
          ? await askGateway(env, attempt, call.saved, call.resolved, now, true, undefined, {
              invoice: current.get(attempt.invoice_id),
              customer: call.customer,
            })
          : await outcomeOf(env, tenantId, attempt.id, now, fresh);
      }
    };
    await Promise.all(Array.from({ length: Math.min(CHARGE_PARALLELISM, started.length) }, lane));
    const recorded = started.flatMap((s, k) => (outcomes[k] ? [{ attemptId: s.attempt.id, outcome: outcomes[k] }] : []));
    if (recorded.length === 0) continue;
    await env.db.transaction().execute((tx) => recordChargeOutcomes({ tx, tenantId, now }, recorded));
  }
}

/** Invoices per charge transaction pair (a billing-run batch), and gateway calls in flight at once, of the charge job. */
export const CHARGE_CHUNK = 200;
export const CHARGE_PARALLELISM = 8;

async function startAutomaticAttempts(ctx: Ctx, env: CollectionsEnv, invoiceIds: string[]): Promise<StartedAttempt[]> {
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
  const out: StartedAttempt[] = [];
  const fresh: InvoiceRow[] = [];
  for (const invoice of invoices) {
    const attempt = pending.get(invoice.id);
    if (attempt) out.push({ attempt, fresh: false });
    else fresh.push(invoice);
  }
  if (fresh.length === 0) return out;
  const customerIds = [...new Set(fresh.map((i) => i.customer_id))];
  const methodOf = new Map((await defaultPaymentMethodsOf(ctx.tx, ctx.tenantId, customerIds)).map((m) => [m.customer_id, m]));
  const customerOf = new Map((await findCustomers(ctx.tx, ctx.tenantId, customerIds)).map((c) => [c.id, c]));
  // Routing, as startAttempt does it, resolved once per currency and per payment method's gateway.
  const routes = new Map<string, Promise<ResolvedGateway>>();
  const homes = new Map<string, Promise<ResolvedGateway>>();
  const cannot: { invoice: InvoiceRow; error: { code: string; message: string } }[] = [];
  const rows: AttemptRow[] = [];
  for (const invoice of fresh) {
    const pm = methodOf.get(invoice.customer_id);
    if (!pm) {
      cannot.push({ invoice, error: { code: 'no_payment_method', message: 'the customer has no default payment method' } });
      continue;
    }
    const saved = savedPaymentMethod(pm);
    if (saved.requiresPreDebitNotice) {
      // A mandate: its notice e-mail and waiting period, one invoice at a time (startAttempt).
      out.push({ attempt: await startAttempt(ctx, env, invoice.id), fresh: true });
      continue;
    }
    let resolved: ResolvedGateway;
    try {
      if (!routes.has(invoice.currency)) routes.set(invoice.currency, gatewayForCurrency(ctx, env, invoice.currency));
      const route = await routes.get(invoice.currency)!;
      if (pm.gateway === route.provider && pm.connection_id === route.connectionId) resolved = route;
      else {
        const home = `${pm.gateway}:${pm.connection_id ?? ''}`;
        if (!homes.has(home)) homes.set(home, gatewayOfPaymentMethod(ctx, env, pm));
        resolved = await homes.get(home)!;
      }
    } catch (error) {
      if (!(error instanceof KoshError)) throw error;
      cannot.push({ invoice, error: { code: error.reason ?? error.kind, message: error.message } });
      continue;
    }
    const attempt = attemptRow(ctx, invoice, saved.requiresPreDebitNotice, resolved, pm.id, null);
    rows.push(attempt);
    const customer = customerOf.get(invoice.customer_id)!;
    out.push({
      attempt,
      fresh: true,
      call: { saved, resolved, customer: { id: customer.id, email: customer.email, name: customer.name, phone: customer.phone } },
    });
  }
  await insertAttempts(ctx.tx, rows);
  // Announced once: an invoice already marked with the same error is not failed again on every rerun.
  const failing = cannot.filter(({ invoice, error }) => invoice.last_payment_error?.code !== error.code);
  const marked = await setLastPaymentErrors(
    ctx,
    failing.map(({ invoice, error }) => ({ id: invoice.id, error })),
  );
  await emitEvents(
    ctx,
    (await renderInvoices(ctx, marked)).map((invoice) => ({ type: 'invoice.payment_failed' as const, object: invoice })),
  );
  return out;
}

/** The sweep RESOLVE_ATTEMPTS_JOB: every pending attempt nobody holds (see RESOLVE_AFTER_MS) is looked up, then charged if the gateway never saw it. */
export async function resolvePendingAttempts(env: CollectionsEnv, now: Date, limit = 500): Promise<number> {
  const due = await duePendingAttempts(env.db, env.config.mode, new Date(now.getTime() - RESOLVE_AFTER_MS), limit);
  for (const a of due) await executeAttempt(env, a.tenant_id, a.id, now, false);
  return due.length;
}
