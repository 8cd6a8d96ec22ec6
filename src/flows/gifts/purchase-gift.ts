import type { Ctx } from '../../platform/context.js';
import { errors } from '../../platform/errors.js';
import { getCustomer } from '../../modules/customers/index.js';
import { giftPrice, insertPurchasedGift, type CreateGiftBody, type GiftRow } from '../../modules/gifts/index.js';
import { issueInvoices } from '../../modules/invoices/index.js';
import { findPlan, pricesOfPlans, type PriceRow } from '../../modules/plans/index.js';
import { getTenant } from '../../modules/tenants/index.js';

/** The plan price a gift is sold in: the asked currency, else the plan's only price, else the tenant's base currency. */
async function choosePrice(ctx: Ctx, prices: PriceRow[], asked: string | undefined, planCode: string): Promise<PriceRow> {
  if (asked) {
    const price = prices.find((p) => p.currency === asked);
    if (!price) throw errors.invalidField('currency', `plan ${planCode} has no price in ${asked}`);
    return price;
  }
  if (prices.length === 1) return prices[0]!;
  const base = (await getTenant(ctx)).base_currency;
  const price = prices.find((p) => p.currency === base);
  if (!price) {
    throw errors.invalidField('currency', `plan ${planCode} has prices in ${prices.map((p) => p.currency).join(', ')}; say which currency`);
  }
  return price;
}

/**
 * Sells a gift: the buyer's purchase invoice (one line, priced by `giftPrice`, GST as for any
 * invoice of the plan) finalized and left `open` for the buyer to pay, and the gift with a fresh
 * code — one transaction. Credit the buyer holds is deliberately not spent here, so the invoice
 * is always open at purchase (the buyer may apply credit explicitly); the code becomes
 * redeemable once the invoice is paid.
 */
export async function purchaseGift(ctx: Ctx, input: CreateGiftBody): Promise<GiftRow> {
  const buyer = await getCustomer(ctx, input.buyer_customer_id);
  const plan = await findPlan(ctx.tx, ctx.tenantId, input.plan_id);
  if (!plan) throw errors.notFound('plan');
  if (!plan.active) throw errors.invalidField('plan_id', `plan ${plan.code} is not active`);
  const price = await choosePrice(ctx, await pricesOfPlans(ctx.tx, ctx.tenantId, [plan.id], { activeOnly: true }), input.currency, plan.code);
  const amount = giftPrice(price.amount, plan.interval_unit, plan.interval_count, input.duration_months);
  if (amount === null) {
    throw errors.invalidField('plan_id', `gifts are sold in months, and plan ${plan.code} bills by the ${plan.interval_unit}`);
  }
  if (amount <= 0) throw errors.invalidField('duration_months', 'the gift would cost nothing at this plan price');
  const months = input.duration_months === 1 ? '1 month' : `${input.duration_months} months`;
  // Drafted and finalized at once: the batch issue with one item (no customer credit spent on a gift).
  const [invoice] = await issueInvoices(ctx, [
    {
      customer: buyer,
      currency: price.currency,
      billingReason: 'gift',
      lines: [
        {
          description: `Gift: ${plan.name}, ${months} (for ${input.recipient_email})`,
          quantity: 1,
          unit_amount: amount,
          hsn_code: plan.hsn_code || undefined,
          tax_rate_bp: plan.tax_rate_bp,
          plan_id: plan.id,
          price_id: price.id,
        },
      ],
      // The price comes from the plan and the duration: an amount too large (with tax) is theirs.
      field: (_i, name) => (name === 'unit_amount' || name === 'lines' ? 'duration_months' : 'plan_id'),
    },
  ]);
  return insertPurchasedGift(ctx, {
    plan_id: plan.id,
    buyer_customer_id: buyer.id,
    recipient_email: input.recipient_email,
    duration_months: input.duration_months,
    currency: price.currency,
    amount,
    invoice_id: invoice!.id,
  });
}
