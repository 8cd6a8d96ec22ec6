import type { ReadCtx } from '../../platform/context.js';
import { errors } from '../../platform/errors.js';
import { toIso } from '../../platform/time.js';
import { getCustomer } from '../../modules/customers/index.js';
import { previewInvoice } from '../../modules/invoices/index.js';
import { findPlan, pricesOfPlans, type PriceRow } from '../../modules/plans/index.js';
import { getSubscriptionRow, periodAfter, type SubscriptionRow } from '../../modules/subscriptions/index.js';
import { subscriptionDiscounts } from '../../modules/coupons/index.js';
import { commitmentTrueUps } from './commitment-true-up.js';
import { computeRenewalLines, meteredCharges, type MeteredCharge, type RenewalSubject } from './compute-renewal-lines.js';
import { childLine, discountSubscriptionLines, payerOf } from './invoice-subscription-period.js';
import { itemChargesOfSubscription } from './subscription-item-charges.js';

/** One dimension combination of a dimensional price's usage (DESIGN §24). */
export type DimensionUsage = { dimensions: Record<string, string | null>; quantity: number; amount: number; priced: boolean };

export type SubscriptionUsage = {
  period_start: string;
  period_end: string;
  metrics: { metric_code: string; quantity: number; amount: number; unpriced_quantity: number; dimensions: DimensionUsage[] }[];
};

/** Each metered price's usage as the usage endpoint answers it: totals, and one entry per dimension combination used. */
function usageOfPrices(prices: PriceRow[], charges: MeteredCharge[]): SubscriptionUsage['metrics'] {
  return prices.map((price) => {
    const mine = charges.filter((c) => c.price.id === price.id);
    return {
      metric_code: price.metric_code!,
      quantity: mine.reduce((n, c) => n + c.quantity, 0),
      amount: mine.reduce((n, c) => n + c.priced.amount, 0),
      unpriced_quantity: mine.reduce((n, c) => n + (c.unpriced ? c.quantity : 0), 0),
      dimensions: mine.flatMap((c) => (c.dimensions ? [{ dimensions: c.dimensions, quantity: c.quantity, amount: c.priced.amount, priced: !c.unpriced }] : [])),
    };
  });
}

/** One subscription's renewal subject as the billing run would build it now. */
export async function renewalSubjectOf(ctx: ReadCtx, row: SubscriptionRow): Promise<RenewalSubject> {
  const plan = await findPlan(ctx.tx, ctx.tenantId, row.plan_id);
  // The price the subscription bills (kept after it is archived), else the plan's active one in its currency.
  const fixed = await pricesOfPlans(ctx.tx, ctx.tenantId, [row.plan_id]);
  const fixedPrice = fixed.find((p) => p.id === row.price_id) ?? fixed.find((p) => p.active && p.currency === row.currency) ?? null;
  const meteredPrices = (await pricesOfPlans(ctx.tx, ctx.tenantId, [row.plan_id], { scope: 'metered', activeOnly: true })).filter(
    (p) => p.currency === row.currency,
  );
  if (!plan || (!fixedPrice && meteredPrices.length === 0)) {
    throw errors.conflict(`subscription ${row.id}: its plan has no price in ${row.currency}`, 'subscription_unpriced');
  }
  return {
    subscription: row,
    plan,
    fixedPrice,
    meteredPrices,
    items: await itemChargesOfSubscription(ctx, row.id),
    customer: await getCustomer(ctx, row.customer_id),
    usagePeriod: row.status === 'trialing' ? null : { start: row.current_period_start, end: row.current_period_end },
    // Set to cancel at period end: no next period, only the final usage invoice.
    nextPeriod: row.cancel_at_period_end ? null : periodAfter(row),
  };
}

/**
 * GET /v1/subscriptions/{id}/usage: each metered price's usage so far in the current period and
 * its amount; a dimensional price also by dimension combination, with the quantity no dimension
 * price (nor a default) priced. Reads only.
 */
export async function subscriptionUsage(ctx: ReadCtx, id: string): Promise<SubscriptionUsage> {
  const row = await getSubscriptionRow(ctx, id);
  const period = { start: row.current_period_start, end: row.current_period_end };
  const meteredPrices = (await pricesOfPlans(ctx.tx, ctx.tenantId, [row.plan_id], { scope: 'metered', activeOnly: true })).filter(
    (p) => p.currency === row.currency,
  );
  const charges = await meteredCharges(ctx, [{ key: row.id, customerId: row.customer_id, prices: meteredPrices, period }]);
  return {
    period_start: toIso(period.start),
    period_end: toIso(period.end),
    metrics: usageOfPrices(meteredPrices, charges.get(row.id) ?? []),
  };
}

/**
 * GET /v1/subscriptions/{id}/upcoming-invoice: the invoice the next renewal would issue if the
 * current period ended now — usage so far (arrears), the next period's fixed fee (advance), GST
 * per line — computed by the renewal's own computeRenewalLines, writing nothing. For a
 * subscription set to cancel at period end: its final invoice (usage only, subscription_final).
 * No lines (a pure usage plan with no usage yet): an invoice of zero, which the run would not issue.
 * A child billed to its parent (decision 0550) previews as the renewal issues it: the parent is
 * the customer (its GSTIN and state decide the GST), the invoice is consolidated (no
 * `subscription_id` of its own), and each line names the child and the subscription.
 */
export async function upcomingInvoice(ctx: ReadCtx, id: string) {
  const row = await getSubscriptionRow(ctx, id);
  if (!['active', 'trialing', 'past_due', 'unpaid'].includes(row.status)) {
    throw errors.conflict(`a ${row.status} subscription has no upcoming renewal invoice`, `subscription_${row.status}`);
  }
  const subject = await renewalSubjectOf(ctx, row);
  const [computed] = await computeRenewalLines(ctx, [subject]);
  // The discount in force on the next period, as the renewal will take it off.
  const inForce = (await subscriptionDiscounts(ctx, [row.id])).get(row.id);
  const period = subject.nextPeriod ?? subject.usagePeriod ?? { start: row.current_period_start, end: row.current_period_end };
  const { lines } = discountSubscriptionLines(computed!, inForce, period.start, row.currency);
  // The minimum commitment's true-up of the period in progress, on the usage so far (decision 0540).
  const [trueUp] = subject.usagePeriod
    ? await commitmentTrueUps(ctx, [{ ...subject, subscription: row, period: subject.usagePeriod, until: subject.usagePeriod.end, lines }])
    : [null];
  const all = trueUp ? [...lines, trueUp] : lines;
  const payer = await payerOf(ctx, subject.customer);
  const consolidated = payer.id !== subject.customer.id;
  return previewInvoice(ctx, {
    customer: payer,
    currency: row.currency,
    lines: consolidated ? all.map((line) => childLine(line, subject.customer, row.id)) : all,
    subscriptionId: consolidated ? null : row.id,
    billingReason: subject.nextPeriod ? 'subscription_cycle' : 'subscription_final',
    periodStart: period.start,
    periodEnd: period.end,
    collectionMethod: row.collection_method,
    ...(consolidated ? { metadata: { consolidated: true } } : {}),
  });
}
