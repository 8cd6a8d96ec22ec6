import type { Ctx, ReadCtx } from '../../platform/context.js';
import { isUniqueViolation } from '../../platform/db/errors.js';
import { errors } from '../../platform/errors.js';
import { emitEvent } from '../../platform/events/events.js';
import type { Page } from '../../platform/http/envelope.js';
import { newId } from '../../platform/ids.js';
import { toIso } from '../../platform/time.js';
import type { CancellationReason } from '../subscriptions/index.js';
import { findCoupon, findCouponsByIds, type CouponRow, type DiscountRow } from './coupons.repository.js';
import { redemptionRefusal, resolveCoupon, subscriptionDiscounts } from './coupons.service.js';
import {
  countAcceptances,
  findAcceptanceOfSubscription,
  findActiveOfferForReason,
  findRetentionOffer,
  insertAcceptance,
  insertRetentionOffer,
  listRetentionOfferRows,
  lockActiveRetentionOffers,
  updateRetentionOfferRow,
  type RetentionOfferRow,
} from './retention-offers.repository.js';
import type { CreateRetentionOfferBody, PortalRetentionOffer, RetentionOffer, UpdateRetentionOfferBody } from './retention-offers.schemas.js';

export function toRetentionOffer(row: RetentionOfferRow, couponCode: string, timesAccepted: number): RetentionOffer {
  return {
    id: row.id,
    object: 'retention_offer',
    coupon_id: row.coupon_id,
    coupon_code: couponCode,
    reasons: row.reasons,
    message: row.message,
    active: row.active,
    times_accepted: timesAccepted,
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}

async function render(ctx: ReadCtx, rows: RetentionOfferRow[]): Promise<RetentionOffer[]> {
  const coupons = new Map((await findCouponsByIds(ctx.tx, ctx.tenantId, [...new Set(rows.map((r) => r.coupon_id))])).map((c) => [c.id, c.code]));
  const accepted = await countAcceptances(
    ctx.tx,
    ctx.tenantId,
    rows.map((r) => r.id),
  );
  return rows.map((r) => toRetentionOffer(r, coupons.get(r.coupon_id) ?? '', accepted.get(r.id) ?? 0));
}

/** 409 when one of `reasons` already belongs to another active offer: the portal must know which one to show. */
async function assertReasonsFree(ctx: Ctx, reasons: readonly CancellationReason[], except?: string): Promise<void> {
  for (const other of await lockActiveRetentionOffers(ctx.tx, ctx.tenantId)) {
    if (other.id === except) continue;
    const taken = reasons.find((r) => other.reasons.includes(r));
    if (taken)
      throw errors.conflict(
        `the reason ${taken} already has an active retention offer (${other.id}); change or deactivate that one first`,
        'retention_reason_taken',
      );
  }
}

/** POST /v1/retention-offers: the coupon (404 when unknown, 409 when inactive) offered for these reasons. */
export async function createRetentionOffer(ctx: Ctx, input: CreateRetentionOfferBody): Promise<RetentionOffer> {
  const coupon = await resolveCoupon(ctx, input.coupon);
  if (!coupon.active) throw errors.conflict(`coupon ${coupon.code} is not active`, 'coupon_inactive');
  await assertReasonsFree(ctx, input.reasons);
  const row = await insertRetentionOffer(ctx.tx, {
    tenant_id: ctx.tenantId,
    id: newId(),
    coupon_id: coupon.id,
    reasons: JSON.stringify(input.reasons),
    message: input.message ?? null,
    active: true,
    created_at: ctx.now,
    updated_at: ctx.now,
  });
  const offer = toRetentionOffer({ ...row, reasons: input.reasons }, coupon.code, 0);
  await emitEvent(ctx, 'retention_offer.created', offer);
  return offer;
}

export async function getRetentionOffer(ctx: ReadCtx, id: string): Promise<RetentionOffer> {
  const row = await findRetentionOffer(ctx.tx, ctx.tenantId, id);
  if (!row) throw errors.notFound('retention offer');
  return (await render(ctx, [row]))[0]!;
}

export async function listRetentionOffers(
  ctx: ReadCtx,
  filter: { active?: 'true' | 'false' },
  page: Page,
): Promise<{ offers: RetentionOffer[]; total: number }> {
  const { rows, total } = await listRetentionOfferRows(
    ctx.tx,
    ctx.tenantId,
    { active: filter.active === undefined ? undefined : filter.active === 'true' },
    page,
  );
  return { offers: await render(ctx, rows), total };
}

/** PATCH /v1/retention-offers/{id}: its reasons, message, or active flag (the coupon never changes: a new offer does). */
export async function updateRetentionOffer(ctx: Ctx, id: string, input: UpdateRetentionOfferBody): Promise<RetentionOffer> {
  const current = await findRetentionOffer(ctx.tx, ctx.tenantId, id);
  if (!current) throw errors.notFound('retention offer');
  const reasons = input.reasons ?? current.reasons;
  if (input.active ?? current.active) await assertReasonsFree(ctx, reasons, id);
  const row = await updateRetentionOfferRow(ctx.tx, ctx.tenantId, id, {
    ...(input.reasons !== undefined ? { reasons: JSON.stringify(input.reasons) } : {}),
    ...(input.message !== undefined ? { message: input.message } : {}),
    ...(input.active !== undefined ? { active: input.active } : {}),
    updated_at: ctx.now,
  });
  const offer = (await render(ctx, [row!]))[0]!;
  await emitEvent(ctx, 'retention_offer.updated', offer);
  return offer;
}

/** The subscription facts that decide whether an offer may be shown. */
export type RetentionTarget = {
  id: string;
  currency: string;
  plan_id: string;
  status: string;
  cancel_at_period_end: boolean;
};

export type RetentionEligibility = { offer: RetentionOfferRow; coupon: CouponRow } | { refusal: string };

/**
 * Whether a customer cancelling `subscription` for `reason` is offered a coupon, and which
 * (decision 0560): the active offer for that reason, while the subscription runs and is not
 * already set to end, has never accepted an offer (once per subscription), has no discount in
 * force (the coupon would replace it), and the coupon can be redeemed for it now.
 */
export async function retentionEligibility(ctx: ReadCtx, subscription: RetentionTarget, reason: CancellationReason): Promise<RetentionEligibility> {
  const offer = await findActiveOfferForReason(ctx.tx, ctx.tenantId, reason);
  if (!offer) return { refusal: `there is no retention offer for the reason ${reason}` };
  if (subscription.status === 'canceled' || subscription.cancel_at_period_end) return { refusal: 'the subscription is already cancelled' };
  if (await findAcceptanceOfSubscription(ctx.tx, ctx.tenantId, subscription.id)) return { refusal: 'this subscription has already accepted a retention offer' };
  if ((await subscriptionDiscounts(ctx, [subscription.id])).size > 0) return { refusal: 'this subscription already has a discount' };
  const coupon = await findCoupon(ctx.tx, ctx.tenantId, offer.coupon_id);
  const refused = coupon ? redemptionRefusal(coupon, { currency: subscription.currency, planIds: [subscription.plan_id] }, ctx.now) : 'the coupon is gone';
  return refused ? { refusal: refused } : { offer, coupon: coupon! };
}

export function toPortalRetentionOffer(offer: RetentionOfferRow, coupon: CouponRow, reason: CancellationReason): PortalRetentionOffer {
  return {
    id: offer.id,
    object: 'retention_offer',
    reason,
    message: offer.message,
    coupon: {
      name: coupon.name,
      percent_off: coupon.percent_off_bp === null ? null : coupon.percent_off_bp / 100,
      amount_off: coupon.amount_off,
      currency: coupon.currency,
      duration: coupon.duration,
      duration_in_months: coupon.duration_in_months,
    },
  };
}

/** Records that the subscription was kept with the offer's coupon; a second acceptance (a race) is 409. */
export async function recordRetentionAcceptance(
  ctx: Ctx,
  input: { offer: RetentionOfferRow; subscriptionId: string; customerId: string; discount: DiscountRow; reason: CancellationReason; feedback: string | null },
): Promise<void> {
  try {
    await insertAcceptance(ctx.tx, {
      tenant_id: ctx.tenantId,
      id: newId(),
      offer_id: input.offer.id,
      subscription_id: input.subscriptionId,
      customer_id: input.customerId,
      coupon_id: input.discount.coupon_id,
      discount_id: input.discount.id,
      reason: input.reason,
      feedback: input.feedback,
      accepted_at: ctx.now,
    });
  } catch (error) {
    if (isUniqueViolation(error, 'retention_offer_acceptances_tenant_id_subscription_id_key'))
      throw errors.conflict('this subscription has already accepted a retention offer', 'retention_offer_unavailable');
    throw error;
  }
}
