import type { Ctx } from '../../platform/context.js';
import { errors } from '../../platform/errors.js';
import { addPendingCharge, type AddPendingChargeBody, type PendingChargeRow } from '../../modules/invoices/index.js';
import { getSubscriptionRow } from '../../modules/subscriptions/index.js';
import { getTenant } from '../../modules/tenants/index.js';
import { customerNow } from '../test-clocks/clock-time.js';

/**
 * POST /v1/customers/{id}/pending-charges. With `subscription_id` the charge waits for that
 * subscription's next invoice, so it must be the customer's, still running, and in its currency
 * (a charge in another currency could never be taken). A customer on a test clock records it at
 * the clock's time.
 */
export async function addCustomerPendingCharge(actionCtx: Ctx, customerId: string, body: AddPendingChargeBody): Promise<PendingChargeRow> {
  const ctx = await customerNow(actionCtx, customerId);
  let currency = body.currency;
  if (body.subscription_id) {
    const subscription = await getSubscriptionRow(ctx, body.subscription_id);
    if (subscription.customer_id !== customerId) throw errors.invalidField('subscription_id', 'is not a subscription of this customer');
    if (subscription.status === 'canceled') {
      throw errors.conflict(`subscription ${subscription.id} is ${subscription.status}: it has no next invoice`, 'subscription_not_running');
    }
    if (currency !== undefined && currency !== subscription.currency) {
      throw errors.invalidField('currency', `must be the subscription's currency, ${subscription.currency}`);
    }
    currency = subscription.currency;
  }
  return addPendingCharge(ctx, {
    customerId,
    subscriptionId: body.subscription_id ?? null,
    description: body.description,
    currency: currency ?? (await getTenant(ctx)).base_currency,
    unitAmount: body.amount,
    quantity: body.quantity,
    hsnCode: body.hsn_code,
    taxRateBp: body.tax_rate_bp ?? null,
  });
}
