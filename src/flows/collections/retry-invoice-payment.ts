import type { Ctx } from '../../platform/context.js';
import { enqueueJobs } from '../../platform/jobs/jobs.js';
import { defaultPaymentMethod, pendingAttemptOf } from '../../modules/collections/index.js';
import type { PaymentRetrier } from '../../modules/dunning/index.js';
import { topUpPaymentMethods } from '../../modules/credits/index.js';
import { CREDIT_TOP_UP_REASON, getInvoiceRow } from '../../modules/invoices/index.js';
import { CHARGE_INVOICES_JOB } from './collect-invoice-payment.js';

/**
 * A dunning `retry_payment` step (DESIGN §12): queues one more automatic charge of the invoice on
 * the customer's default payment method (an auto top-up's invoice: on the method its setting
 * names, decision 0410, even when the customer has no default), inside the step's transaction; the charge job makes the
 * gateway call after commit, with its own attempt and idempotency key. Only invoices that are
 * charged automatically are retried: a `send_invoice` customer pays by their own hand.
 */
export const retryInvoicePayment: PaymentRetrier = async (ctx: Ctx, invoiceId: string) => {
  const invoice = await getInvoiceRow(ctx, invoiceId);
  if (invoice.collection_method !== 'charge_automatically')
    return { outcome: 'skipped', detail: 'the invoice is paid by the customer (send_invoice), not charged' };
  if (invoice.status !== 'open' || invoice.amount_due <= 0) return { outcome: 'skipped', detail: `the invoice is ${invoice.status}` };
  // An auto top-up that names its method is charged on that method only (decision 0410), whether
  // or not the customer has a default one: the charge job picks it, or records why it cannot
  // (payment_method_unavailable) — docs/decisions/0570.
  const named = invoice.billing_reason === CREDIT_TOP_UP_REASON ? (await topUpPaymentMethods(ctx, [invoice.id])).get(invoice.id) : undefined;
  if (!named && !(await defaultPaymentMethod(ctx.tx, ctx.tenantId, invoice.customer_id)))
    return { outcome: 'skipped', detail: 'the customer has no saved payment method' };
  if (await pendingAttemptOf(ctx.tx, ctx.tenantId, invoice.id)) return { outcome: 'skipped', detail: 'a payment attempt is already in progress' };
  await enqueueJobs(ctx.tx, ctx.now, [{ kind: CHARGE_INVOICES_JOB, tenantId: ctx.tenantId, payload: { invoice_ids: [invoice.id] } }]);
  return { outcome: 'succeeded', detail: named ? `charge queued on the auto top-up's payment method ${named}` : 'charge queued on the default payment method' };
};
