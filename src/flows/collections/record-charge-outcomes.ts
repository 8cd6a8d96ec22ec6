import type { Ctx } from '../../platform/context.js';
import { emitEvents, type EventType } from '../../platform/events/events.js';
import { newId } from '../../platform/ids.js';
import { getCustomer } from '../../modules/customers/index.js';
import { receiveAdvance } from '../../modules/advances/index.js';
import { getEntity, transactionRate, type TransactionRate } from '../../modules/entities/index.js';
import { convertMinorUnits } from '../../platform/money.js';
import {
  applyPaymentsToInvoices,
  getInvoiceRows,
  renderInvoices,
  setLastPaymentError,
  setLastPaymentErrors,
  type InvoiceRow,
} from '../../modules/invoices/index.js';
import { Account, postEntries, type Posting } from '../../modules/ledger/index.js';
import { savePayments } from '../../modules/payments/index.js';
import {
  completeCheckoutSession,
  findAttempts,
  findPaymentMethod,
  finishAttempt,
  finishAttempts,
  type AttemptFinish,
  type AttemptRow,
  type ChargeOutcome,
  type CollectionsEnv,
} from '../../modules/collections/index.js';
import { queuePostDebitNotice } from './pre-debit-notice.js';
import { payable } from './start-attempt.js';

/**
 * Step 3 of collecting an invoice: what the gateway said is committed, in one transaction — the
 * attempt's guarded move out of `pending`, and for a success the payment, its ledger entry and
 * the invoice, for a failure the invoice's last_payment_error and `invoice.payment_failed`.
 */

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
    if (succeeded.length > 0) await queuePostDebitNotices(ctx, succeeded, invoices);
    if (failed.length > 0) events.push(...(await recordFailures(ctx, failed, invoices, outcomes)));
  }
  await emitEvents(ctx, events);
  return items.map((i) => after.get(i.attemptId));
}

/**
 * The post-debit notice of each mandate debit that succeeded (RBI e-mandate framework; decision
 * 0520). Every mandate debit was announced with a skip link, so only attempts with one are read
 * further: a card payment costs no statement here.
 */
async function queuePostDebitNotices(ctx: Ctx, succeeded: AttemptRow[], invoices: Map<string, InvoiceRow>): Promise<void> {
  for (const attempt of succeeded) {
    if (!attempt.payment_method_id || !attempt.skip_token_hash) continue;
    const pm = await findPaymentMethod(ctx.tx, ctx.tenantId, attempt.payment_method_id);
    const invoice = invoices.get(attempt.invoice_id);
    if (!pm?.requires_pre_debit_notice || !invoice) continue;
    await queuePostDebitNotice(ctx, invoice, { amount: attempt.amount, currency: attempt.currency, at: ctx.now, mandateReference: pm.reference });
  }
}

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
