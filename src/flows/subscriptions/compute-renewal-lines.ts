import type { ReadCtx } from '../../platform/context.js';
import type { Customer } from '../../modules/customers/index.js';
import type { DraftLine } from '../../modules/invoices/index.js';
import {
  describePricing,
  dimensionScheme,
  hasOwnPrice,
  isSimpleUnitPrice,
  matchDimensionPrice,
  priceQuantity,
  type PlanRow,
  type PricedQuantity,
  type PriceRow,
  type PricingScheme,
} from '../../modules/plans/index.js';
import type { SubscriptionRow } from '../../modules/subscriptions/index.js';
import { aggregateUsage, aggregateUsageByDimensions, billableQuantity, type UsageGroup } from '../../modules/usage/index.js';
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

/**
 * One metered price's usage over a period: the aggregated quantity, the scheme that priced it and
 * what it costs. A price with dimension prices (DESIGN §24) makes one charge per dimension
 * combination used: `dimensions` names it, `scheme` is the matching dimension price (or the
 * price's own default), and `unpriced` marks usage that matched none when the price has no
 * default (counted, billed 0 — decision 0480). A plain price makes one charge, `dimensions` null.
 */
export type MeteredCharge = {
  price: PriceRow;
  metricCode: string;
  quantity: number;
  priced: PricedQuantity;
  scheme: PricingScheme;
  dimensions: Record<string, string | null> | null;
  unpriced: boolean;
};

/** The keys a dimensional price matches on (grouped by beside the metric's own dimensions). */
const matchKeys = (price: PriceRow) => [...new Set((price.dimension_prices ?? []).flatMap((d) => Object.keys(d.match)))].sort();

/** One charge per dimension combination of a dimensional price, priced by the first matching dimension price or the default. */
function dimensionalCharges(price: PriceRow, groups: UsageGroup[]): MeteredCharge[] {
  const entries = price.dimension_prices ?? [];
  return groups.map((g) => {
    const quantity = billableQuantity(g.quantity);
    const entry = matchDimensionPrice(entries, g.dimensions);
    const scheme = entry ? dimensionScheme(entry) : price;
    const unpriced = !entry && !hasOwnPrice(price);
    const priced = unpriced ? { quantity, amount: 0, parts: [] } : priceQuantity(scheme, quantity);
    return { price, metricCode: price.metric_code!, quantity, priced, scheme, dimensions: g.dimensions, unpriced };
  });
}

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
      ? s.prices.map((p) => ({
          key: `${s.key}/${p.id}`,
          customer_id: s.customerId,
          metric_code: p.metric_code!,
          start: s.period!.start,
          end: s.period!.end,
          price: p,
        }))
      : [],
  );
  const dimensional = (p: PriceRow) => (p.dimension_prices?.length ?? 0) > 0;
  const aggregates = await aggregateUsage(
    ctx.tx,
    ctx.tenantId,
    windows.filter((w) => !dimensional(w.price)),
  );
  const grouped = await aggregateUsageByDimensions(
    ctx.tx,
    ctx.tenantId,
    windows.filter((w) => dimensional(w.price)).map((w) => ({ ...w, dimensions: matchKeys(w.price) })),
  );
  const out = new Map<string, MeteredCharge[]>();
  for (const s of subjects) {
    out.set(
      s.key,
      s.period
        ? s.prices.flatMap((price) => {
            const key = `${s.key}/${price.id}`;
            if (dimensional(price)) return dimensionalCharges(price, grouped.get(key) ?? []);
            const quantity = billableQuantity(aggregates.get(key)?.quantity ?? '0');
            return [
              { price, metricCode: price.metric_code!, quantity, priced: priceQuantity(price, quantity), scheme: price, dimensions: null, unpriced: false },
            ];
          })
        : [],
    );
  }
  return out;
}

/** " (direction input, model gpt-4)": a dimension combination as an invoice line names it, by dimension name. */
export function describeDimensions(dimensions: Record<string, string | null> | null): string {
  if (!dimensions) return '';
  const parts = Object.keys(dimensions)
    .sort()
    .map((k) => `${k} ${dimensions[k] ?? '(none)'}`);
  return parts.length ? ` (${parts.join(', ')})` : '';
}

/** The invoice line of a metered charge (none when it costs nothing): the quantity, the tiers, the period. */
export function usageLine(plan: RenewalSubject['plan'], charge: MeteredCharge, period: Period): DraftLine | null {
  if (charge.priced.amount === 0) return null;
  const simple = isSimpleUnitPrice(charge.scheme);
  return {
    description: `${plan.name}, usage of ${charge.metricCode}${describeDimensions(charge.dimensions)}: ${describePricing(charge.scheme, charge.priced)}, ${day(period.start)} to ${day(period.end)}`,
    quantity: simple ? charge.quantity : 1,
    unit_amount: simple ? charge.scheme.amount : charge.priced.amount,
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
