import type { Ctx } from '../platform/context.js';
import {
  canTransition,
  endSubscriptionNow,
  lockForTransition,
  scheduleCancellation,
  type CancelSubscriptionBody,
  type SubscriptionRow,
} from '../modules/subscriptions/index.js';
import { creditUnusedSubscriptionTime } from './credit-unused-subscription-time.js';

/**
 * POST /v1/subscriptions/{id}/cancel. At period end (the default): only flags it; the billing run
 * ends it at current_period_end without an invoice (reactivate undoes the flag until then).
 * Immediately: canceled now, and with `prorate` the unused part of the paid current period is
 * credited (see creditUnusedSubscriptionTime) — in the same transaction.
 */
export async function cancelSubscription(ctx: Ctx, id: string, input: CancelSubscriptionBody): Promise<SubscriptionRow> {
  if (input.at_period_end) return scheduleCancellation(ctx, id);
  const row = await lockForTransition(ctx, id, 'cancel', (r) => canTransition(r.status, 'cancel'));
  if (input.prorate) await creditUnusedSubscriptionTime(ctx, row, 'Unused subscription time after cancellation');
  return endSubscriptionNow(ctx, id);
}
