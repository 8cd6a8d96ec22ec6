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
 * POST /v1/advances/{id}/refunds (docs/decisions/0280, 0401): a refund voucher (rule 51) for
 * (part of) the advance's balance, its GST reversed. When the advance came from a gateway payment
 * (an overpayment, a charge its invoice no longer needed) that still has the amount left to
 * refund, the money goes back through that gateway: a refund row naming the advance, Cr 1050
 * gateway clearing in the voucher's entry, and the job that asks the gateway (key
 * `kosh_ref_<id>`); its answer is applied as for every refund (a refusal leaves the money owed by
 * hand: refunds payable). Otherwise the voucher's money is paid by hand (Cr 2320 refunds payable).
 */
export async function refundCustomerAdvance(ctx: Ctx, id: string, input: RefundAdvanceBody): Promise<Advance> {
  const advance = await getAdvance(ctx, id);
  // A top-up's voucher (no payment of its own) is refused by refundAdvance (decision 0700).
  if (advance.payment_id === null) return refundAdvance(ctx, id, input);
  const amount = input.amount ?? advance.balance;
  const payment = await findPaymentForUpdate(ctx.tx, ctx.tenantId, advance.payment_id);
  if (!payment) throw errors.notFound('payment');
  const viaGateway = payment.gateway !== null && amount > 0 && amount <= payment.amount - payment.amount_refunded;
  if (!viaGateway) return refundAdvance(ctx, id, input);
  const refundId = newId();
  // The voucher first: it checks the amount against the balance and takes it off.
  const refunded = await refundAdvance(ctx, id, input, { refundId });
  await addRefunded(ctx.tx, ctx.tenantId, payment.id, amount, ctx.now);
  const attempt = payment.attempt_id ? await findAttempt(ctx.tx, ctx.tenantId, payment.attempt_id) : undefined;
  const row: RefundRow = {
    tenant_id: ctx.tenantId,
    id: refundId,
    payment_id: payment.id,
    invoice_id: null,
    customer_id: advance.customer_id,
    credit_note_id: null,
    advance_id: advance.id,
    issued_credit_note: false,
    amount,
    currency: advance.currency,
    status: 'pending',
    reason: input.reason,
    gateway: payment.gateway,
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
  await enqueueJob(ctx.tx, ctx.now, { kind: EXECUTE_REFUND_JOB, tenantId: ctx.tenantId, payload: { refund_id: refundId }, uniqueKey: `refund:${refundId}` });
  await emitEvent(ctx, 'refund.created', toRefund(row, []));
  return refunded;
}
