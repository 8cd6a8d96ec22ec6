import type { Ctx } from '../../platform/context.js';
import { errors } from '../../platform/errors.js';
import { emitEvent, type EventPayload } from '../../platform/events/events.js';
import { newId } from '../../platform/ids.js';
import { enqueueJob } from '../../platform/jobs/jobs.js';
import { createCreditNote, markRefundNoteUnpaid, setCreditNoteRefundStatus } from '../../modules/credit-notes/index.js';
import { getEntity } from '../../modules/entities/index.js';
import { getInvoiceRow } from '../../modules/invoices/index.js';
import { Account, postEntry, type PostingLine } from '../../modules/ledger/index.js';
import { addRefunded, findPayment, findPaymentForUpdate } from '../../modules/payments/index.js';
import {
  callContext,
  findAttempt,
  findConnection,
  findRefund,
  finishRefund,
  refundOfCreditNote,
  gatewayOf,
  insertRefund,
  openCredentials,
  toRefund,
  type CollectionsEnv,
  type CreateRefundBody,
  type Refund,
  type RefundOutcome,
  type RefundRow,
  type ResolvedGateway,
} from '../../modules/collections/index.js';

export const EXECUTE_REFUND_JOB = 'collections.execute_refund';

async function book(ctx: Ctx, refund: RefundRow, kind: string, description: string, lines: PostingLine[]): Promise<void> {
  const invoice = await getInvoiceRow(ctx, refund.invoice_id);
  const entity = await getEntity(ctx, invoice.entity_id);
  await postEntry(ctx, {
    ledgerId: entity.tb_ledger_id,
    entityId: entity.id,
    kind,
    referenceType: 'refund',
    referenceId: refund.id,
    currency: refund.currency,
    description,
    lines,
  });
}

/**
 * POST /v1/payments/{id}/refunds: a credit note of type `refund` against the payment's invoice
 * (tax reversed pro rata; its credit is spent on the refund at once), then the refund entry:
 * gateway payments Dr customer credit, Cr gateway clearing (refund_status pending; the gateway is
 * called by a job after commit); offline payments Dr customer credit, Cr refunds payable
 * (refund_status manual_required: someone pays it out by hand). Above what was paid and not yet
 * refunded → 400. Under credit-note approval governance the note is created pending_approval and
 * the refund waits with it (the amount is reserved on the payment): nothing is booked and the
 * gateway is not asked until the note is approved (releaseRefund); a rejection fails the refund.
 */
export async function createRefund(ctx: Ctx, paymentId: string, input: CreateRefundBody): Promise<Refund> {
  const payment = await findPaymentForUpdate(ctx.tx, ctx.tenantId, paymentId);
  if (!payment) throw errors.notFound('payment');
  if (!payment.invoice_id) throw errors.invalidField('payment', 'only payments applied to an invoice can be refunded');
  const refundable = payment.amount - payment.amount_refunded;
  const amount = input.amount ?? refundable;
  if (amount <= 0 || amount > refundable) {
    throw errors.invalidField('amount', `exceeds what remains refundable on the payment (${refundable} of ${payment.amount})`);
  }
  const viaGateway = payment.gateway !== null;
  const note = await createCreditNote(
    ctx,
    { customer_id: payment.customer_id, invoice_id: payment.invoice_id, amount, reason: input.reason, currency: payment.currency },
    { type: 'refund', refundStatus: viaGateway ? 'pending' : 'manual_required' },
  );
  await addRefunded(ctx.tx, ctx.tenantId, payment.id, amount, ctx.now);
  const attemptConnection = viaGateway && payment.attempt_id ? await findAttempt(ctx.tx, ctx.tenantId, payment.attempt_id) : undefined;
  const refund: RefundRow = {
    tenant_id: ctx.tenantId,
    id: newId(),
    payment_id: payment.id,
    invoice_id: payment.invoice_id,
    credit_note_id: note.id,
    amount,
    currency: payment.currency,
    status: 'pending',
    reason: input.reason,
    gateway: payment.gateway,
    connection_id: attemptConnection?.connection_id ?? null,
    gateway_refund_id: null,
    failure_code: null,
    failure_message: null,
    created_at: ctx.now,
    updated_at: ctx.now,
  };
  await insertRefund(ctx.tx, refund);
  if (note.status !== 'pending_approval') await release(ctx, refund, payment.customer_id, payment.reference_number || payment.id);
  const view = toRefund(refund);
  await emitEvent(ctx, 'refund.created', view);
  return view;
}

/** The refund entry (its note's credit paid out: Dr customer credit, Cr clearing or refunds payable) and, through a gateway, the job that asks it. */
async function release(ctx: Ctx, refund: RefundRow, customerId: string, paymentReference: string): Promise<void> {
  const viaGateway = refund.gateway !== null;
  await book(ctx, refund, 'refund.created', `Refund of payment ${paymentReference}`, [
    { account: Account.CUSTOMER_CREDIT, debit: refund.amount, creditNoteId: refund.credit_note_id, customerId },
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
  const note = event.data.object as { id?: unknown; type?: unknown; customer_id?: unknown };
  if (note.type !== 'refund' || typeof note.id !== 'string') return;
  const refund = await refundOfCreditNote(ctx.tx, ctx.tenantId, note.id);
  // Released already (booked and handed to the gateway) or finished: not this decision's.
  if (!refund || refund.status !== 'pending' || refund.gateway_refund_id !== null) return;
  if (event.type === 'credit_note.approved') {
    const payment = await findPayment(ctx.tx, ctx.tenantId, refund.payment_id);
    await release(ctx, refund, String(note.customer_id), payment?.reference_number || refund.payment_id);
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
  await addRefunded(ctx.tx, ctx.tenantId, row.payment_id, -row.amount, ctx.now);
  await markRefundNoteUnpaid(ctx, row.credit_note_id);
  await emitEvent(ctx, 'refund.failed', toRefund(row));
}

/**
 * Applies the gateway's answer to a pending refund (the job's commit, or an inbound webhook's).
 * Succeeded: refund_status processed, refund.succeeded. Failed: the refund entry is reversed (Dr
 * gateway clearing, Cr customer credit), the note's credit becomes spendable again, the payment
 * refundable again, refund_status refund_failed, refund.failed. Pending: nothing yet.
 */
export async function recordRefundOutcome(ctx: Ctx, refundId: string, outcome: RefundOutcome): Promise<RefundRow | undefined> {
  if (outcome.status === 'pending') {
    return finishRefund(ctx.tx, ctx.tenantId, refundId, { gateway_refund_id: outcome.gatewayRefundId, updated_at: ctx.now });
  }
  if (outcome.status === 'unknown') return findRefund(ctx.tx, ctx.tenantId, refundId);
  if (outcome.status === 'succeeded') {
    const row = await finishRefund(ctx.tx, ctx.tenantId, refundId, { status: 'succeeded', gateway_refund_id: outcome.gatewayRefundId, updated_at: ctx.now });
    if (!row) return findRefund(ctx.tx, ctx.tenantId, refundId);
    await setCreditNoteRefundStatus(ctx, row.credit_note_id, 'processed');
    await emitEvent(ctx, 'refund.succeeded', toRefund(row));
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
  await setCreditNoteRefundStatus(ctx, row.credit_note_id, 'refund_failed');
  await addRefunded(ctx.tx, ctx.tenantId, row.payment_id, -row.amount, ctx.now);
  const customerId = (await getInvoiceRow(ctx, row.invoice_id)).customer_id;
  await book(ctx, row, 'refund.failed', `Failed refund ${row.gateway_refund_id ?? row.id}: the credit stays with the customer`, [
    { account: Account.GATEWAY_CLEARING, debit: row.amount, customerId },
    { account: Account.CUSTOMER_CREDIT, credit: row.amount, creditNoteId: row.credit_note_id, customerId },
  ]);
  await emitEvent(ctx, 'refund.failed', toRefund(row));
  return row;
}

/** The job: calls the gateway's refund with key `kosh_ref_<id>` outside any transaction, then commits the answer. An unknown answer retries the job (same key). */
export async function executeRefund(env: CollectionsEnv, tenantId: string, refundId: string, now: Date): Promise<void> {
  const refund = await findRefund(env.db, tenantId, refundId);
  if (!refund || refund.status !== 'pending' || !refund.gateway) return;
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
