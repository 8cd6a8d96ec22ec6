/** The public face of documents: printable renderings of billing records, and how they look. */
export { INVOICE_PDF_ATTACHMENT, getCreditNotePdf, getInvoicePdf, renderInvoiceAttachment, type InvoicePdf } from './documents.service.js';
export { invoiceFileName, invoiceHeading, renderInvoicePdf, type InvoiceHeading } from './invoice-pdf.js';
export { formatDate, formatRate, indianNumberInWords, rupeesInWords } from './format.js';
export { invoicePdfResponse, sendInvoiceResponse } from './documents.schemas.js';
