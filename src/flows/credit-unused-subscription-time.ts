import type { Ctx } from '../platform/context.js';
import { applyCreditNote, createCreditNote, type CreditNoteRow } from '../modules/credit-notes/index.js';
import { getInvoiceRow } from '../modules/invoices/index.js';
import { prorateByDays, remainingDays, type SubscriptionRow } from '../modules/subscriptions/index.js';

export type UnusedTimeCredit = { note: CreditNoteRow | null; amount: number; remainingDays: number; periodDays: number };

/**
 * The credit for the paid but unused part of a subscription's current period, to the day:
 * unused = invoice total × remaining days ÷ days the invoice paid for, rounded half-up — where the
 * invoice is the one that paid for the current period (`latest_invoice_id`, whose period ends
 * where the current period ends). It is issued as a credit note tied to that invoice, so GST is
 * reversed pro rata on the invoice that charged it. While that invoice is still open, the credit
 * is applied to it at once; otherwise it is customer credit, spent on the next invoice.
 *
 * No such invoice (a trial, a gift, an imported period) or nothing left → no credit.
 */
export async function creditUnusedSubscriptionTime(ctx: Ctx, row: SubscriptionRow, reason: string): Promise<UnusedTimeCredit> {
  const none = (remaining = 0, total = 0): UnusedTimeCredit => ({ note: null, amount: 0, remainingDays: remaining, periodDays: total });
  if (!row.latest_invoice_id) return none();
  const invoice = await getInvoiceRow(ctx, row.latest_invoice_id, true);
  if (invoice.status === 'draft' || invoice.status === 'void' || !invoice.period_start || !invoice.period_end) return none();
  if (invoice.period_end.getTime() !== row.current_period_end.getTime()) return none();
  const { remaining, total } = remainingDays({ start: invoice.period_start, end: invoice.period_end }, ctx.now);
  if (total === 0) return none(remaining, total);
  const amount = prorateByDays(invoice.total, remaining, total);
  if (amount === 0) return none(remaining, total);
  let note = await createCreditNote(ctx, { customer_id: row.customer_id, invoice_id: invoice.id, amount, reason });
  if (note.status === 'issued' && (invoice.status === 'open' || invoice.status === 'uncollectible') && invoice.amount_due > 0) {
    note = await applyCreditNote(ctx, note.id, invoice.id, Math.min(amount, invoice.amount_due));
  }
  return { note, amount, remainingDays: remaining, periodDays: total };
}
