import type { Ctx } from '../../platform/context.js';
import { applyAvailableCredit } from '../../modules/credit-notes/index.js';
import { finalizeInvoice, getInvoiceRow, type InvoiceRow } from '../../modules/invoices/index.js';
import { scheduleAutomaticCharges } from '../collections/collect-invoice-payment.js';

/**
 * Finalizes an invoice and spends the customer's available credit on it (soonest-expiring credit
 * note first), in the caller's transaction. The API, the billing run and every flow that issues an
 * invoice use this, so credit is applied the same way everywhere. A charge_automatically invoice
 * still due afterwards gets its charge job (collections), which runs after this transaction commits.
 */
export async function finalizeInvoiceWithCredit(ctx: Ctx, invoiceId: string): Promise<InvoiceRow> {
  const finalized = await finalizeInvoice(ctx, invoiceId);
  const applied = await applyAvailableCredit(ctx, finalized);
  const row = applied > 0 ? await getInvoiceRow(ctx, invoiceId) : finalized;
  await scheduleAutomaticCharges(ctx, [row]);
  return row;
}
