import type { KoshModule } from '../../app-deps.js';
import { onMailSent, registerAttachmentRenderer } from '../../platform/mail/index.js';
import { INVOICE_SENT_HOOK, recordInvoiceSent } from '../../flows/send-invoice.js';
import { registerDocumentRoutes } from './documents.routes.js';
import { INVOICE_PDF_ATTACHMENT, renderInvoiceAttachment } from './documents.service.js';

export const documentsModule: KoshModule = {
  name: 'documents',
  registerRoutes: registerDocumentRoutes,
  // The invoice mail carries only the invoice id: the worker renders the PDF when it sends, and
  // records invoice.sent once the SMTP server has accepted the message.
  init: () => {
    registerAttachmentRenderer(INVOICE_PDF_ATTACHMENT, renderInvoiceAttachment);
    onMailSent(INVOICE_SENT_HOOK, recordInvoiceSent);
  },
};
