import type { Ctx } from '../../platform/context.js';
import { cancelEinvoice, getEinvoice, type Einvoice, type EinvoiceDocumentType } from '../../modules/einvoicing/index.js';
import { voidInvoiceWithCreditNotes } from '../invoices/void-invoice.js';

/**
 * POST /v1/{invoices|credit-notes}/{id}/einvoice/cancel. An invoice's IRN is canceled together
 * with the invoice (DESIGN §18): one transaction voids both, or neither when the invoice cannot
 * be voided (its period closed, payments applied…).
 */
export async function cancelEinvoiceOfDocument(ctx: Ctx, type: EinvoiceDocumentType, id: string, reasonCode: number, remarks: string): Promise<Einvoice> {
  if (type === 'credit_note') return cancelEinvoice(ctx, type, id, reasonCode, remarks);
  await voidInvoiceWithCreditNotes(ctx, id, { required: true, reasonCode, remarks });
  return getEinvoice(ctx, 'invoice', id);
}
