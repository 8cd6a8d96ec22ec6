import type { Kysely } from 'kysely';
import type { Ctx } from '../../platform/context.js';
import type { DB } from '../../platform/db/schema.js';
import { getCreditNote } from '../../modules/credit-notes/index.js';
import { getInvoiceRow, renderInvoice, type InvoiceRow } from '../../modules/invoices/index.js';
import {
  canTransition,
  endSubscriptionNow,
  lockForTransition,
  scheduleCancellation,
  toSubscription,
  type CancelProration,
  type CancelSubscriptionBody,
  type SubscriptionRow,
} from '../../modules/subscriptions/index.js';
import { creditUnusedSubscriptionTime } from './credit-unused-subscription-time.js';
import { invoiceUsageToDate } from './final-usage-invoice.js';
import { previewInRollback } from './preview.js';

export type CancellationOutcome = { row: SubscriptionRow; proration?: CancelProration; finalInvoice: InvoiceRow | null };

/**
 * POST /v1/subscriptions/{id}/cancel. At period end (the default): only flags it; the billing run
 * ends it at current_period_end with a final invoice for that period's usage, if any
 * (reactivate undoes the flag until then). Immediately: canceled now, and with `prorate` the
 * unused part of the paid current period is credited (see creditUnusedSubscriptionTime) — in the
 * same transaction — and the answer says what the unused time was worth and what was credited.
 * Either way the usage of the current period so far is invoiced now (invoiceUsageToDate, after
 * the credit, which it may spend; decision 0190) and the subscription's latest_invoice_id names it.
 * `reason` and `feedback` are recorded on the subscription, so its events carry them (decision 0381).
 */
export async function cancelSubscription(ctx: Ctx, id: string, input: Omit<CancelSubscriptionBody, 'preview'>): Promise<CancellationOutcome> {
  const details = { reason: input.reason, feedback: input.feedback };
  if (input.at_period_end) return { row: await scheduleCancellation(ctx, id, details), finalInvoice: null };
  const row = await lockForTransition(ctx, id, 'cancel', (r) => canTransition(r.status, 'cancel'));
  if (!input.prorate) {
    const finalInvoice = await invoiceUsageToDate(ctx, row);
    return { row: await endSubscriptionNow(ctx, id, finalInvoice?.id ?? null, details), finalInvoice };
  }
  const credit = await creditUnusedSubscriptionTime(ctx, row, 'Unused subscription time after cancellation');
  const finalInvoice = await invoiceUsageToDate(ctx, row);
  return {
    row: await endSubscriptionNow(ctx, id, finalInvoice?.id ?? null, details),
    finalInvoice,
    proration: {
      remaining_days: credit.remainingDays,
      period_days: credit.periodDays,
      unused_value: credit.unusedValue,
      unused_credit: credit.amount,
      credit_capped: credit.capped,
      credit_note_id: credit.note?.id ?? null,
    },
  };
}

/**
 * `preview: true`: the very same cancellation (cancelSubscription: same credit, same final usage
 * invoice, same tax) in a transaction that is then rolled back — nothing is written, no number is
 * taken, no event is sent. The answer adds what it would have produced: the credit note as issued
 * (after the final invoice spent what it could), the final usage invoice, and what would be left
 * on the note: the customer's credit, which Kosh never pays out by itself but a refund can.
 */
export async function previewSubscriptionCancellation(db: Kysely<DB>, tenantId: string, now: Date, id: string, input: Omit<CancelSubscriptionBody, 'preview'>) {
  return previewInRollback(db, tenantId, now, async (ctx) => {
    const { row, proration, finalInvoice } = await cancelSubscription(ctx, id, input);
    const creditNote = proration?.credit_note_id ? await getCreditNote(ctx, proration.credit_note_id) : null;
    return {
      ...toSubscription(row),
      ...(proration ? { proration } : {}),
      preview: {
        credit_note: creditNote,
        final_invoice: finalInvoice ? await renderInvoice(ctx, await getInvoiceRow(ctx, finalInvoice.id)) : null,
        refundable_amount: creditNote?.balance ?? 0,
      },
    };
  });
}
