import type { KoshModule } from '../../app-deps.js';
import { registerAttachmentRenderer } from '../../platform/mail/index.js';
import { INVOICE_PDF_ATTACHMENT, renderInvoiceAttachment } from './documents.service.js';

export const documentsModule: KoshModule = {
  name: 'documents',
  // The invoice mail carries only the invoice id: the worker renders the PDF when it sends.
  init: (deps) => {
    registerAttachmentRenderer(deps.scope, INVOICE_PDF_ATTACHMENT, renderInvoiceAttachment);
  },
};
