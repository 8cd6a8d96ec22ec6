import type { Ctx } from '../../platform/context.js';
import { subscriptionDiscounts } from '../../modules/coupons/index.js';
import { getCustomer } from '../../modules/customers/index.js';
import { markPendingChargesInvoiced, pendingChargeLine, takePendingCharges, type InvoiceRow } from '../../modules/invoices/index.js';
import type { SubscriptionRow } from '../../modules/subscriptions/index.js';
import { commitmentTrueUps } from './commitment-true-up.js';
import { computeRenewalLines } from './compute-renewal-lines.js';
import { childLine, discountSubscriptionLines, payerOf } from './invoice-subscription-period.js';
import { renewalSubjectOf } from './preview-subscription-usage.js';
import { issueInvoiceWithCredit } from '../invoices/finalize-invoice.js';

/**
 * An immediate cancel's final invoice (decision 0190): the usage of the current period up to now
 * (`[current_period_start, min(now, current_period_end))`), in arrears, with no fixed fee —
 * billing_reason subscription_final, the discount in force off, customer credit applied, charged
 * automatically if the subscription is. A trial's usage is free. Pending one-off charges of the
 * subscription (and the customer's in its currency) are its last chance: they follow as their own
 * lines and are marked invoiced (decision 0380); a minimum commitment's true-up for the days
 * used comes before them (decision 0540). Nothing due → no invoice (null).
 * Computed by the renewal's own computeRenewalLines, in the cancel's transaction.
 */
export async function invoiceUsageToDate(ctx: Ctx, row: SubscriptionRow): Promise<InvoiceRow | null> {
  const end = row.current_period_end < ctx.now ? row.current_period_end : ctx.now;
  const usageDue = row.status !== 'trialing' && end > row.current_period_start;
  const period = { start: row.current_period_start, end: usageDue ? end : row.current_period_start };
  const subject = usageDue ? { ...(await renewalSubjectOf(ctx, row)), usagePeriod: period, nextPeriod: null } : null;
  const computed = subject && subject.meteredPrices.length > 0 ? (await computeRenewalLines(ctx, [subject]))[0]! : [];
  const [charges] = await takePendingCharges(ctx, [{ customerId: row.customer_id, currency: row.currency, subscriptionId: row.id }]);
  const { lines, applied } = discountSubscriptionLines(computed, (await subscriptionDiscounts(ctx, [row.id])).get(row.id), period.start, row.currency);
  // The minimum commitment of the days used (decision 0540): prorated to the cancellation.
  const [trueUp] = subject
    ? await commitmentTrueUps(ctx, [
        { ...subject, subscription: row, period: { start: row.current_period_start, end: row.current_period_end }, until: end, lines },
      ])
    : [null];
  if (computed.length === 0 && !trueUp && charges!.length === 0) return null;
  // A child billed to its parent (decision 0550): the parent's invoice, the lines naming the child.
  const customer = subject?.customer ?? (await getCustomer(ctx, row.customer_id));
  const payer = await payerOf(ctx, customer);
  const all = [...lines, ...(trueUp ? [trueUp] : []), ...charges!.map(pendingChargeLine)];
  const invoice = await issueInvoiceWithCredit(
    ctx,
    {
      customer: payer,
      currency: row.currency,
      lines: payer.id === customer.id ? all : all.map((line) => childLine(line, customer, row.id)),
      subscriptionId: row.id,
      billingReason: 'subscription_final',
      periodStart: period.start,
      periodEnd: period.end,
      collectionMethod: row.collection_method,
    },
    applied,
  );
  await markPendingChargesInvoiced(ctx, [{ invoiceId: invoice.id, charges: charges! }]);
  return invoice;
}
