import type { Ctx } from '../../platform/context.js';
import { errors } from '../../platform/errors.js';
import { emitEvent } from '../../platform/events/events.js';
import { refundVoucherOfRefund } from '../../modules/advances/index.js';
import { getCreditNote, setCreditNoteRefundStatus } from '../../modules/credit-notes/index.js';
import { Account, creditedBy } from '../../modules/ledger/index.js';
import {
  findRefund,
  settleOfflineRefund,
  sourcesOfRefunds,
  toRefund,
  type MarkRefundFailedBody,
  type MarkRefundPaidBody,
  type Refund,
  type RefundRow,
} from '../../modules/collections/index.js';
import { book, returnCreditOfFailedRefund } from './refund-payment.js';

/**
 * The pending offline refund (no gateway carries it), read to check it may be settled by hand:
 * a refund whose own credit note still waits for approval (decision 0140) is not booked yet, so
 * nothing sits in refunds payable for it → 409 `refund_awaiting_approval`. The status and the
 * gateway are checked by the guarded move itself.
 */
async function settleable(ctx: Ctx, id: string): Promise<RefundRow> {
  const refund = await findRefund(ctx.tx, ctx.tenantId, id);
  if (!refund) throw errors.notFound('refund');
  if (refund.status === 'pending' && refund.gateway === null && refund.issued_credit_note) {
    const note = await getCreditNote(ctx, refund.credit_note_id!);
    if (note.status === 'pending_approval') {
      throw errors.conflict('the refund waits for its credit note to be approved: approve the note first', 'refund_awaiting_approval');
    }
  }
  return refund;
}

/**
 * What refunds payable (2320) holds for the refund, at the value it was booked: the `refund.created`
 * entry of a refund of notes' credit, the refund voucher's `advance.refunded` entry of an
 * advance's refund paid by hand, or the `refund.failed` entry of the gateway refund it replaces
 * (decision 0740).
 */
async function owedBy(ctx: Ctx, row: RefundRow) {
  if (row.replaces_refund_id) {
    // The money the gateway refused to carry: owed since that refund's `refund.failed`.
    return creditedBy(ctx, { kind: 'refund.failed', referenceType: 'refund', referenceId: row.replaces_refund_id, account: Account.REFUNDS_PAYABLE });
  }
  if (row.advance_id) {
    const voucher = await refundVoucherOfRefund(ctx, row.id);
    if (!voucher) return undefined;
    return creditedBy(ctx, { kind: 'advance.refunded', referenceType: 'advance_movement', referenceId: voucher.id, account: Account.REFUNDS_PAYABLE });
  }
  return creditedBy(ctx, { kind: 'refund.created', referenceType: 'refund', referenceId: row.id, account: Account.REFUNDS_PAYABLE });
}

/**
 * POST /v1/refunds/{id}/mark_paid (docs/decisions/0570): an offline refund — booked at creation
 * Dr 2300 customer credit / Cr 2320 refunds payable — was paid by hand. The refund becomes
 * `succeeded` with `paid_at` and `reference`; its own refund note `processed`; the payout is booked
 * `refund.paid` Dr 2320 refunds payable / Cr 1000 cash and bank (the creation entry is not posted
 * again); refund.succeeded. An advance's refund paid by hand (its refund voucher booked Cr 2320,
 * decision 0740) is paid out the same way. `paid_at` defaults to now; never in the future nor before the refund.
 */
export async function markRefundPaid(ctx: Ctx, id: string, input: MarkRefundPaidBody): Promise<Refund> {
  const refund = await settleable(ctx, id);
  const paidAt = input.paid_at ? new Date(input.paid_at) : ctx.now;
  if (paidAt.getTime() > ctx.now.getTime()) throw errors.invalidField('paid_at', 'is in the future');
  if (paidAt.getTime() < new Date(refund.created_at).getTime()) throw errors.invalidField('paid_at', 'is before the refund was created');
  const row = await settleOfflineRefund(ctx.tx, ctx.tenantId, id, 'mark_paid', { paid_at: paidAt, reference: input.reference, updated_at: ctx.now });
  if (row.issued_credit_note) await setCreditNoteRefundStatus(ctx, row.credit_note_id!, 'processed');
  // Refunds payable leaves at the value it was booked at; cash at the rate of today (a foreign
  // refund's difference is a realized exchange gain or loss, DESIGN §19).
  const owed = await owedBy(ctx, row);
  const customerId = row.customer_id;
  await book(ctx, row, 'refund.paid', `Refund paid by hand (${input.reference})`, [
    { account: Account.REFUNDS_PAYABLE, debit: row.amount, customerId, ...(owed?.functional != null ? { functional: owed.functional } : {}) },
    { account: Account.CASH, credit: row.amount, customerId },
  ]);
  const view = toRefund(row, await sourcesOfRefunds(ctx.tx, ctx.tenantId, [row.id]));
  await emitEvent(ctx, 'refund.succeeded', view);
  return view;
}

/**
 * POST /v1/refunds/{id}/mark_failed (docs/decisions/0570): an offline refund that will not be paid
 * (a cheque returned, the customer keeps the credit instead). As a refund a gateway refused: the
 * `refund.created` entry is reversed (Dr 2320 refunds payable / Cr 2300 customer credit per note),
 * the notes' credit is spendable again, the payment refundable again; refund.failed. An advance's
 * refund is not (409 `refund_voucher_issued`, decision 0740).
 */
export async function markRefundFailed(ctx: Ctx, id: string, input: MarkRefundFailedBody): Promise<Refund> {
  const refund = await settleable(ctx, id);
  if (refund.advance_id && refund.status === 'pending') {
    // The refund voucher (rule 51) reversed the advance's tax and stands: the money is owed to the
    // customer until paid (decision 0740); to keep it as an advance, a new receipt is needed.
    throw errors.conflict("an advance's refund carries a refund voucher that stands: the money stays owed until it is paid by hand", 'refund_voucher_issued');
  }
  const row = await settleOfflineRefund(ctx.tx, ctx.tenantId, id, 'mark_failed', {
    failure_code: 'marked_failed',
    failure_message: input.failure_message ?? 'the refund was not paid out',
    updated_at: ctx.now,
  });
  await returnCreditOfFailedRefund(ctx, row, Account.REFUNDS_PAYABLE, `Refund not paid out: the credit stays with the customer`);
  return toRefund(row, await sourcesOfRefunds(ctx.tx, ctx.tenantId, [row.id]));
}
