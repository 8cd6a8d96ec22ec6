import type { Ctx } from '../../platform/context.js';
import { subscriptionDiscounts } from '../../modules/coupons/index.js';
import type { InvoiceRow } from '../../modules/invoices/index.js';
import type { SubscriptionRow } from '../../modules/subscriptions/index.js';
import { computeRenewalLines } from './compute-renewal-lines.js';
import { discountSubscriptionLines } from './invoice-subscription-period.js';
import { renewalSubjectOf } from './preview-subscription-usage.js';
import { settleSubscriptionInvoices } from './renew-subscriptions.js';

/**
 * An immediate cancel's final invoice (decision 0190): the usage of the current period up to now
 * (`[current_period_start, min(now, current_period_end))`), in arrears, with no fixed fee —
 * billing_reason subscription_final, the discount in force off, customer credit applied, charged
 * automatically if the subscription is. A trial's usage is free; no usage due → no invoice (null).
 * Computed by the renewal's own computeRenewalLines, in the cancel's transaction.
 */
export async function invoiceUsageToDate(ctx: Ctx, row: SubscriptionRow): Promise<InvoiceRow | null> {
  if (row.status === 'trialing') return null;
  const end = row.current_period_end < ctx.now ? row.current_period_end : ctx.now;
  if (!(end > row.current_period_start)) return null;
  const period = { start: row.current_period_start, end };
  const subject = { ...(await renewalSubjectOf(ctx, row)), usagePeriod: period, nextPeriod: null };
  if (subject.meteredPrices.length === 0) return null;
  const [computed] = await computeRenewalLines(ctx, [subject]);
  if (computed!.length === 0) return null;
  const { lines, applied } = discountSubscriptionLines(computed!, (await subscriptionDiscounts(ctx, [row.id])).get(row.id), period.start, row.currency);
  const [invoice] = await settleSubscriptionInvoices(
    ctx,
    [
      {
        customer: subject.customer,
        currency: row.currency,
        lines,
        subscriptionId: row.id,
        billingReason: 'subscription_final',
        periodStart: period.start,
        periodEnd: period.end,
        collectionMethod: row.collection_method,
      },
    ],
    [applied],
  );
  return invoice!;
}
