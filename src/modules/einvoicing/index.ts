/** The public face of e-invoicing (DESIGN §15): IRN records for PDFs and GST returns. */
export { einvoicesOf, einvoicesDueForReport, getEinvoice, irpDocumentOf, toEinvoice, type Einvoice } from './einvoicing.service.js';
export { computeIrn } from './irn.js';
export { buildIrpDocument, validateIrpDocument, rupees, type IrpDocument, type IrpSource } from './irp-document.js';
export { sandboxPublicKey } from './irp-sandbox.js';
export { type EinvoiceDocumentType } from './einvoicing.tables.js';
export { cancelEinvoiceBody, einvoiceSchema, irnCancelReasonCode, reportDueQuery, reportDueSchema, retryEinvoiceBody } from './einvoicing.schemas.js';
export { cancelEinvoice, einvoiceOfDocumentForUpdate, irnOfInvoiceForVoid, retryEinvoice } from './einvoicing.service.js';
