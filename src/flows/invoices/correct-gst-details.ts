import type { Ctx } from '../../platform/context.js';
import { errors } from '../../platform/errors.js';
import { getEntity } from '../../modules/entities/index.js';
import { b2clLimitPaise } from '../../modules/gst-returns/index.js';
import { correctGstParticulars, getInvoiceRow, type CorrectGstDetailsBody, type InvoiceRow } from '../../modules/invoices/index.js';
import { localDay } from '../../modules/tax/index.js';

const changesSupply = (problem: string) =>
  errors.conflict(`the correction would change the supply: ${problem}; issue a credit note and a new invoice`, 'gst_correction_changes_supply');

/**
 * The place of supply may be corrected only where the correction leaves the tax and the GSTR-1
 * table as they were (decision 0610): an inter-state invoice to an unregistered person, small
 * enough for B2CS, moved to another state (IGST stays IGST). A B2B invoice's place of supply
 * follows its buyer's GSTIN (the e-invoice retry corrects that); a B2CL invoice's amendment
 * (`b2cla`) carries its original place of supply only, so the format has no place for a new one.
 */
function placeOfSupplyProblem(invoice: InvoiceRow, pos: string): string | null {
  if (invoice.customer_details?.gstin) return "the buyer is registered: the place of supply follows the buyer's GSTIN";
  if (invoice.tax_type !== 'inter_state') return `the invoice is ${invoice.tax_type || 'outside GST'}, not an inter-state supply`;
  if (pos === invoice.supplier?.state_code) return `the supplier is in state ${pos}: the supply would become intra-state (CGST and SGST, not IGST)`;
  if ((invoice.inr_total ?? invoice.total) > b2clLimitPaise(invoice.issued_at!)) {
    return 'the invoice is a large one to an unregistered person (B2CL), whose amendment keeps the original place of supply';
  }
  return null;
}

/**
 * POST /v1/invoices/{id}/gst-details: corrects an issued invoice's place of supply (B2CS) or
 * records an export's shipping bill. A month already closed (its GSTR-3B filed) declares the
 * correction in the next GSTR-1's amendment tables (`b2csa`, `expa`); an open one just reads the
 * corrected invoice.
 */
export async function correctGstDetails(ctx: Ctx, id: string, body: CorrectGstDetailsBody): Promise<InvoiceRow> {
  const invoice = await getInvoiceRow(ctx, id);
  if (invoice.number === null || invoice.issued_at === null) throw errors.conflict('the invoice is a draft: edit the draft instead', 'invalid_invoice_state');
  if (invoice.status === 'void') throw errors.conflict('the invoice is void', 'invoice_void');
  if (body.place_of_supply !== undefined && body.place_of_supply !== invoice.place_of_supply) {
    const problem = placeOfSupplyProblem(invoice, body.place_of_supply);
    if (problem) throw changesSupply(problem);
  }
  if (body.shipping_bill !== undefined) {
    if (invoice.tax_type !== 'export')
      throw changesSupply(`the invoice is ${invoice.tax_type || 'outside GST'}, not an export: only exports have a shipping bill`);
    const issued = localDay(invoice.issued_at, (await getEntity(ctx, invoice.entity_id)).time_zone);
    // The offline tool refuses a shipping bill dated before its invoice.
    if (body.shipping_bill.date < issued) throw errors.invalidField('shipping_bill.date', `must not be before the invoice's date (${issued})`);
  }
  return correctGstParticulars(ctx, id, { place_of_supply: body.place_of_supply, shipping_bill: body.shipping_bill });
}
