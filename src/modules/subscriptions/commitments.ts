import type { Ctx } from '../../platform/context.js';
import { errors } from '../../platform/errors.js';
import { emitEvent } from '../../platform/events/events.js';
import { findPrice, pricesOfPlans } from '../plans/index.js';
import { itemsOfSubscriptionRows } from './subscription-items.repository.js';
import { findSubscription, updateSubscription, type SubscriptionRow } from './subscriptions.repository.js';
import type { MinimumCommitmentBody } from './subscriptions.schemas.js';
import { toSubscription } from './subscriptions.service.js';

/** Statuses whose commitment may still change: a canceled subscription bills no more periods. */
const CHANGEABLE = new Set(['active', 'trialing', 'past_due', 'unpaid', 'paused']);

/**
 * A commitment's terms checked against its subscription (decision 0540): the amount is in the
 * subscription's currency, and a committed price is one the subscription bills — its own fixed
 * price, one of its plan's metered prices in its currency, or one of its items' prices. 400 otherwise.
 */
export async function assertCommittable(
  ctx: Ctx,
  row: Pick<SubscriptionRow, 'id' | 'plan_id' | 'price_id' | 'currency'>,
  body: MinimumCommitmentBody,
  field = '',
): Promise<void> {
  if (body.currency && body.currency !== row.currency) {
    throw errors.invalidField(`${field}currency`, `must be the subscription's currency (${row.currency})`);
  }
  if (!body.price_id) return;
  const price = await findPrice(ctx.tx, ctx.tenantId, body.price_id);
  const billed =
    price !== undefined &&
    price.currency === row.currency &&
    (price.id === row.price_id ||
      (price.plan_id === row.plan_id && price.metric_code !== null && price.active) ||
      (await itemsOfSubscriptionRows(ctx.tx, ctx.tenantId, [row.id])).some((i) => i.price_id === price.id) ||
      (!row.price_id && (await pricesOfPlans(ctx.tx, ctx.tenantId, [row.plan_id], { activeOnly: true })).some((p) => p.id === price.id)));
  if (!billed)
    throw errors.invalidField(
      `${field}price_id`,
      "must be a price the subscription bills (its plan's price, a metered price of its plan, or an item's) in its currency",
    );
}

/**
 * PUT /v1/subscriptions/{id}/minimum-commitment: sets or replaces the commitment, in force from
 * now (`since`): the period in progress counts it for the days left (decision 0540). Emits
 * `subscription.updated` with the previous commitment.
 */
export async function setMinimumCommitment(ctx: Ctx, id: string, body: MinimumCommitmentBody): Promise<SubscriptionRow> {
  const row = await lockChangeable(ctx, id);
  await assertCommittable(ctx, row, body);
  // A replaced commitment keeps its start, so a change of amount does not shorten the period's count.
  const since = row.minimum_since ?? ctx.now;
  const updated = await updateSubscription(ctx.tx, ctx.tenantId, id, {
    minimum_amount: body.amount,
    minimum_price_id: body.price_id ?? null,
    minimum_since: since,
    updated_at: ctx.now,
  });
  await emitEvent(ctx, 'subscription.updated', {
    ...toSubscription(updated),
    previous_attributes: { minimum_commitment: toSubscription(row).minimum_commitment },
  });
  return updated;
}

/** DELETE /v1/subscriptions/{id}/minimum-commitment: no commitment from now on (the period in progress included). */
export async function removeMinimumCommitment(ctx: Ctx, id: string): Promise<SubscriptionRow> {
  const row = await lockChangeable(ctx, id);
  if (row.minimum_amount == null) throw errors.conflict('the subscription has no minimum commitment', 'subscription_without_minimum_commitment');
  const updated = await updateSubscription(ctx.tx, ctx.tenantId, id, {
    minimum_amount: null,
    minimum_price_id: null,
    minimum_since: null,
    updated_at: ctx.now,
  });
  await emitEvent(ctx, 'subscription.updated', {
    ...toSubscription(updated),
    previous_attributes: { minimum_commitment: toSubscription(row).minimum_commitment },
  });
  return updated;
}

async function lockChangeable(ctx: Ctx, id: string): Promise<SubscriptionRow> {
  const row = await findSubscription(ctx.tx, ctx.tenantId, id, true);
  if (!row) throw errors.notFound('subscription');
  if (!CHANGEABLE.has(row.status))
    throw errors.conflict(`cannot change the minimum commitment of a subscription whose status is ${row.status}`, 'invalid_subscription_state');
  return row;
}
