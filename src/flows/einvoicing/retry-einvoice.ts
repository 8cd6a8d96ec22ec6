import type { Ctx } from '../../platform/context.js';
import { errors } from '../../platform/errors.js';
import { getCreditNote } from '../../modules/credit-notes/index.js';
import { getCustomer } from '../../modules/customers/index.js';
import { einvoiceOfDocumentForUpdate, retryEinvoice, type EinvoiceDocumentType, type Einvoice } from '../../modules/einvoicing/index.js';
import { correctCustomerDetails, customerSnapshot, getInvoice, type PartySnapshot } from '../../modules/invoices/index.js';

/**
 * The corrected buyer must leave the supply as it was taxed: an export stays a buyer abroad; a
 * B2B supply keeps a GSTIN of the invoice's place of supply (a GSTIN of another state would have
 * changed CGST/SGST into IGST — that needs a credit note and a new invoice, not a resubmission).
 */
function supplyProblem(invoice: { tax_type: string; place_of_supply: string | null }, buyer: PartySnapshot): string | null {
  if (invoice.tax_type === 'export') {
    return (buyer.country_code ?? 'IN').toUpperCase() === 'IN' ? 'the invoice is an export; the customer is now in India' : null;
  }
  if (!buyer.gstin) return 'the customer has no GSTIN any more: the invoice was a B2B supply';
  if (invoice.place_of_supply && buyer.gstin.slice(0, 2) !== invoice.place_of_supply) {
    return `the customer's GSTIN is of state ${buyer.gstin.slice(0, 2)}, the invoice's place of supply is ${invoice.place_of_supply}`;
  }
  return null;
}

/**
 * POST /v1/{invoices|credit-notes}/{id}/einvoice/retry: resubmits a failed registration. With
 * refresh_buyer, the customer's current GSTIN, name and address replace the invoice's frozen
 * buyer details first (a credit note's buyer is its invoice's) — unless the invoice is already
 * registered with the IRP, whose registered details then stand for its notes too.
 */
export async function retryEinvoiceOfDocument(ctx: Ctx, type: EinvoiceDocumentType, documentId: string, refreshBuyer: boolean): Promise<Einvoice> {
  const current = await einvoiceOfDocumentForUpdate(ctx, type, documentId);
  if (!current || current.status !== 'failed') return retryEinvoice(ctx, type, documentId); // its 409
  // A void invoice is never registered: the IRN would be live for a supply that no longer stands.
  if (type === 'invoice' && (await getInvoice(ctx, documentId)).status === 'void') {
    throw errors.conflict('the invoice is void: it is not registered with the IRP', 'invoice_void');
  }
  if (refreshBuyer) {
    const invoiceId = type === 'invoice' ? documentId : (await getCreditNote(ctx, documentId)).invoice_id;
    if (!invoiceId) throw errors.conflict('the credit note adjusts no invoice', 'einvoice_not_failed');
    const invoiceRegistration = type === 'credit_note' ? await einvoiceOfDocumentForUpdate(ctx, 'invoice', invoiceId) : null;
    if (!invoiceRegistration || (invoiceRegistration.status !== 'generated' && invoiceRegistration.status !== 'canceled')) {
      const invoice = await getInvoice(ctx, invoiceId);
      const buyer = customerSnapshot(await getCustomer(ctx, invoice.customer_id));
      const problem = supplyProblem(invoice, buyer);
      if (problem) throw errors.conflict(`the corrected buyer would change the supply: ${problem}`, 'einvoice_buyer_changes_supply');
      await correctCustomerDetails(ctx, invoiceId, buyer);
    }
  }
  return retryEinvoice(ctx, type, documentId);
}
