import type { ReadCtx } from '../../platform/context.js';
import { findPlan, pricesOfPlans, type PlanRow, type PriceRow } from '../../modules/plans/index.js';
import { itemsOfSubscriptions } from '../../modules/subscriptions/index.js';
import type { ItemCharge } from './invoice-subscription-period.js';

/**
 * The add-ons (decision 0470) of subscriptions as invoice charges — each with its plan and price
 * (archived or not: an item keeps the price it was added with) — by subscription id. One statement
 * when no subscription has items; otherwise one per distinct plan and one for their prices.
 * Everything that invoices a subscription period reads them here: renewals, the upcoming-invoice
 * preview, plan, seat and item changes, and a resume.
 */
export async function itemChargesOf(ctx: ReadCtx, subscriptionIds: readonly string[]): Promise<Map<string, ItemCharge[]>> {
  const items = await itemsOfSubscriptions(ctx, subscriptionIds);
  const out = new Map<string, ItemCharge[]>();
  if (items.size === 0) return out;
  const planIds = [...new Set([...items.values()].flat().map((i) => i.plan_id))];
  const plans = new Map<string, PlanRow>();
  for (const id of planIds) {
    const plan = await findPlan(ctx.tx, ctx.tenantId, id);
    if (plan) plans.set(id, plan);
  }
  const prices = new Map<string, PriceRow>((await pricesOfPlans(ctx.tx, ctx.tenantId, planIds)).map((p) => [p.id, p]));
  for (const [subscriptionId, rows] of items) {
    out.set(
      subscriptionId,
      rows.map((row) => {
        const plan = plans.get(row.plan_id);
        const price = prices.get(row.price_id);
        if (!plan || !price) throw new Error(`subscription item ${row.id}: its plan or price is gone`);
        return { plan, price, quantity: row.quantity };
      }),
    );
  }
  return out;
}

/** One subscription's add-ons as invoice charges. */
export async function itemChargesOfSubscription(ctx: ReadCtx, subscriptionId: string): Promise<ItemCharge[]> {
  return (await itemChargesOf(ctx, [subscriptionId])).get(subscriptionId) ?? [];
}
