import type { Ctx, ReadCtx } from '../../platform/context.js';
import { errors } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import { toIso } from '../../platform/time.js';
import { findPlan, findPrice } from '../plans/index.js';
import {
  deleteSubscriptionItemRow,
  findSubscriptionItem,
  insertSubscriptionItem,
  itemsOfSubscriptionRows,
  updateSubscriptionItemQuantity,
  type SubscriptionItemRow,
} from './subscription-items.repository.js';
import type { SubscriptionRow } from './subscriptions.repository.js';
import type { SubscriptionItem } from './subscriptions.schemas.js';
import { assertChargeable } from './subscriptions.service.js';

export type { SubscriptionItemRow } from './subscription-items.repository.js';

export function toSubscriptionItem(row: SubscriptionItemRow): SubscriptionItem {
  return {
    id: row.id,
    object: 'subscription_item',
    kind: 'add_on',
    subscription_id: row.subscription_id,
    plan_id: row.plan_id,
    price_id: row.price_id,
    quantity: row.quantity,
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}

/** The plan's own price as the first entry of the list (DESIGN §24: "the plan's price is the first"). */
function planEntry(row: SubscriptionRow): SubscriptionItem {
  return {
    id: null,
    object: 'subscription_item',
    kind: 'plan',
    subscription_id: row.id,
    plan_id: row.plan_id,
    price_id: row.price_id,
    quantity: row.quantity,
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}

/** The add-ons of several subscriptions, one statement, by subscription (oldest item first). */
export async function itemsOfSubscriptions(ctx: ReadCtx, subscriptionIds: readonly string[]): Promise<Map<string, SubscriptionItemRow[]>> {
  const out = new Map<string, SubscriptionItemRow[]>();
  for (const row of await itemsOfSubscriptionRows(ctx.tx, ctx.tenantId, subscriptionIds)) {
    out.set(row.subscription_id, [...(out.get(row.subscription_id) ?? []), row]);
  }
  return out;
}

/** GET /v1/subscriptions/{id}/items: the plan's price first, then the add-ons. */
export async function listSubscriptionItems(ctx: ReadCtx, subscription: SubscriptionRow): Promise<SubscriptionItem[]> {
  const items = (await itemsOfSubscriptions(ctx, [subscription.id])).get(subscription.id) ?? [];
  return [planEntry(subscription), ...items.map(toSubscriptionItem)];
}

export async function getSubscriptionItemRow(ctx: Ctx, subscriptionId: string, itemId: string): Promise<SubscriptionItemRow> {
  const row = await findSubscriptionItem(ctx.tx, ctx.tenantId, subscriptionId, itemId);
  if (!row) throw errors.notFound('subscription item');
  return row;
}

/**
 * A new add-on (the caller holds the subscription's row lock): an active fixed price of the tenant
 * in the subscription's currency, of a plan billed on the subscription's interval — an item is
 * invoiced for the same periods as the plan — and neither the plan's own price nor an item already.
 */
export async function addSubscriptionItemRecord(
  ctx: Ctx,
  subscription: SubscriptionRow,
  input: { priceId: string; quantity: number },
): Promise<SubscriptionItemRow> {
  const price = await findPrice(ctx.tx, ctx.tenantId, input.priceId);
  if (!price) throw errors.notFound('price');
  if (!price.active) throw errors.conflict('price_id: the price is archived', 'price_archived');
  if (price.billing_scheme === 'metered') {
    throw errors.invalidField('price_id', "a metered price is billed through the subscription's plan, not as an item");
  }
  if (price.currency !== subscription.currency) {
    throw errors.invalidField('price_id', `the price is in ${price.currency}; the subscription bills in ${subscription.currency}`);
  }
  const plan = await findPlan(ctx.tx, ctx.tenantId, price.plan_id);
  if (!plan) throw errors.notFound('price');
  if (plan.interval_unit !== subscription.interval_unit || plan.interval_count !== subscription.interval_count) {
    throw errors.invalidField(
      'price_id',
      `the price's plan bills every ${plan.interval_count} ${plan.interval_unit}; the subscription every ${subscription.interval_count} ${subscription.interval_unit}`,
    );
  }
  if (price.id === subscription.price_id)
    throw errors.invalidField('price_id', "this is the subscription's plan price: change its quantity with PATCH /v1/subscriptions/{id}");
  assertChargeable(price, input.quantity);
  const existing = (await itemsOfSubscriptions(ctx, [subscription.id])).get(subscription.id) ?? [];
  if (existing.some((i) => i.price_id === price.id)) {
    throw errors.conflict('price_id: the subscription already has an item of this price; change its quantity instead', 'subscription_item_exists');
  }
  return insertSubscriptionItem(ctx.tx, {
    tenant_id: ctx.tenantId,
    id: newId(),
    subscription_id: subscription.id,
    plan_id: plan.id,
    price_id: price.id,
    quantity: input.quantity,
    created_at: ctx.now,
    updated_at: ctx.now,
  });
}

export async function setSubscriptionItemQuantity(ctx: Ctx, item: SubscriptionItemRow, quantity: number): Promise<SubscriptionItemRow> {
  if (quantity === item.quantity) throw errors.invalidField('quantity', `the item already has quantity ${item.quantity}`);
  const price = await findPrice(ctx.tx, ctx.tenantId, item.price_id);
  assertChargeable(price ?? null, quantity);
  return updateSubscriptionItemQuantity(ctx.tx, ctx.tenantId, item.id, quantity, ctx.now);
}

export async function removeSubscriptionItemRecord(ctx: Ctx, item: SubscriptionItemRow): Promise<void> {
  await deleteSubscriptionItemRow(ctx.tx, ctx.tenantId, item.id);
}
