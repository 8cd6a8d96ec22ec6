import type { Ctx } from '../../platform/context.js';
import { createCreditNote, creditableByLine, creditableOnInvoice, type CreditNoteRow } from '../../modules/credit-notes/index.js';
import { getInvoiceRow, linesOfInvoices, type InvoiceRow } from '../../modules/invoices/index.js';
import { mulDivRoundHalfUp } from '../../platform/money.js';
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
 * unused = the invoice's in-advance lines (the fees, seats and add-ons of the current period: a
 * line whose period is the invoice's; on a parent's consolidated invoice, this subscription's)
 * × remaining days ÷ days the invoice paid for, rounded half-up — where the invoice is the one
 * that paid for the current period (`latest_invoice_id`, whose period ends where the current
 * period ends). Usage lines bill the ended period in arrears (decision 0190), one-off charges and
 * a commitment's true-up are no time: none of them is credited. It is issued as a credit note
 * tied to that invoice on those lines only, each taking its share of the unused value (by its
 * total; the last the rounding rest), so GST is reversed at each line's own rate; a note tied to
 * an invoice settles what that invoice still owes first, and the rest is customer credit.
 *
 * Earlier credit notes on the invoice may have left less to credit than the unused value: the
 * credit is then what remains creditable on those lines (`capped`), never a refusal. An invoice
 * credited earlier without line detail is credited pro rata as a whole (no line can be named).
 * No such invoice (a trial, a gift, an imported period) or nothing left → no credit.
 *
 * The note is addressed to whoever the invoice was: for a child billed to its parent (decision
 * 0550) that is the parent, whose invoice paid for the period — the credit, its tax reversal and
 * its ledger lines are the parent's, as the invoice and its receivable are (decision 0810).
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
  const advance = await inAdvanceLines(ctx, invoice, row.id);
  const unusedValue = prorateByDays(
    advance.reduce((sum, l) => sum + l.total, 0),
    remaining,
    total,
  );
  const creditable = await creditableOnInvoice(ctx, invoice);
  const left = await creditableByLine(ctx, invoice);
  if (!left) {
    const amount = Math.min(unusedValue, creditable);
    if (amount === 0) return none(remaining, total, unusedValue);
    const note = await createCreditNote(ctx, { customer_id: invoice.customer_id, invoice_id: invoice.id, amount, reason });
    return { note, amount, unusedValue, capped: amount < unusedValue, remainingDays: remaining, periodDays: total };
  }
  const lines = sharesOfUnused(advance, unusedValue, left, creditable);
  const amount = lines.reduce((sum, l) => sum + l.amount, 0);
  if (amount === 0) return none(remaining, total, unusedValue);
  const note = await createCreditNote(ctx, { customer_id: invoice.customer_id, invoice_id: invoice.id, lines, reason });
  return { note, amount, unusedValue, capped: amount < unusedValue, remainingDays: remaining, periodDays: total };
}

/** The invoice's lines paid in advance for its own period (of this subscription, on a consolidated invoice). */
async function inAdvanceLines(ctx: Ctx, invoice: InvoiceRow, subscriptionId: string) {
  const start = invoice.period_start!.getTime();
  const end = invoice.period_end!.getTime();
  return (await linesOfInvoices(ctx.tx, ctx.tenantId, [invoice.id])).filter(
    (l) =>
      l.period_start !== null &&
      l.period_end !== null &&
      l.period_start.getTime() >= start &&
      l.period_end.getTime() <= end &&
      l.period_end.getTime() > start &&
      (l.subscription_id === null || l.subscription_id === subscriptionId),
  );
}

/**
 * The unused value spread over the in-advance lines by their totals (half-up; the last line takes
 * the rounding rest), each capped by what it has left to credit, and all by what the invoice has.
 */
function sharesOfUnused(lines: { id: string; total: number }[], unused: number, left: Map<string, number>, creditable: number) {
  const whole = lines.reduce((sum, l) => sum + l.total, 0);
  let given = 0;
  let room = creditable;
  const out: { invoice_line_id: string; amount: number }[] = [];
  for (const [i, line] of lines.entries()) {
    const share = i === lines.length - 1 ? unused - given : whole === 0 ? 0 : mulDivRoundHalfUp(unused, line.total, whole);
    given += share;
    const amount = Math.max(0, Math.min(share, left.get(line.id) ?? 0, room));
    room -= amount;
    if (amount > 0) out.push({ invoice_line_id: line.id, amount });
  }
  return out;
}
