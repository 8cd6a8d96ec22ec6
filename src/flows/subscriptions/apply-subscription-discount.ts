import type { Ctx } from '../../platform/context.js';
import { emitEvent } from '../../platform/events/events.js';
import { redeemCoupon, toDiscount, type CouponRow, type DiscountRow } from '../../modules/coupons/index.js';
import { canTransition, lockForTransition, toSubscription, type SubscriptionRow } from '../../modules/subscriptions/index.js';

/**
 * POST /v1/subscriptions/{id}/discount `{ coupon }`: redeems the coupon for the subscription (one
 * redemption; 409 when it is past redeem_by, at max_redemptions, inactive or for other plans or
 * another currency). It discounts the subscription's invoices from the next one on, for the
 * coupon's duration counted from now; a discount already in force ends.
 */
export async function applySubscriptionDiscount(
  ctx: Ctx,
  id: string,
  coupon: string,
): Promise<{ row: SubscriptionRow; discount: DiscountRow; coupon: CouponRow }> {
  const row = await lockForTransition(ctx, id, 'change_plan', (r) => canTransition(r.status, 'change_plan') || r.status === 'paused' || r.status === 'unpaid');
  const redeemed = await redeemCoupon(ctx, coupon, { customerId: row.customer_id, currency: row.currency, planIds: [row.plan_id], subscriptionId: row.id });
  await emitEvent(ctx, 'subscription.discount_applied', { ...toSubscription(row), discount: toDiscount(redeemed.discount, redeemed.coupon) });
  return { row, ...redeemed };
}
