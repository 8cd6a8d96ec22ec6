import type { Ctx } from '../../platform/context.js';
import { errors } from '../../platform/errors.js';
import { emitEvent } from '../../platform/events/events.js';
import { newId } from '../../platform/ids.js';
import { enqueueJob } from '../../platform/jobs/jobs.js';
import { getAdvance, refundAdvance, type Advance, type RefundAdvanceBody } from '../../modules/advances/index.js';
import { addRefunded, findPaymentForUpdate } from '../../modules/payments/index.js';
import { findAttempt, insertRefund, toRefund, type RefundRow } from '../../modules/collections/index.js';
import { EXECUTE_REFUND_JOB } from './refund-payment.js';

/**
 * POST /v1/advances/{id}/refunds (docs/decisions/0280, 0401, 0740): a refund voucher (rule 51) for
 * (part of) the advance's balance, its GST reversed, and a refund row that pays its money out.
 * When the advance came from a gateway payment (an overpayment, a charge its invoice no longer
 * needed) that still has the amount left to refund, the money goes back through that gateway: the
 * refund names the gateway, Cr 1050 gateway clearing in the voucher's entry, and the job that asks
 * the gateway (key `kosh_ref_<id>`); its answer is applied as for every refund (a refusal leaves
 * the money owed by hand: refunds payable). Otherwise the money is paid by hand: Cr 2320 refunds
 * payable, and an offline refund (`gateway` null, `pending`) that `POST /v1/refunds/{id}/mark_paid`
 * settles (Dr 2320 / Cr 1000) once the bank transfer or cheque has gone (decision 0740).
 */
export async function refundCustomerAdvance(ctx: Ctx, id: string, input: RefundAdvanceBody): Promise<Advance> {
  const advance = await getAdvance(ctx, id);
  // A top-up's voucher (no payment of its own) is refused by refundAdvance (decision 0700).
  if (advance.payment_id === null) return refundAdvance(ctx, id, input, { refundId: newId(), gateway: false });
  const amount = input.amount ?? advance.balance;
  const payment = await findPaymentForUpdate(ctx.tx, ctx.tenantId, advance.payment_id);
  if (!payment) throw errors.notFound('payment');
  const refundable = amount > 0 && amount <= payment.amount - payment.amount_refunded;
  const viaGateway = payment.gateway !== null && refundable;
  const refundId = newId();
  // The voucher first: it checks the amount against the balance and takes it off.
  const refunded = await refundAdvance(ctx, id, input, { refundId, gateway: viaGateway });
  // The refund counts against its payment when the payment still has it (an advance from a gateway
  // payment's rest may be refunded by hand beyond what the payment has left to refund).
  if (refundable) await addRefunded(ctx.tx, ctx.tenantId, payment.id, amount, ctx.now);
  const attempt = viaGateway && payment.attempt_id ? await findAttempt(ctx.tx, ctx.tenantId, payment.attempt_id) : undefined;
  const row: RefundRow = {
    tenant_id: ctx.tenantId,
    id: refundId,
    payment_id: refundable ? payment.id : null,
    invoice_id: null,
    customer_id: advance.customer_id,
    credit_note_id: null,
    advance_id: advance.id,
    replaces_refund_id: null,
    issued_credit_note: false,
    amount,
    currency: advance.currency,
    status: 'pending',
    reason: input.reason,
    gateway: viaGateway ? payment.gateway : null,
    connection_id: attempt?.connection_id ?? null,
    gateway_refund_id: null,
    failure_code: null,
    failure_message: null,
    paid_at: null,
    reference: null,
    created_at: ctx.now,
    updated_at: ctx.now,
  };
  await insertRefund(ctx.tx, row);
  if (viaGateway) {
    await enqueueJob(ctx.tx, ctx.now, { kind: EXECUTE_REFUND_JOB, tenantId: ctx.tenantId, payload: { refund_id: refundId }, uniqueKey: `refund:${refundId}` });
  }
  await emitEvent(ctx, 'refund.created', toRefund(row, []));
  return refunded;
}
