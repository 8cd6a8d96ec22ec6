import type { Ctx } from '../platform/context.js';
import { emitEvent } from '../platform/events/events.js';
import { findCustomers, type Customer } from '../modules/customers/index.js';
import { findPlan, pricesOfPlans, type PlanRow, type PriceRow } from '../modules/plans/index.js';
import {
  advanceSubscriptionPeriods,
  periodAfter,
  toSubscription,
  transitionSubscription,
  type PeriodAdvance,
  type SubscriptionRow,
} from '../modules/subscriptions/index.js';
import { invoiceSubscriptionPeriod } from './invoice-subscription-period.js';

export type RenewalOutcome = {
  renewed: SubscriptionRow[];
  trialsEnded: SubscriptionRow[];
  ended: SubscriptionRow[];
};

/** Plans, prices and customers of a batch, read once per batch rather than once per renewal. */
async function loadBatchContext(ctx: Ctx, rows: SubscriptionRow[]) {
  const planIds = [...new Set(rows.map((r) => r.plan_id))];
  const plans = new Map<string, PlanRow>();
  for (const id of planIds) {
    const plan = await findPlan(ctx.tx, ctx.tenantId, id);
    if (plan) plans.set(id, plan);
  }
  const prices = new Map<string, PriceRow>();
  for (const p of await pricesOfPlans(ctx.tx, ctx.tenantId, planIds)) prices.set(`${p.plan_id}/${p.currency}`, p);
  const customers = new Map<string, Customer>();
  for (const c of await findCustomers(ctx.tx, ctx.tenantId, rows.map((r) => r.customer_id))) customers.set(c.id, c);
  return { plans, prices, customers };
}

/**
 * Renews subscriptions whose period is over, claimed (and locked) by the caller in this
 * transaction: cancel_at_period_end → canceled at the period's end, no invoice; otherwise the
 * next period is invoiced in advance (subscription_cycle: plan price in the subscription's
 * currency × quantity), and the subscription moves to it — a trial ending becomes active. All of
 * it, with the events, commits together; a failure rolls the whole batch back (numbers included).
 */
export async function renewSubscriptions(ctx: Ctx, claimed: SubscriptionRow[]): Promise<RenewalOutcome> {
  const outcome: RenewalOutcome = { renewed: [], trialsEnded: [], ended: [] };
  if (claimed.length === 0) return outcome;
  const { plans, prices, customers } = await loadBatchContext(ctx, claimed);
  const advances: PeriodAdvance[] = [];
  const wasTrialing = new Set<string>();
  for (const row of claimed) {
    if (row.current_period_end > ctx.now) throw new Error(`subscription ${row.id} is not due until ${row.current_period_end.toISOString()}`);
    if (row.cancel_at_period_end) {
      const ended = await transitionSubscription(ctx.tx, ctx.tenantId, row.id, 'expire', { ended_at: row.current_period_end, updated_at: ctx.now });
      outcome.ended.push(ended);
      await emitEvent(ctx, 'subscription.canceled', toSubscription(ended));
      continue;
    }
    const plan = plans.get(row.plan_id);
    const price = prices.get(`${row.plan_id}/${row.currency}`);
    const customer = customers.get(row.customer_id);
    if (!plan || !price || !customer) throw new Error(`subscription ${row.id}: its plan has no price in ${row.currency}, or its plan or customer is gone`);
    const period = periodAfter(row);
    const invoice = await invoiceSubscriptionPeriod(ctx, { subscription: row, plan, price, customer, period, billingReason: 'subscription_cycle' });
    if (row.status === 'trialing') wasTrialing.add(row.id);
    advances.push({
      id: row.id,
      fromPeriodEnd: row.current_period_end,
      billingAnchor: row.billing_anchor,
      periodIndex: period.index,
      periodStart: period.start,
      periodEnd: period.end,
      latestInvoiceId: invoice.id,
    });
  }
  for (const row of await advanceSubscriptionPeriods(ctx.tx, ctx.tenantId, advances, ctx.now)) {
    if (wasTrialing.has(row.id)) {
      outcome.trialsEnded.push(row);
      await emitEvent(ctx, 'subscription.trial_ended', toSubscription(row));
    } else {
      outcome.renewed.push(row);
      await emitEvent(ctx, 'subscription.renewed', toSubscription(row));
    }
  }
  return outcome;
}
