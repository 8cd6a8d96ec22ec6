import type { Ctx, ReadCtx } from '../../platform/context.js';
import { errors } from '../../platform/errors.js';
import { emitEvent } from '../../platform/events/events.js';
import {
  recordRetentionAcceptance,
  retentionEligibility,
  toDiscount,
  toPortalRetentionOffer,
  type Discount,
  type PortalRetentionOffer,
} from '../../modules/coupons/index.js';
import { getSubscriptionRow, toSubscription, type CancellationReason, type Subscription } from '../../modules/subscriptions/index.js';
import { subscriptionNow } from '../test-clocks/clock-time.js';
import { applySubscriptionDiscount } from './apply-subscription-discount.js';

/** The offer a customer cancelling this subscription for `reason` is shown, or null (decision 0560). */
export async function retentionOfferFor(ctx: ReadCtx, subscriptionId: string, reason: CancellationReason): Promise<PortalRetentionOffer | null> {
  const eligibility = await retentionEligibility(ctx, await getSubscriptionRow(ctx, subscriptionId), reason);
  return 'offer' in eligibility ? toPortalRetentionOffer(eligibility.offer, eligibility.coupon, reason) : null;
}

export type AcceptedRetentionOffer = Subscription & { discount: Discount; retention_offer: PortalRetentionOffer };

/**
 * The customer takes the offer instead of cancelling: the offer's coupon becomes the
 * subscription's discount (the API's POST /v1/subscriptions/{id}/discount, one redemption), the
 * subscription is not cancelled, and the acceptance is recorded with the reason and feedback the
 * customer gave (counted by the churn-reasons report) and announced as
 * `subscription.retention_offer_accepted`. Refused with 409 `retention_offer_unavailable` when no
 * offer would be shown for that reason now. On a test clock's customer it happens at the clock's time.
 */
export async function acceptRetentionOffer(
  actionCtx: Ctx,
  subscriptionId: string,
  input: { reason: CancellationReason; feedback?: string | undefined },
): Promise<AcceptedRetentionOffer> {
  const ctx = await subscriptionNow(actionCtx, subscriptionId);
  const subscription = await getSubscriptionRow(ctx, subscriptionId);
  const eligibility = await retentionEligibility(ctx, subscription, input.reason);
  if ('refusal' in eligibility) throw errors.conflict(`no retention offer can be accepted: ${eligibility.refusal}`, 'retention_offer_unavailable');
  const { row, discount, coupon } = await applySubscriptionDiscount(ctx, subscriptionId, eligibility.coupon.id);
  await recordRetentionAcceptance(ctx, {
    offer: eligibility.offer,
    subscriptionId,
    customerId: row.customer_id,
    discount,
    reason: input.reason,
    feedback: input.feedback ?? null,
  });
  const accepted = {
    ...toSubscription(row),
    discount: toDiscount(discount, coupon),
    retention_offer: toPortalRetentionOffer(eligibility.offer, coupon, input.reason),
  };
  await emitEvent(ctx, 'subscription.retention_offer_accepted', accepted);
  return accepted;
}
