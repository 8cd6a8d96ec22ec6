import type { Ctx } from '../../platform/context.js';
import type { AttachmentRenderer } from '../../platform/mail/index.js';
import { customerCountry, customerStateCode, getCustomer } from '../customers/index.js';
import { getEntity } from '../entities/index.js';
import { getInvoice, type Invoice } from '../invoices/index.js';
import { invoiceFileName, renderInvoicePdf } from './invoice-pdf.js';

export type InvoicePdf = { invoice: Invoice; filename: string; content: Buffer };

/**
 * A finalized invoice prints its frozen parties. A draft has none yet, so its preview shows the
 * entity and customer as they are now — under a DRAFT mark, since finalizing may still change them.
 */
async function withPreviewParties(ctx: Ctx, invoice: Invoice): Promise<Invoice> {
  if (invoice.supplier && invoice.customer_details) return invoice;
  const entity = await getEntity(ctx, invoice.entity_id);
  const customer = await getCustomer(ctx, invoice.customer_id);
  return {
    ...invoice,
    supplier: invoice.supplier ?? {
      name: entity.name,
      legal_name: entity.legal_name,
      gstin: entity.gstin,
      state_code: entity.state_code,
      country_code: entity.country_code,
      address: entity.address ?? null,
    },
    customer_details: invoice.customer_details ?? {
      name: customer.name ?? customer.email,
      email: customer.email,
      gstin: customer.gstin,
      state_code: customerStateCode(customer),
      country_code: customerCountry(customer),
      address: customer.billing_address ?? null,
    },
  };
}

/** The invoice's PDF, rendered on demand (nothing is stored: the invoice row is the document). */
export async function getInvoicePdf(ctx: Ctx, invoiceId: string): Promise<InvoicePdf> {
  const invoice = await withPreviewParties(ctx, await getInvoice(ctx, invoiceId));
  return { invoice, filename: invoiceFileName(invoice), content: await renderInvoicePdf(invoice) };
}

/** The mail attachment renderer name under which the invoice PDF is made at send time. */
export const INVOICE_PDF_ATTACHMENT = 'invoice.pdf';

export const renderInvoiceAttachment: AttachmentRenderer = async (ctx, params) => {
  const pdf = await getInvoicePdf(ctx, String(params.invoice_id));
  return { filename: pdf.filename, contentType: 'application/pdf', content: pdf.content };
};
