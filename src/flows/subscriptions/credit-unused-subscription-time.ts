import type { Ctx } from '../../platform/context.js';
import { createCreditNote, creditableOnInvoice, type CreditNoteRow } from '../../modules/credit-notes/index.js';
import { getInvoiceRow, linesOfInvoices } from '../../modules/invoices/index.js';
import { prorateByDays, remainingDays, type SubscriptionRow } from '../../modules/subscriptions/index.js';

export type UnusedTimeCredit = {
  note: CreditNoteRow | null;
  /** What was credited: the smaller of the unused value and what the invoice had left to credit. */
  amount: number;
  /** What the unused time was worth. */
  unusedValue: number;
  /** True when earlier credit notes on the invoice left less to credit than the unused value. */
  capped: boolean;
  remainingDays: number;
  periodDays: number;
};

/**
 * The credit for the paid but unused part of a subscription's current period, to the day:
 * unused = invoice total (less its usage lines, billed in arrears) × remaining days ÷ days the
 * invoice paid for, rounded half-up — where the
 * invoice is the one that paid for the current period (`latest_invoice_id`, whose period ends
 * where the current period ends). It is issued as a credit note tied to that invoice, so GST is
 * reversed pro rata on the invoice that charged it; a note tied to an invoice settles what that
 * invoice still owes first, and the rest is customer credit, spent on the next invoice.
 *
 * Earlier credit notes on the invoice may have left less to credit than the unused value: the
 * credit is then what remains creditable (`capped`), never a refusal.
 * No such invoice (a trial, a gift, an imported period) or nothing left → no credit.
 */
export async function creditUnusedSubscriptionTime(ctx: Ctx, row: SubscriptionRow, reason: string): Promise<UnusedTimeCredit> {
  const none = (remaining = 0, total = 0, unusedValue = 0): UnusedTimeCredit => ({
    note: null,
    amount: 0,
    unusedValue,
    capped: unusedValue > 0,
    remainingDays: remaining,
    periodDays: total,
  });
  if (!row.latest_invoice_id) return none();
  const invoice = await getInvoiceRow(ctx, row.latest_invoice_id, true);
  if (invoice.status === 'draft' || invoice.status === 'void' || !invoice.period_start || !invoice.period_end) return none();
  if (invoice.period_end.getTime() !== row.current_period_end.getTime()) return none();
  const { remaining, total } = remainingDays({ start: invoice.period_start, end: invoice.period_end }, ctx.now);
  if (total === 0) return none(remaining, total);
  // A renewal's usage lines bill the ended period in arrears (decision 0190): not time paid in
  // advance, so only the rest of the invoice is prorated.
  const periodStart = invoice.period_start;
  const arrears = (await linesOfInvoices(ctx.tx, ctx.tenantId, [invoice.id]))
    .filter((l) => l.period_end !== null && l.period_end <= periodStart)
    .reduce((sum, l) => sum + l.total, 0);
  const unusedValue = prorateByDays(Math.max(0, invoice.total - arrears), remaining, total);
  const amount = Math.min(unusedValue, await creditableOnInvoice(ctx, invoice));
  if (amount === 0) return none(remaining, total, unusedValue);
  const note = await createCreditNote(ctx, { customer_id: row.customer_id, invoice_id: invoice.id, amount, reason });
  return { note, amount, unusedValue, capped: amount < unusedValue, remainingDays: remaining, periodDays: total };
}
