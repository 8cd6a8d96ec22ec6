import type { Ctx } from '../../platform/context.js';
import { errors } from '../../platform/errors.js';
import { emitEvent, type EventPayload } from '../../platform/events/events.js';
import { newId } from '../../platform/ids.js';
import { enqueueJob } from '../../platform/jobs/jobs.js';
import {
  createCreditNote,
  creditableOnInvoice,
  getCreditNote,
  markRefundNoteUnpaid,
  payOutCreditBalance,
  restoreCreditBalance,
  settleOwnInvoiceWithReturnedCredit,
  setCreditNoteRefundStatus,
  unspentCreditOfInvoice,
} from '../../modules/credit-notes/index.js';
import { getEntity, transactionRate } from '../../modules/entities/index.js';
import { getAdvance } from '../../modules/advances/index.js';
import { getInvoiceRow } from '../../modules/invoices/index.js';
import { Account, postEntry, type AccountCode, type PostingLine } from '../../modules/ledger/index.js';
import { addRefunded, findPayment, findPaymentForUpdate, type PaymentRow } from '../../modules/payments/index.js';
import {
  callContext,
  findAttempt,
  findConnection,
  findRefund,
  finishRefund,
  refundOfCreditNote,
  gatewayOf,
  insertRefund,
  insertRefundSources,
  openCredentials,
  sourcesOfRefunds,
  toRefund,
  type CollectionsEnv,
  type CreateRefundBody,
  type Refund,
  type RefundOutcome,
  type RefundRow,
  type RefundSourceRow,
  type ResolvedGateway,
} from '../../modules/collections/index.js';

export const EXECUTE_REFUND_JOB = 'collections.execute_refund';

/** The refund's entry, in the ledger of the entity that issued its notes (or took its advance). */
export async function book(ctx: Ctx, refund: RefundRow, kind: string, description: string, lines: PostingLine[]): Promise<void> {
  const source = refund.credit_note_id ? await getCreditNote(ctx, refund.credit_note_id) : await getAdvance(ctx, refund.advance_id!);
  const entity = await getEntity(ctx, source.entity_id!);
  // Money paid out at the rate of its date; the notes' credit leaves at the rate it was booked at:
  // the difference is a realized exchange gain or loss (DESIGN §19).
  const rate = await transactionRate(ctx, entity, refund.currency, null, ctx.now, source.exchange_rate);
  await postEntry(ctx, {
    ledgerId: entity.tb_ledger_id,
    entityId: entity.id,
    kind,
    referenceType: 'refund',
    referenceId: refund.id,
    currency: refund.currency,
    description,
    rate: rate.rate,
    exchangeDifference: 'realized',
    lines,
  });
}

/** What a new refund pays out: which notes' balances (its own new note, or notes issued before). */
export type RefundStart = {
  payment: PaymentRow | undefined;
  invoiceId: string | null;
  customerId: string;
  currency: string;
  amount: number;
  reason: string;
  /** The note the refund issued (it may wait for approval), or undefined: `sources` were issued before. */
  issuedNote?: { id: string; status: string };
  sources: { credit_note_id: string; amount: number }[];
};

/**
 * Records a refund whose notes are already chosen and (when issued before) their balances taken:
 * the payment's refunded amount, the refund row and its sources, then — unless its own note waits
 * for approval — the entry and the gateway job. Emits refund.created.
 */
export async function startRefund(ctx: Ctx, start: RefundStart): Promise<Refund> {
  const { payment } = start;
  if (payment) await addRefunded(ctx.tx, ctx.tenantId, payment.id, start.amount, ctx.now);
  const viaGateway = payment?.gateway != null;
  const attemptConnection = viaGateway && payment?.attempt_id ? await findAttempt(ctx.tx, ctx.tenantId, payment.attempt_id) : undefined;
  const refund: RefundRow = {
    tenant_id: ctx.tenantId,
    id: newId(),
    payment_id: payment?.id ?? null,
    invoice_id: start.invoiceId,
    customer_id: start.customerId,
    credit_note_id: start.issuedNote?.id ?? start.sources[0]!.credit_note_id,
    advance_id: null,
    replaces_refund_id: null,
    issued_credit_note: start.issuedNote !== undefined,
    amount: start.amount,
    currency: start.currency,
    status: 'pending',
    reason: start.reason,
    gateway: viaGateway ? payment!.gateway : null,
    connection_id: attemptConnection?.connection_id ?? null,
    gateway_refund_id: null,
    failure_code: null,
    failure_message: null,
    paid_at: null,
    reference: null,
    created_at: ctx.now,
    updated_at: ctx.now,
  };
  const sources: RefundSourceRow[] = start.sources.map((s) => ({ tenant_id: ctx.tenantId, refund_id: refund.id, ...s }));
  await insertRefund(ctx.tx, refund);
  await insertRefundSources(ctx.tx, sources);
  if (start.issuedNote?.status !== 'pending_approval') await release(ctx, refund, sources, payment?.reference_number || payment?.id || null);
  const view = toRefund(refund, sources);
  await emitEvent(ctx, 'refund.created', view);
  return view;
}

/**
 * POST /v1/payments/{id}/refunds (DESIGN §20: a refund never reverses tax twice). Above what was
 * paid and not yet refunded → 400.
 * - `lines` named: a credit note of type `refund` on those lines of the payment's invoice (each at
 *   most what the line has left to credit, their sum the amount), paid out at once.
 * - No lines, and the invoice's notes still hold unspent credit (a line note issued before, a
 *   refund the gateway refused): that credit is paid out, oldest note first, and no new note is
 *   issued — its tax was reversed when it was issued. A refund above that credit → 409 (refund the
 *   credit first, or name lines): one refund never both pays out old credit and credits anew.
 * - Otherwise a refund note pro rata over what each line still has creditable (never over value
 *   already credited); an invoice with nothing left to credit → 409.
 * Gateway payments: Dr customer credit, Cr gateway clearing (the gateway is called by a job after
 * commit); offline payments: Dr customer credit, Cr refunds payable (refund_status
 * manual_required). Under credit-note approval governance a new note is created pending_approval
 * and the refund waits with it (the amount is reserved on the payment): nothing is booked and the
 * gateway is not asked until the note is approved; a rejection fails the refund.
 */
export async function createRefund(ctx: Ctx, paymentId: string, input: CreateRefundBody): Promise<Refund> {
  const payment = await findPaymentForUpdate(ctx.tx, ctx.tenantId, paymentId);
  if (!payment) throw errors.notFound('payment');
  if (!payment.invoice_id)
    throw errors.invalidField(
      'payment',
      'only payments applied to an invoice can be refunded; a payment without an invoice is an advance: POST /v1/advances/{id}/refunds',
    );
  const linesTotal = input.lines?.reduce((sum, l) => sum + l.amount, 0);
  if (linesTotal !== undefined && input.amount !== undefined && input.amount !== linesTotal) {
    throw errors.invalidField('amount', `must equal the sum of lines[].amount (${linesTotal})`);
  }
  const refundable = payment.amount - payment.amount_refunded;
  const amount = input.amount ?? linesTotal ?? refundable;
  if (amount <= 0 || amount > refundable) {
    throw errors.invalidField('amount', `exceeds what remains refundable on the payment (${refundable} of ${payment.amount})`);
  }
  const start = { payment, invoiceId: payment.invoice_id, customerId: payment.customer_id, currency: payment.currency, amount, reason: input.reason };
  if (!input.lines) {
    const held = await payOutInvoiceCredit(ctx, payment.invoice_id, amount);
    if (held) return startRefund(ctx, { ...start, sources: held });
  }
  const note = await createCreditNote(
    ctx,
    {
      customer_id: payment.customer_id,
      invoice_id: payment.invoice_id,
      ...(input.lines ? { lines: input.lines } : { amount }),
      reason: input.reason,
      currency: payment.currency,
    },
    { type: 'refund', refundStatus: payment.gateway !== null ? 'pending' : 'manual_required' },
  );
  return startRefund(ctx, { ...start, issuedNote: note, sources: [{ credit_note_id: note.id, amount }] });
}

/**
 * The invoice's unspent credit paid out for a refund of `amount` without lines, oldest note first;
 * undefined when the notes hold none (the refund then issues its own note). 409 when they hold
 * some but less than `amount`, or when the invoice has nothing left to credit either.
 */
async function payOutInvoiceCredit(ctx: Ctx, invoiceId: string, amount: number): Promise<{ credit_note_id: string; amount: number }[] | undefined> {
  const notes = await unspentCreditOfInvoice(ctx, invoiceId);
  const held = notes.reduce((sum, n) => sum + n.balance, 0);
  if (held === 0) {
    const creditable = await creditableOnInvoice(ctx, await getInvoiceRow(ctx, invoiceId));
    if (creditable === 0) {
      throw errors.conflict(
        'the invoice has nothing left to credit: refund the unspent balance of a credit note with POST /v1/credit-notes/{id}/refunds',
        'invoice_fully_credited',
      );
    }
    return undefined;
  }
  if (amount > held) {
    throw errors.conflict(
      `the invoice's credit notes hold ${held} of unspent credit: refund at most ${held} first (it pays that credit out and reverses no tax again), or name the lines to credit with lines[]`,
      'invoice_has_unspent_credit',
    );
  }
  const sources: { credit_note_id: string; amount: number }[] = [];
  let left = amount;
  for (const note of notes) {
    if (left === 0) break;
    const take = Math.min(note.balance, left);
    await payOutCreditBalance(ctx, note.id, take);
    sources.push({ credit_note_id: note.id, amount: take });
    left -= take;
  }
  return sources;
}

/** The refund entry (its notes' credit paid out: Dr customer credit per note, Cr clearing or refunds payable) and, through a gateway, the job that asks it. */
async function release(ctx: Ctx, refund: RefundRow, sources: RefundSourceRow[], paymentReference: string | null): Promise<void> {
  const viaGateway = refund.gateway !== null;
  const customerId = refund.customer_id;
  await book(ctx, refund, 'refund.created', paymentReference ? `Refund of payment ${paymentReference}` : 'Refund of credit', [
    ...sources.map((s) => ({ account: Account.CUSTOMER_CREDIT, debit: Number(s.amount), creditNoteId: s.credit_note_id, customerId })),
    { account: viaGateway ? Account.GATEWAY_CLEARING : Account.REFUNDS_PAYABLE, credit: refund.amount, customerId },
  ]);
  if (viaGateway)
    await enqueueJob(ctx.tx, ctx.now, {
      kind: EXECUTE_REFUND_JOB,
      tenantId: ctx.tenantId,
      payload: { refund_id: refund.id },
      uniqueKey: `refund:${refund.id}`,
    });
}

/**
 * Refund governance (docs/decisions/0140), in the transaction that decides the refund's note:
 * approved → the refund is released (booked, and the gateway asked by the job); rejected, or voided
 * while waiting (its invoice was voided) → the refund fails with `approval_rejected` /
 * `credit_note_voided`, the amount is refundable again and refund.failed is emitted. A note that
 * never waited (no governance) has no refund awaiting it, so nothing happens.
 */
export async function refundOnCreditNoteDecision(ctx: Ctx, event: EventPayload): Promise<void> {
  if (event.type !== 'credit_note.approved' && event.type !== 'credit_note.rejected' && event.type !== 'credit_note.voided') return;
  const note = event.data.object as { id?: unknown; type?: unknown };
  if (note.type !== 'refund' || typeof note.id !== 'string') return;
  const refund = await refundOfCreditNote(ctx.tx, ctx.tenantId, note.id);
  // Released already (booked and handed to the gateway) or finished: not this decision's.
  if (!refund || refund.status !== 'pending' || refund.gateway_refund_id !== null) return;
  if (event.type === 'credit_note.approved') {
    const payment = refund.payment_id ? await findPayment(ctx.tx, ctx.tenantId, refund.payment_id) : undefined;
    await release(ctx, refund, await sourcesOfRefunds(ctx.tx, ctx.tenantId, [refund.id]), payment?.reference_number || refund.payment_id);
    return;
  }
  const code = event.type === 'credit_note.rejected' ? 'approval_rejected' : 'credit_note_voided';
  const row = await finishRefund(ctx.tx, ctx.tenantId, refund.id, {
    status: 'failed',
    failure_code: code,
    failure_message: event.type === 'credit_note.rejected' ? 'the refund credit note was rejected' : 'the refund credit note was voided before approval',
    updated_at: ctx.now,
  });
  if (!row) return;
  if (row.payment_id) await addRefunded(ctx.tx, ctx.tenantId, row.payment_id, -row.amount, ctx.now);
  await markRefundNoteUnpaid(ctx, row.credit_note_id!);
  await emitEvent(ctx, 'refund.failed', toRefund(row, await sourcesOfRefunds(ctx.tx, ctx.tenantId, [row.id])));
}

/**
 * Applies the gateway's answer to a pending refund (the job's commit, or an inbound webhook's), or
 * a failure the gateway reports for a refund it had paid (decision 0860).
 * Succeeded: refund_status processed (a note the refund issued), refund.succeeded. Failed: the
 * refund entry is reversed (Dr gateway clearing, Cr customer credit per note), the notes' credit
 * becomes spendable again (a note the refund issued: refund_status refund_failed, its whole amount;
 * notes issued before: the amounts paid out of them), the payment refundable again, refund.failed.
 * Pending: nothing yet.
 */
export async function recordRefundOutcome(ctx: Ctx, refundId: string, outcome: RefundOutcome): Promise<RefundRow | undefined> {
  if (outcome.status === 'pending') {
    return finishRefund(ctx.tx, ctx.tenantId, refundId, { gateway_refund_id: outcome.gatewayRefundId, updated_at: ctx.now });
  }
  if (outcome.status === 'unknown') return findRefund(ctx.tx, ctx.tenantId, refundId);
  if (outcome.status === 'succeeded') {
    const row = await finishRefund(ctx.tx, ctx.tenantId, refundId, { status: 'succeeded', gateway_refund_id: outcome.gatewayRefundId, updated_at: ctx.now });
    if (!row) return findRefund(ctx.tx, ctx.tenantId, refundId);
    if (row.issued_credit_note) await setCreditNoteRefundStatus(ctx, row.credit_note_id!, 'processed');
    await emitEvent(ctx, 'refund.succeeded', toRefund(row, await sourcesOfRefunds(ctx.tx, ctx.tenantId, [row.id])));
    return row;
  }
  const failed = outcome as Extract<RefundOutcome, { status: 'failed' }>;
  const row = await finishRefund(ctx.tx, ctx.tenantId, refundId, {
    status: 'failed',
    gateway_refund_id: failed.gatewayRefundId,
    failure_code: failed.failureCode,
    failure_message: failed.failureMessage,
    updated_at: ctx.now,
  });
  if (!row) return findRefund(ctx.tx, ctx.tenantId, refundId);
  if (row.advance_id) return advanceRefundFailed(ctx, row);
  await returnCreditOfFailedRefund(ctx, row, Account.GATEWAY_CLEARING, `Failed refund ${row.gateway_refund_id ?? row.id}: the credit stays with the customer`);
  return row;
}

/**
 * A refund of notes' credit that will not be paid (the gateway refused it, or an offline refund
 * marked failed): the refund entry is reversed (Dr `from` — gateway clearing or refunds payable —
 * Cr customer credit per note), the notes' credit is spendable again (a note the refund issued:
 * refund_status refund_failed, its whole amount; notes issued before: the amounts paid out of
 * them), the payment refundable again; refund.failed.
 */
export async function returnCreditOfFailedRefund(ctx: Ctx, row: RefundRow, from: AccountCode, description: string): Promise<void> {
  const sources = await sourcesOfRefunds(ctx.tx, ctx.tenantId, [row.id]);
  if (row.issued_credit_note) await setCreditNoteRefundStatus(ctx, row.credit_note_id!, 'refund_failed');
  else for (const s of sources) await restoreCreditBalance(ctx, s.credit_note_id, Number(s.amount));
  if (row.payment_id) await addRefunded(ctx.tx, ctx.tenantId, row.payment_id, -row.amount, ctx.now);
  const customerId = row.customer_id;
  await book(ctx, row, 'refund.failed', description, [
    { account: from, debit: row.amount, customerId },
    ...sources.map((s) => ({ account: Account.CUSTOMER_CREDIT, credit: Number(s.amount), creditNoteId: s.credit_note_id, customerId })),
  ]);
  await emitEvent(ctx, 'refund.failed', toRefund(row, sources));
  // The credit is spendable again: a tied note's settles what its own invoice still owes first.
  const returned = row.issued_credit_note ? [row.credit_note_id!] : sources.map((s) => s.credit_note_id);
  for (const noteId of new Set(returned)) await settleOwnInvoiceWithReturnedCredit(ctx, noteId);
}

/**
 * The gateway refused to carry an advance's refund voucher back (docs/decisions/0401): the voucher
 * stands (no supply was made; its GST stays reversed), so the money is still owed to the customer
 * and is paid by hand: Dr 1050 gateway clearing / Cr 2320 refunds payable; refund.failed. An
 * offline refund replacing it (`replaces_refund_id`, pending, no gateway) carries the money owed,
 * paid out by `POST /v1/refunds/{id}/mark_paid` (decision 0740); it counts against the payment in
 * the failed refund's place.
 */
async function advanceRefundFailed(ctx: Ctx, row: RefundRow): Promise<RefundRow> {
  const customerId = row.customer_id;
  await book(ctx, row, 'refund.failed', `Failed refund ${row.gateway_refund_id ?? row.id} of an advance: owed to the customer, to be paid by hand`, [
    { account: Account.GATEWAY_CLEARING, debit: row.amount, customerId },
    { account: Account.REFUNDS_PAYABLE, credit: row.amount, customerId },
  ]);
  await emitEvent(ctx, 'refund.failed', toRefund(row, []));
  const byHand: RefundRow = {
    ...row,
    id: newId(),
    replaces_refund_id: row.id,
    status: 'pending',
    gateway: null,
    connection_id: null,
    gateway_refund_id: null,
    failure_code: null,
    failure_message: null,
    paid_at: null,
    reference: null,
    created_at: ctx.now,
    updated_at: ctx.now,
  };
  await insertRefund(ctx.tx, byHand);
  await emitEvent(ctx, 'refund.created', toRefund(byHand, []));
  return row;
}

/** The job: calls the gateway's refund with key `kosh_ref_<id>` outside any transaction, then commits the answer. An unknown answer retries the job (same key). */
export async function executeRefund(env: CollectionsEnv, tenantId: string, refundId: string, now: Date): Promise<void> {
  const refund = await findRefund(env.db, tenantId, refundId);
  if (!refund || refund.status !== 'pending' || !refund.gateway || !refund.payment_id) return;
  const payment = await findPayment(env.db, tenantId, refund.payment_id);
  if (!payment) throw new Error(`refund ${refund.id}: payment missing`);
  const gateway = gatewayOf(refund.gateway);
  if (!gateway) throw new Error(`refund ${refund.id}: the ${refund.gateway} gateway is not available`);
  let resolved: ResolvedGateway = { provider: refund.gateway, gateway, connectionId: null, credentials: {} };
  if (refund.connection_id) {
    const connection = await findConnection(env.db, tenantId, refund.connection_id);
    if (!connection) throw new Error(`refund ${refund.id}: its gateway connection was removed`);
    resolved = { ...resolved, connectionId: connection.id, credentials: openCredentials(env, connection) };
  }
  let outcome: RefundOutcome;
  try {
    outcome = await gateway.adapter.refund(callContext(env, resolved, now), {
      idempotencyKey: `kosh_ref_${refund.id}`,
      gatewayPaymentId: payment.gateway_payment_id ?? '',
      amount: refund.amount,
      currency: refund.currency,
      reason: refund.reason,
    });
  } catch (error) {
    outcome = { status: 'unknown', reason: (error as Error).message };
  }
  await env.db.transaction().execute((tx) => recordRefundOutcome({ tx, tenantId, now }, refund.id, outcome));
  if (outcome.status === 'unknown') throw new Error(`refund ${refund.id}: outcome unknown (${outcome.reason}); retrying with the same key`);
}
