import type { Ctx } from '../../platform/context.js';
import { voidCreditNotesOfInvoice } from '../../modules/credit-notes/index.js';
import { getInvoiceRow, voidInvoice, type InvoiceRow } from '../../modules/invoices/index.js';

/**
 * Voids an invoice together with the credit notes tied to it (docs/decisions/0020): the void
 * reverses the whole invoice, so a note that reversed part of it must not stand beside it. Every
 * path that voids an invoice (the API, gift cancellation) comes through here.
 *
 * The invoice row is locked first, so a note being created or approved for it waits and then
 * sees it void. An invoice with payments or credit applied is refused (voidInvoice); so is one
 * whose notes have moved money (spent elsewhere, or expired) — see voidCreditNotesOfInvoice.
 */
export async function voidInvoiceWithCreditNotes(ctx: Ctx, id: string): Promise<InvoiceRow> {
  const invoice = await getInvoiceRow(ctx, id, true);
  if (invoice.status !== 'draft' && invoice.amount_paid === 0 && invoice.amount_credited === 0) await voidCreditNotesOfInvoice(ctx, id);
  return voidInvoice(ctx, id);
}
