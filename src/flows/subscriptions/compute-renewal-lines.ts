import type { ReadCtx } from '../../platform/context.js';
import type { Customer } from '../../modules/customers/index.js';
import type { DraftLine } from '../../modules/invoices/index.js';
import { describePricing, isSimpleUnitPrice, priceQuantity, type PlanRow, type PricedQuantity, type PriceRow } from '../../modules/plans/index.js';
import type { SubscriptionRow } from '../../modules/subscriptions/index.js';
import { aggregateUsage, billableQuantity } from '../../modules/usage/index.js';
import { periodLines, type ItemCharge } from './invoice-subscription-period.js';

type Period = { start: Date; end: Date };

/** What one subscription's renewal invoice is computed from. */
export type RenewalSubject = {
  subscription: Pick<SubscriptionRow, 'id' | 'customer_id' | 'currency' | 'quantity' | 'status'> & { collection_method?: SubscriptionRow['collection_method'] };
  plan: Pick<PlanRow, 'id' | 'name' | 'hsn_code' | 'tax_rate_bp'>;
  /** The plan's fixed (per_unit or tiered) price in the subscription's currency: billed in advance. */
  fixedPrice: PriceRow | null;
  /** The plan's metered prices in the subscription's currency: billed in arrears. */
  meteredPrices: PriceRow[];
  /** The subscription's add-ons (decision 0470): billed in advance beside the plan's fee. */
  items: ItemCharge[];
  customer: Customer;
  /** The period whose usage is billed (the one ending); null when nothing is billed in arrears (a trial). */
  usagePeriod: Period | null;
  /** The period whose fixed fee is billed in advance; null when the subscription ends (its final invoice: usage only). */
  nextPeriod: Period | null;
};

/** One metered price's usage over a period: the aggregated quantity and what it costs. */
export type MeteredCharge = { price: PriceRow; metricCode: string; quantity: number; priced: PricedQuantity };

const day = (d: Date) => d.toISOString().slice(0, 10);

/**
 * The usage of every (subscription, metered price) pair over its period, in ONE grouped query for
 * the whole batch (usage.aggregateUsage), priced by the price's scheme. `period` null: no usage.
 */
export async function meteredCharges(
  ctx: ReadCtx,
  subjects: { key: string; customerId: string; prices: PriceRow[]; period: Period | null }[],
): Promise<Map<string, MeteredCharge[]>> {
  const windows = subjects.flatMap((s) =>
    s.period
      ? s.prices.map((p) => ({ key: `${s.key}/${p.id}`, customer_id: s.customerId, metric_code: p.metric_code!, start: s.period!.start, end: s.period!.end }))
      : [],
  );
  const aggregates = await aggregateUsage(ctx.tx, ctx.tenantId, windows);
  const out = new Map<string, MeteredCharge[]>();
  for (const s of subjects) {
    out.set(
      s.key,
      s.period
        ? s.prices.map((price) => {
            const quantity = billableQuantity(aggregates.get(`${s.key}/${price.id}`)?.quantity ?? '0');
            return { price, metricCode: price.metric_code!, quantity, priced: priceQuantity(price, quantity) };
          })
        : [],
    );
  }
  return out;
}

/** The invoice line of a metered charge (none when it costs nothing): the quantity, the tiers, the period. */
export function usageLine(plan: RenewalSubject['plan'], charge: MeteredCharge, period: Period): DraftLine | null {
  if (charge.priced.amount === 0) return null;
  const simple = isSimpleUnitPrice(charge.price);
  return {
    description: `${plan.name}, usage of ${charge.metricCode}: ${describePricing(charge.price, charge.priced)}, ${day(period.start)} to ${day(period.end)}`,
    quantity: simple ? charge.quantity : 1,
    unit_amount: simple ? charge.price.amount : charge.priced.amount,
    hsn_code: charge.price.hsn_code || plan.hsn_code || undefined,
    tax_rate_bp: plan.tax_rate_bp,
    plan_id: plan.id,
    price_id: charge.price.id,
    period_start: period.start,
    period_end: period.end,
  };
}

/**
 * THE renewal invoice's lines, computed without writing anything (the billing run and the
 * upcoming-invoice preview both use it): for each subject, the ended period's metered lines
 * (arrears) followed by the next period's fixed fee (advance) and one line per add-on — none when
 * the subscription ends (its final invoice: usage only); no fee line when its plan has no fixed
 * price (a pure usage plan). GST is
 * computed per line by the invoice. One aggregation query for the whole batch. An empty list
 * means nothing is due: no invoice is issued (decision 0190).
 */
export async function computeRenewalLines(ctx: ReadCtx, subjects: RenewalSubject[]): Promise<DraftLine[][]> {
  const charges = await meteredCharges(
    ctx,
    subjects.map((s, i) => ({ key: String(i), customerId: s.subscription.customer_id, prices: s.meteredPrices, period: s.usagePeriod })),
  );
  return subjects.map((s, i) => {
    const usage = (charges.get(String(i)) ?? []).flatMap((c) => usageLine(s.plan, c, s.usagePeriod!) ?? []);
    if (!s.nextPeriod) return usage;
    const advance = periodLines({
      subscription: s.subscription,
      plan: s.plan,
      price: s.fixedPrice,
      customer: s.customer,
      period: s.nextPeriod,
      billingReason: 'subscription_cycle',
      items: s.items,
    });
    return [...usage, ...advance];
  });
}
