import type { Ctx } from '../../platform/context.js';
import { errors } from '../../platform/errors.js';
import { getCreditNote, payOutCreditBalance, type CreditNote } from '../../modules/credit-notes/index.js';
import { getInvoiceRow } from '../../modules/invoices/index.js';
import { findPaymentForUpdate, listPayments, type PaymentRow } from '../../modules/payments/index.js';
import type { CreateCreditNoteRefundBody, Refund } from '../../modules/collections/index.js';
import { startRefund } from './refund-payment.js';

/**
 * POST /v1/credit-notes/{id}/refunds (DESIGN §20): pays out part or all of a note's unspent
 * balance as money, without a new credit note — the note reversed its tax when it was issued, so
 * nothing is reversed again; only the customer's credit becomes cash. The balance falls at once
 * (409 above it, or when the note is not issued or has expired). The money goes back through
 * `payment_id`, else through a payment of the note's invoice that has enough left to refund (card
 * and UPI first, then the newest), else it is an offline refund naming no payment (refunds payable,
 * paid by hand). Booked like any refund: Dr customer credit (the note); Cr gateway clearing or
 * refunds payable (docs/ledger.md, docs/decisions/0250).
 */
export async function createCreditNoteRefund(ctx: Ctx, noteId: string, input: CreateCreditNoteRefundBody): Promise<Refund> {
  const note = await getCreditNote(ctx, noteId);
  const payment = input.payment_id ? await namedPayment(ctx, note, input.payment_id, input.amount) : await paymentOfNote(ctx, note, input.amount);
  await payOutCreditBalance(ctx, note.id, input.amount);
  return startRefund(ctx, {
    payment,
    invoiceId: note.invoice_id ?? payment?.invoice_id ?? null,
    customerId: note.customer_id,
    currency: note.currency,
    amount: input.amount,
    reason: input.reason,
    sources: [{ credit_note_id: note.id, amount: input.amount }],
  });
}

/** The payment the caller named: the note's customer's, in its currency, applied to an invoice of the note's entity, with enough left to refund. */
async function namedPayment(ctx: Ctx, note: CreditNote, paymentId: string, amount: number): Promise<PaymentRow> {
  const payment = await findPaymentForUpdate(ctx.tx, ctx.tenantId, paymentId);
  if (!payment || payment.customer_id !== note.customer_id) throw errors.invalidField('payment_id', "not a payment of the credit note's customer");
  if (payment.currency !== note.currency) throw errors.invalidField('payment_id', `the payment is in ${payment.currency}, the credit note in ${note.currency}`);
  if (!payment.invoice_id) throw errors.invalidField('payment_id', 'only payments applied to an invoice can be refunded');
  if ((await getInvoiceRow(ctx, payment.invoice_id)).entity_id !== note.entity_id) {
    throw errors.invalidField('payment_id', 'the payment was made to another legal entity than the one that issued the credit note');
  }
  const refundable = payment.amount - payment.amount_refunded;
  if (amount > refundable) throw errors.invalidField('amount', `exceeds what remains refundable on the payment (${refundable} of ${payment.amount})`);
  return payment;
}

/** A payment of the note's invoice with `amount` left to refund (gateway payments first, newest first); none → an offline refund. */
async function paymentOfNote(ctx: Ctx, note: CreditNote, amount: number): Promise<PaymentRow | undefined> {
  if (!note.invoice_id) return undefined;
  const { payments } = await listPayments(ctx, { invoice_id: note.invoice_id }, { limit: 1000, page: 1, offset: 0 });
  const candidate = payments
    .filter((p) => p.currency === note.currency && p.amount - p.amount_refunded >= amount)
    .sort((a, b) => Number(b.gateway !== null) - Number(a.gateway !== null))[0];
  if (!candidate) return undefined;
  const payment = await findPaymentForUpdate(ctx.tx, ctx.tenantId, candidate.id);
  // Re-checked under the lock: a concurrent refund may have taken it meanwhile.
  return payment && payment.amount - payment.amount_refunded >= amount ? payment : undefined;
}
