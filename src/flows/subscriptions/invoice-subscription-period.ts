import type { Ctx, ReadCtx } from '../../platform/context.js';
import { discountCovers, discountLines, subscriptionDiscounts, type DiscountableLine, type DiscountInForce } from '../../modules/coupons/index.js';
import { findCustomer, type Customer } from '../../modules/customers/index.js';
import type { InvoiceRow } from '../../modules/invoices/index.js';
import { describePricing, isSimpleUnitPrice, priceQuantity, type PlanRow, type PriceRow } from '../../modules/plans/index.js';
import { prorateByDays, type SubscriptionRow } from '../../modules/subscriptions/index.js';
import { issueInvoiceWithCredit } from '../invoices/finalize-invoice.js';

export type SubscriptionBillingReason = 'subscription_create' | 'subscription_cycle' | 'subscription_update';

type ChargedPrice = Pick<PriceRow, 'id' | 'amount'> & Partial<Pick<PriceRow, 'tiers' | 'tiers_mode' | 'package_size' | 'hsn_code'>>;
type ChargedPlan = Pick<PlanRow, 'id' | 'name' | 'hsn_code' | 'tax_rate_bp'>;

/**
 * An add-on of the subscription (decision 0470) on an invoice: its own plan (name, HSN/SAC, GST
 * rate), price and quantity; `unitAmount` as in PeriodCharge.
 */
export type ItemCharge = { plan: ChargedPlan; price: ChargedPrice; quantity: number; unitAmount?: number };

export type PeriodCharge = {
  subscription: Pick<SubscriptionRow, 'id' | 'currency' | 'quantity'> & { collection_method?: SubscriptionRow['collection_method'] };
  plan: ChargedPlan;
  /** The plan's fixed price; null: a pure usage plan, whose invoice here carries only its items. */
  price: ChargedPrice | null;
  customer: Customer;
  period: { start: Date; end: Date };
  billingReason: SubscriptionBillingReason;
  /**
   * The net unit price charged; the plan price unless prorated. For a tiered or package price:
   * the (prorated) total of the quantity, on one line.
   */
  unitAmount?: number;
  /** The add-ons billed for the same period, one line each after the plan's. */
  items?: ItemCharge[];
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
export function periodLine(charge: PeriodCharge & { price: ChargedPrice }) {
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
 * The lines of a subscription period: the plan's (when it has a fixed price), then one per add-on,
 * each priced as the plan's line is (same proration, tiers and HSN/SAC rules: periodLine).
 */
export function periodLines(charge: PeriodCharge) {
  const base = charge.price ? [periodLine({ ...charge, price: charge.price })] : [];
  const items = (charge.items ?? []).map((item) =>
    periodLine({
      ...charge,
      subscription: { ...charge.subscription, quantity: item.quantity },
      plan: item.plan,
      price: item.price,
      unitAmount: item.unitAmount,
    }),
  );
  return [...base, ...items];
}

/**
 * The subscription's add-ons charged for `remaining` of `total` days (to the day, half-up, as the
 * plan's fee: proratedFixedCharge), and what they come to.
 */
export function proratedItemCharges(items: ItemCharge[], remaining: number, total: number): { items: ItemCharge[]; amount: number } {
  let amount = 0;
  const charged = items.map((item) => {
    const charge = proratedFixedCharge(item.price, item.quantity, remaining, total);
    amount += charge.amount;
    return { ...item, unitAmount: charge.unitAmount };
  });
  return { items: charged, amount };
}

/**
 * Advance billing: the invoice for one subscription period, drafted (GST per line) and finalized
 * at once (number, ledger entry, available credit applied), in the caller's transaction. The
 * database allows one subscription_create/subscription_cycle invoice per (subscription, period start).
 */
export async function invoiceSubscriptionPeriod(ctx: Ctx, charge: PeriodCharge): Promise<InvoiceRow> {
  const inForce = (await subscriptionDiscounts(ctx, [charge.subscription.id])).get(charge.subscription.id);
  const { lines, applied } = discountSubscriptionLines(periodLines(charge), inForce, charge.period.start, charge.subscription.currency);
  // A child billed to its parent (decision 0550): the parent is the invoice's customer, the lines name the child.
  const payer = await payerOf(ctx, charge.customer);
  return issueInvoiceWithCredit(
    ctx,
    {
      customer: payer,
      currency: charge.subscription.currency,
      lines: payer.id === charge.customer.id ? lines : lines.map((line) => childLine(line, charge.customer, charge.subscription.id)),
      subscriptionId: charge.subscription.id,
      billingReason: charge.billingReason,
      periodStart: charge.period.start,
      periodEnd: charge.period.end,
      collectionMethod: charge.subscription.collection_method,
    },
    applied,
  );
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

/**
 * Who pays a customer's subscription invoices: its parent when it is billed to it (bill_to
 * 'parent'; decision 0550), the customer itself otherwise.
 */
export async function payerOf(ctx: ReadCtx, customer: Customer): Promise<Customer> {
  if (customer.bill_to !== 'parent' || !customer.parent_customer_id) return customer;
  const parent = await findCustomer(ctx.tx, ctx.tenantId, customer.parent_customer_id);
  if (!parent) throw new Error(`customer ${customer.id}: the parent it is billed to is gone`);
  return parent;
}

/** A child's line on its parent's invoice: named after the child, and linked to it and to the subscription. */
export function childLine<L extends { description: string }>(
  line: L,
  child: Customer,
  subscriptionId: string,
): L & { customer_id: string; subscription_id: string } {
  return { ...line, description: `${child.name ?? child.email}: ${line.description}`.slice(0, 500), customer_id: child.id, subscription_id: subscriptionId };
}
