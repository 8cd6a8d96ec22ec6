import type { Ctx } from '../../platform/context.js';
import { errors } from '../../platform/errors.js';
import { applyAdvances } from '../../modules/advances/index.js';
import { applyAvailableCredit } from '../../modules/credit-notes/index.js';
import { finalizeInvoice, getInvoiceRow, type InvoiceRow } from '../../modules/invoices/index.js';
import { scheduleAutomaticCharges } from '../collections/collect-invoice-payment.js';

/**
 * Finalizes an invoice and spends the customer's balance on it — available credit (soonest-expiring
 * credit note first), then advances (oldest first, their GST adjusted: decision 0280) — in the
 * caller's transaction. The API, the billing run and every flow that issues an invoice use this, so
 * the balance is applied the same way everywhere. A charge_automatically invoice still due
 * afterwards gets its charge job (collections), which runs after this transaction commits.
 */
export async function finalizeInvoiceWithCredit(ctx: Ctx, invoiceId: string): Promise<InvoiceRow> {
  const finalized = await finalizeInvoice(ctx, invoiceId);
  const applied = await spendCustomerBalance(ctx, finalized);
  const row = applied > 0 ? await getInvoiceRow(ctx, invoiceId) : finalized;
  await scheduleAutomaticCharges(ctx, [row]);
  return row;
}

/** Credit notes first (they are the customer's already), then advances; answers how much was applied. */
export async function spendCustomerBalance(ctx: Ctx, invoice: InvoiceRow): Promise<number> {
  const credited = await applyAvailableCredit(ctx, invoice);
  const after = credited > 0 ? await getInvoiceRow(ctx, invoice.id) : invoice;
  return credited + (await applyAdvances(ctx, after));
}

/**
 * `POST /v1/invoices/{id}/apply-balance`: spends what the customer holds (credit notes, advances)
 * on an open invoice now — e.g. an advance received after the invoice was issued.
 */
export async function applyCustomerBalance(ctx: Ctx, invoiceId: string): Promise<InvoiceRow> {
  const invoice = await getInvoiceRow(ctx, invoiceId, true);
  if (invoice.status !== 'open' && invoice.status !== 'uncollectible') {
    throw errors.conflict(`cannot apply a balance to an invoice whose status is ${invoice.status}`, 'invalid_invoice_state');
  }
  const applied = await spendCustomerBalance(ctx, invoice);
  return applied > 0 ? getInvoiceRow(ctx, invoiceId) : invoice;
}
