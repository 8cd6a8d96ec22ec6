import type { Ctx } from '../../platform/context.js';
import {
  canTransition,
  endSubscriptionNow,
  lockForTransition,
  scheduleCancellation,
  type CancelProration,
  type CancelSubscriptionBody,
  type SubscriptionRow,
} from '../../modules/subscriptions/index.js';
import { creditUnusedSubscriptionTime } from './credit-unused-subscription-time.js';
import { invoiceUsageToDate } from './final-usage-invoice.js';

/**
 * POST /v1/subscriptions/{id}/cancel. At period end (the default): only flags it; the billing run
 * ends it at current_period_end with a final invoice for that period's usage, if any
 * (reactivate undoes the flag until then). Immediately: canceled now, and with `prorate` the
 * unused part of the paid current period is credited (see creditUnusedSubscriptionTime) — in the
 * same transaction — and the answer says what the unused time was worth and what was credited.
 * Either way the usage of the current period so far is invoiced now (invoiceUsageToDate, after
 * the credit, which it may spend; decision 0190) and the subscription's latest_invoice_id names it.
 */
export async function cancelSubscription(ctx: Ctx, id: string, input: CancelSubscriptionBody): Promise<{ row: SubscriptionRow; proration?: CancelProration }> {
  if (input.at_period_end) return { row: await scheduleCancellation(ctx, id) };
  const row = await lockForTransition(ctx, id, 'cancel', (r) => canTransition(r.status, 'cancel'));
  if (!input.prorate) return { row: await endSubscriptionNow(ctx, id, (await invoiceUsageToDate(ctx, row))?.id ?? null) };
  const credit = await creditUnusedSubscriptionTime(ctx, row, 'Unused subscription time after cancellation');
  return {
    row: await endSubscriptionNow(ctx, id, (await invoiceUsageToDate(ctx, row))?.id ?? null),
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
