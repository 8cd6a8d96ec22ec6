import type { Ctx } from '../../platform/context.js';
import { errors } from '../../platform/errors.js';
import { emitEvent } from '../../platform/events/events.js';
import { redeemCoupon, type DiscountRow } from '../../modules/coupons/index.js';
import { findPlan } from '../../modules/plans/index.js';
import {
  assertCommittable,
  createSubscriptionRecord,
  startingSchedule,
  toSubscription,
  updateSubscription,
  type CreateSubscriptionBody,
  type SubscriptionRow,
} from '../../modules/subscriptions/index.js';
import { invoiceSubscriptionPeriod } from './invoice-subscription-period.js';

const DAY_MS = 86_400_000;
/** How far back a start may be dated: the billing run then invoices every period since, once. */
export const MAX_BACKDATE_DAYS = 366;

/**
 * POST /v1/subscriptions. With trial days (the request's, else the plan's) it starts `trialing`
 * and nothing is invoiced until the trial ends. Otherwise it starts `active` and the first
 * period is invoiced and finalized at once (advance billing, billing_reason subscription_create),
 * in the same transaction as the subscription and its subscription.created event.
 */
export async function createSubscription(ctx: Ctx, input: CreateSubscriptionBody): Promise<{ row: SubscriptionRow; discount: DiscountRow | null }> {
  const start = input.start_at ? new Date(input.start_at) : ctx.now;
  if (start > ctx.now) throw errors.invalidField('start_at', 'cannot be in the future; use trial_days to delay the first charge');
  if (start.getTime() < ctx.now.getTime() - MAX_BACKDATE_DAYS * DAY_MS) {
    throw errors.invalidField('start_at', `may be backdated at most ${MAX_BACKDATE_DAYS} days`);
  }
  const plan = await findPlan(ctx.tx, ctx.tenantId, input.plan_id);
  if (!plan) throw errors.notFound('plan');
  if (!plan.active) throw errors.conflict(`plan ${plan.code} is not active`, 'plan_inactive');
  const begin = startingSchedule(plan, start, input.trial_days ?? plan.trial_days);
  const created = await createSubscriptionRecord(ctx, {
    customerId: input.customer_id,
    planId: plan.id,
    currency: input.currency,
    quantity: input.quantity,
    status: begin.status,
    currentPeriodStart: begin.period.start,
    currentPeriodEnd: begin.period.end,
    trialStart: begin.trial?.start ?? null,
    trialEnd: begin.trial?.end ?? null,
    externalId: input.external_id ?? null,
    metadata: input.metadata,
    collectionMethod: input.collection_method,
    schedule: begin.schedule,
    emit: false,
    minimum: input.minimum_commitment
      ? { amount: input.minimum_commitment.amount, priceId: input.minimum_commitment.price_id ?? null, since: begin.period.start }
      : null,
  });
  let row = created.row;
  if (input.minimum_commitment) await assertCommittable(ctx, row, input.minimum_commitment, 'minimum_commitment.');
  // The coupon is redeemed before the first invoice, which it discounts (once: only that one).
  const discount = input.coupon
    ? (await redeemCoupon(ctx, input.coupon, { customerId: row.customer_id, currency: row.currency, planIds: [plan.id], subscriptionId: row.id })).discount
    : null;
  // A pure usage plan (no fixed price) has nothing to bill in advance: its first invoice is its first period's usage.
  if (begin.status === 'active' && created.price) {
    const invoice = await invoiceSubscriptionPeriod(ctx, {
      subscription: row,
      plan: created.plan,
      price: created.price,
      customer: created.customer,
      period: begin.period,
      billingReason: 'subscription_create',
    });
    row = await updateSubscription(ctx.tx, ctx.tenantId, row.id, { latest_invoice_id: invoice.id });
  }
  await emitEvent(ctx, 'subscription.created', toSubscription(row));
  return { row, discount };
}
