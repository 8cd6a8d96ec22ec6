import type { Ctx } from '../../platform/context.js';
import { discountLines, recordInvoiceDiscounts, redeemCoupon } from '../../modules/coupons/index.js';
import { getCustomer } from '../../modules/customers/index.js';
import {
  createInvoiceFromApi,
  markPendingChargesInvoiced,
  pendingChargeLine,
  resolveApiLines,
  takePendingCharges,
  withInvoiceCurrency,
  type CreateInvoiceRequest,
  type InvoiceRow,
} from '../../modules/invoices/index.js';

/**
 * POST /v1/invoices as a draft (without `currency`: its entity's). With `coupon` (id or code): one redemption of it, for this invoice
 * only (its duration is for subscriptions); its discount is taken off the lines before GST
 * (applyDiscounts: plan-restricted coupons only off those plans' lines; 409 coupon_not_applicable
 * when no line is on one of them, or the coupon's amount is in another currency).
 *
 * Unless `include_pending_charges` is false, the customer's pending one-off charges in the
 * invoice's currency (not those waiting for a subscription) follow the request's lines, each its
 * own line taxed by its own HSN/SAC, undiscounted, and are marked invoiced in this transaction.
 */
export async function createInvoice(ctx: Ctx, request: CreateInvoiceRequest): Promise<InvoiceRow> {
  const input = await withInvoiceCurrency(ctx, request);
  const customer = await getCustomer(ctx, input.customer_id);
  const [charges] =
    input.include_pending_charges === false
      ? [[]]
      : await takePendingCharges(ctx, [{ customerId: customer.id, currency: input.currency, subscriptionId: null }]);
  const chargeLines = charges!.map(pendingChargeLine);
  let draft: InvoiceRow;
  if (!input.coupon) {
    draft = await createInvoiceFromApi(ctx, input, chargeLines.length > 0 ? [...(await resolveApiLines(ctx, input)), ...chargeLines] : undefined);
  } else {
    const lines = await resolveApiLines(ctx, input);
    const planIds = [...new Set(lines.flatMap((l) => (l.plan_id ? [l.plan_id] : [])))];
    const redeemed = await redeemCoupon(ctx, input.coupon, { customerId: customer.id, currency: input.currency, planIds });
    const discounted = discountLines(lines, [redeemed]);
    draft = await createInvoiceFromApi(ctx, input, [...discounted.lines, ...chargeLines]);
    await recordInvoiceDiscounts(ctx, draft.id, discounted.applied);
  }
  await markPendingChargesInvoiced(ctx, [{ invoiceId: draft.id, charges: charges! }]);
  return draft;
}
