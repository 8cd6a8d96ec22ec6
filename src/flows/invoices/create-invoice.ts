import type { Ctx } from '../../platform/context.js';
import { discountLines, recordInvoiceDiscounts, redeemCoupon } from '../../modules/coupons/index.js';
import { getCustomer } from '../../modules/customers/index.js';
import { createInvoiceFromApi, resolveApiLines, withInvoiceCurrency, type CreateInvoiceRequest, type InvoiceRow } from '../../modules/invoices/index.js';

/**
 * POST /v1/invoices as a draft (without `currency`: its entity's). With `coupon` (id or code): one redemption of it, for this invoice
 * only (its duration is for subscriptions); its discount is taken off the lines before GST
 * (applyDiscounts: plan-restricted coupons only off those plans' lines; 409 coupon_not_applicable
 * when no line is on one of them, or the coupon's amount is in another currency).
 */
export async function createInvoice(ctx: Ctx, request: CreateInvoiceRequest): Promise<InvoiceRow> {
  const input = await withInvoiceCurrency(ctx, request);
  if (!input.coupon) return createInvoiceFromApi(ctx, input);
  const customer = await getCustomer(ctx, input.customer_id);
  const lines = await resolveApiLines(ctx, input);
  const planIds = [...new Set(lines.flatMap((l) => (l.plan_id ? [l.plan_id] : [])))];
  const redeemed = await redeemCoupon(ctx, input.coupon, { customerId: customer.id, currency: input.currency, planIds });
  const discounted = discountLines(lines, [redeemed]);
  const draft = await createInvoiceFromApi(ctx, input, discounted.lines);
  await recordInvoiceDiscounts(ctx, draft.id, discounted.applied);
  return draft;
}
