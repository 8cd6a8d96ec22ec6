import type { Ctx } from '../../platform/context.js';
import { emitEvent } from '../../platform/events/events.js';
import { getCustomer } from '../../modules/customers/index.js';
import {
  canTransition,
  lockForTransition,
  periodOf,
  resolveSubscriptionPrice,
  toSubscription,
  transitionSubscription,
  updateSubscription,
  type SubscriptionRow,
} from '../../modules/subscriptions/index.js';
import { itemChargesOfSubscription } from './subscription-item-charges.js';
import { invoiceSubscriptionPeriod } from './invoice-subscription-period.js';

/**
 * paused → active. While the paused period still runs, billing simply continues at its end. If it
 * ended during the pause, a new period starts now (the schedule is re-anchored here) and is
 * invoiced at once; the paused time is not billed.
 */
export async function resumeSubscription(ctx: Ctx, id: string): Promise<SubscriptionRow> {
  const current = await lockForTransition(ctx, id, 'resume', (r) => canTransition(r.status, 'resume'));
  let row: SubscriptionRow;
  if (current.current_period_end > ctx.now) {
    row = await transitionSubscription(ctx.tx, ctx.tenantId, id, 'resume', { paused_at: null, updated_at: ctx.now });
  } else {
    const { plan, price } = await resolveSubscriptionPrice(ctx, current);
    const customer = await getCustomer(ctx, current.customer_id);
    const period = periodOf({ billing_anchor: ctx.now, interval_unit: current.interval_unit, interval_count: current.interval_count }, 0);
    row = await transitionSubscription(ctx.tx, ctx.tenantId, id, 'resume', {
      paused_at: null,
      billing_anchor: ctx.now,
      period_index: 0,
      current_period_start: period.start,
      current_period_end: period.end,
      updated_at: ctx.now,
    });
    // A pure usage plan has no fee in advance (its usage is billed at the period's end), only its add-ons.
    const items = await itemChargesOfSubscription(ctx, row.id);
    if (price || items.length > 0) {
      const invoice = await invoiceSubscriptionPeriod(ctx, { subscription: row, plan, price, items, customer, period, billingReason: 'subscription_cycle' });
      row = await updateSubscription(ctx.tx, ctx.tenantId, id, { latest_invoice_id: invoice.id });
    }
  }
  await emitEvent(ctx, 'subscription.resumed', toSubscription(row));
  return row;
}
