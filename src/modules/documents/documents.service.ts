import type { ReadCtx } from '../../platform/context.js';
import type { AttachmentRenderer } from '../../platform/mail/index.js';
import { customerCountry, customerStateCode, getCustomer } from '../customers/index.js';
import { getCreditNote } from '../credit-notes/index.js';
import { einvoicesOf, type Einvoice } from '../einvoicing/index.js';
import { findEntity, getEntity } from '../entities/index.js';
import { getInvoice, type Invoice } from '../invoices/index.js';
import { renderCreditNotePdf } from './credit-note-pdf.js';
import { invoiceFileName, renderInvoicePdf, type PrintedEinvoice } from './invoice-pdf.js';

export type InvoicePdf = { invoice: Invoice; filename: string; content: Buffer };

/**
 * A finalized invoice prints its frozen parties. A draft has none yet, so its preview shows the
 * entity and customer as they are now — under a DRAFT mark, since finalizing may still change them.
 */
async function withPreviewParties(ctx: ReadCtx, invoice: Invoice): Promise<Invoice> {
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

/** An IRN worth printing: generated, or canceled (printed as such). */
function printable(einvoice: Einvoice | undefined): PrintedEinvoice | null {
  if (!einvoice?.irn || (einvoice.status !== 'generated' && einvoice.status !== 'canceled')) return null;
  return { irn: einvoice.irn, ack_no: einvoice.ack_no, ack_date: einvoice.ack_date, signed_qr_code: einvoice.signed_qr_code, status: einvoice.status };
}

/** The entity's time zone, in which every date on its documents is printed. */
async function timeZoneOf(ctx: ReadCtx, entityId: string): Promise<string | undefined> {
  return (await findEntity(ctx.tx, ctx.tenantId, entityId))?.time_zone;
}

/** The invoice's PDF, rendered on demand (nothing is stored: the invoice row is the document). */
export async function getInvoicePdf(ctx: ReadCtx, invoiceId: string): Promise<InvoicePdf> {
  const invoice = await withPreviewParties(ctx, await getInvoice(ctx, invoiceId));
  const einvoice = printable((await einvoicesOf(ctx, 'invoice', [invoice.id])).get(invoice.id));
  const timeZone = await timeZoneOf(ctx, invoice.entity_id);
  return { invoice, filename: invoiceFileName(invoice), content: await renderInvoicePdf(invoice, { timeZone, einvoice }) };
}

/**
 * A credit note as a GST credit note (CGST Rules, rule 53): the original invoice's number and date,
 * the reason, the lines and their tax, the parties as the invoice froze them.
 */
export async function getCreditNotePdf(ctx: ReadCtx, creditNoteId: string): Promise<{ filename: string; content: Buffer }> {
  const note = await getCreditNote(ctx, creditNoteId);
  const invoice = note.invoice_id ? await withPreviewParties(ctx, await getInvoice(ctx, note.invoice_id)) : null;
  const entity = await getEntity(ctx, note.entity_id ?? invoice?.entity_id ?? '');
  const customer = invoice?.customer_details ?? null;
  const einvoice = printable((await einvoicesOf(ctx, 'credit_note', [note.id])).get(note.id));
  const supplier = invoice?.supplier ?? {
    name: entity.name,
    legal_name: entity.legal_name,
    gstin: entity.gstin,
    state_code: entity.state_code,
    country_code: entity.country_code,
    address: entity.address ?? null,
  };
  const buyer =
    customer ??
    (await (async () => {
      const c = await getCustomer(ctx, note.customer_id);
      return {
        name: c.name ?? c.email,
        email: c.email,
        gstin: c.gstin,
        state_code: customerStateCode(c),
        country_code: customerCountry(c),
        address: c.billing_address ?? null,
      };
    })());
  const content = await renderCreditNotePdf({ note, invoice, supplier, customer: buyer, timeZone: entity.time_zone, einvoice });
  return { filename: `${(note.number ?? `draft-${note.id}`).replace(/[^A-Za-z0-9._-]/g, '-')}.pdf`, content };
}

/** The mail attachment renderer name under which the invoice PDF is made at send time. */
export const INVOICE_PDF_ATTACHMENT = 'invoice.pdf';

export const renderInvoiceAttachment: AttachmentRenderer = async (ctx, params) => {
  const pdf = await getInvoicePdf(ctx, String(params.invoice_id));
  return { filename: pdf.filename, contentType: 'application/pdf', content: pdf.content };
};
