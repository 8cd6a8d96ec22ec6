/** The public face of invoicing: what payments, credit notes, subscriptions and flows use. */
export {
  applyToInvoice,
  assertTdsAllowed,
  correctCustomerDetails,
  correctGstParticulars,
  createDraftInvoice,
  CREDIT_TOP_UP_REASON,
  discountDraftLines,
  customerSnapshot,
  finalizeInvoice,
  getInvoice,
  listInvoices,
  markInvoiceUncollectible,
  previewInvoice,
  toInvoice,
  voidInvoice,
  type DraftLine,
  type DraftInvoiceInput,
} from './invoices.service.js';
export type { InvoiceRow, InvoiceLineRow } from './invoices.repository.js';

export { invoiceSchema, upcomingInvoiceSchema, type CreateInvoiceBody, type CreateInvoiceRequest, type Invoice } from './invoices.schemas.js';
export type { InvoiceStatus, PartySnapshot, ShippingBill } from './invoices.tables.js';

export { issueInvoices } from './invoices.batch.js';
export { correctGstDetailsBody, createInvoiceBody, listInvoicesQuery, recordTdsBody, type CorrectGstDetailsBody } from './invoices.schemas.js';
export {
  certificateFormOn,
  LEGACY_SECTIONS,
  NEW_ACT_FROM,
  PAYMENT_CODES,
  resolveTdsSection,
  TdsSectionError,
  parseTdsCodeTable,
  tdsCodeEntrySchema,
  tdsCodeTableProblems,
  type ResolvedTdsSection,
  type TdsCodeEntry,
  type TdsAct,
} from './tds-sections.js';
export { createInvoiceFromApi, resolveApiLines, withInvoiceCurrency } from './invoices.service.js';
export {
  applyPaymentsToInvoices,
  getInvoiceRow,
  getInvoiceRows,
  renderInvoice,
  renderInvoices,
  setLastPaymentError,
  setLastPaymentErrors,
} from './invoices.collect.js';
export {
  draftInvoicesOfEntity,
  insertTdsCertificate,
  invoiceCurrenciesOfCustomer,
  invoicedSince,
  linesOfInvoices,
  pricedLinesWithin,
  unsettledSubscriptionInvoices,
  nextInvoiceDueInClockScope,
  delinquencyMovesInClockScope,
  tenantsWithOverdueSubscriptionInvoices,
} from './invoices.service.js';
export {
  addPendingCharge,
  deletePendingCharge,
  listPendingCharges,
  markPendingChargesInvoiced,
  pendingChargeLine,
  takePendingCharges,
  toPendingCharge,
  type ChargeTaker,
  type PendingChargeRow,
} from './pending-charges.js';
export { addPendingChargeBody, pendingChargeSchema, type AddPendingChargeBody } from './pending-charges.schemas.js';
