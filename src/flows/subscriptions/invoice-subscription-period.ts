import type { Ctx } from '../../platform/context.js';
import {
  discountCovers,
  discountLines,
  recordInvoiceDiscounts,
  subscriptionDiscounts,
  type DiscountableLine,
  type DiscountInForce,
} from '../../modules/coupons/index.js';
import type { Customer } from '../../modules/customers/index.js';
import { createDraftInvoice, type InvoiceRow } from '../../modules/invoices/index.js';
import { describePricing, isSimpleUnitPrice, priceQuantity, type PlanRow, type PriceRow } from '../../modules/plans/index.js';
import { prorateByDays, type SubscriptionRow } from '../../modules/subscriptions/index.js';
import { finalizeInvoiceWithCredit } from '../invoices/finalize-invoice.js';

export type SubscriptionBillingReason = 'subscription_create' | 'subscription_cycle' | 'subscription_update';

export type PeriodCharge = {
  subscription: Pick<SubscriptionRow, 'id' | 'currency' | 'quantity'> & { collection_method?: SubscriptionRow['collection_method'] };
  plan: Pick<PlanRow, 'id' | 'name' | 'hsn_code' | 'tax_rate_bp'>;
  price: Pick<PriceRow, 'id' | 'amount'> & Partial<Pick<PriceRow, 'tiers' | 'tiers_mode' | 'package_size' | 'hsn_code'>>;
  customer: Customer;
  period: { start: Date; end: Date };
  billingReason: SubscriptionBillingReason;
  /**
   * The net unit price charged; the plan price unless prorated. For a tiered or package price:
   * the (prorated) total of the quantity, on one line.
   */
  unitAmount?: number;
};

/**
 * What a fixed price charges for `quantity` over `remaining` of `total` days, prorated to the day
 * (half-up): a simple per-unit price per unit (`units` = the quantity), a tiered or package price
 * as the prorated total of the whole quantity (`units` 1; decision 0190). `unitAmount` is what
 * periodLine takes; `amount` = units × unitAmount.
 */
export function proratedFixedCharge(
  price: Pick<PriceRow, 'amount'> & Partial<Pick<PriceRow, 'tiers' | 'tiers_mode' | 'package_size'>>,
  quantity: number,
  remaining: number,
  total: number,
): { units: number; unitAmount: number; amount: number } {
  const simple = isSimpleUnitPrice(price);
  const units = simple ? quantity : 1;
  const unitAmount = prorateByDays(simple ? price.amount : priceQuantity(price, quantity).amount, remaining, total);
  return { units, unitAmount, amount: units * unitAmount };
}

const day = (d: Date) => d.toISOString().slice(0, 10);

/**
 * The invoice line of a subscription period: plan price × quantity, with the period on it. A
 * tiered or package price (DESIGN §13) prices the quantity as a whole: one line of the total whose
 * description gives the quantity and the tiers.
 */
export function periodLine(charge: PeriodCharge) {
  const hsn = charge.price.hsn_code || charge.plan.hsn_code || undefined;
  if (!isSimpleUnitPrice(charge.price)) {
    const priced = priceQuantity(charge.price, charge.subscription.quantity);
    const prorated = charge.unitAmount !== undefined && charge.unitAmount !== priced.amount;
    return {
      description: `${charge.plan.name}${prorated ? ' (prorated)' : ''}, ${describePricing(charge.price, priced)}, ${day(charge.period.start)} to ${day(charge.period.end)}`,
      quantity: 1,
      unit_amount: charge.unitAmount ?? priced.amount,
      hsn_code: hsn,
      tax_rate_bp: charge.plan.tax_rate_bp,
      plan_id: charge.plan.id,
      price_id: charge.price.id,
      period_start: charge.period.start,
      period_end: charge.period.end,
    };
  }
  const prorated = charge.unitAmount !== undefined && charge.unitAmount !== charge.price.amount;
  return {
    description: `${charge.plan.name}${prorated ? ' (prorated)' : ''}, ${day(charge.period.start)} to ${day(charge.period.end)}`,
    quantity: charge.subscription.quantity,
    unit_amount: charge.unitAmount ?? charge.price.amount,
    hsn_code: hsn,
    tax_rate_bp: charge.plan.tax_rate_bp,
    plan_id: charge.plan.id,
    price_id: charge.price.id,
    period_start: charge.period.start,
    period_end: charge.period.end,
  };
}

/**
 * Advance billing: the invoice for one subscription period, drafted (GST per line) and finalized
 * at once (number, ledger entry, available credit applied), in the caller's transaction. The
 * database allows one subscription_create/subscription_cycle invoice per (subscription, period start).
 */
export async function invoiceSubscriptionPeriod(ctx: Ctx, charge: PeriodCharge): Promise<InvoiceRow> {
  const inForce = (await subscriptionDiscounts(ctx, [charge.subscription.id])).get(charge.subscription.id);
  const { lines, applied } = discountSubscriptionLines([periodLine(charge)], inForce, charge.period.start, charge.subscription.currency);
  const draft = await createDraftInvoice(ctx, {
    customer: charge.customer,
    currency: charge.subscription.currency,
    lines,
    subscriptionId: charge.subscription.id,
    billingReason: charge.billingReason,
    periodStart: charge.period.start,
    periodEnd: charge.period.end,
    collectionMethod: charge.subscription.collection_method,
  });
  await recordInvoiceDiscounts(ctx, draft.id, applied);
  return finalizeInvoiceWithCredit(ctx, draft.id);
}

/**
 * A subscription invoice's lines with its discount taken off, when the discount covers a period
 * starting at `periodStart` (once: its first invoice; repeating: periods starting before its end;
 * forever) — applyDiscounts on the lines, before GST. Renewals, plan and seat changes and the
 * upcoming invoice all go through here.
 */
export function discountSubscriptionLines<L extends DiscountableLine>(lines: L[], inForce: DiscountInForce | undefined, periodStart: Date, currency: string) {
  return discountLines(lines, inForce && discountCovers(inForce, periodStart, currency) ? [inForce] : []);
}
