import type { Ctx } from '../../platform/context.js';
import { errors } from '../../platform/errors.js';
import { lockRedeemableGift, markGiftRedeemed, type GiftRow } from '../../modules/gifts/index.js';
import { getInvoiceRow } from '../../modules/invoices/index.js';
import { addInterval, createSubscriptionRecord, type SubscriptionRow } from '../../modules/subscriptions/index.js';

/**
 * SPEC 4.9: a customer signed in to the portal redeems a gift code. The gift row is locked first
 * (then its invoice — the cancel flow's order, so the two never deadlock): of two customers
 * racing for one code, the second waits and then finds it used (422). The gift's subscription is
 * `active` for `duration_months` from now, `cancel_at_period_end` true (it ends, it is not
 * billed), with `gift_code` and `gifted_by`; no invoice — the buyer paid for it.
 */
export async function redeemGift(ctx: Ctx, customerId: string, typedCode: string): Promise<{ gift: GiftRow; subscription: SubscriptionRow }> {
  const gift = await lockRedeemableGift(ctx, typedCode);
  if (gift.invoice_id) {
    const invoice = await getInvoiceRow(ctx, gift.invoice_id, true);
    if (invoice.status !== 'paid') throw errors.unprocessable('this gift has not been paid for yet', 'gift_code_unpaid');
  }
  const start = ctx.now;
  const { row: subscription } = await createSubscriptionRecord(ctx, {
    customerId,
    planId: gift.plan_id,
    currency: gift.currency,
    status: 'active',
    currentPeriodStart: start,
    currentPeriodEnd: addInterval(start, 'month', gift.duration_months),
    cancelAtPeriodEnd: true,
    giftCode: gift.code,
    giftedBy: gift.buyer_customer_id,
    metadata: { gift_id: gift.id },
  });
  return { gift: await markGiftRedeemed(ctx, gift, customerId, subscription.id), subscription };
}
