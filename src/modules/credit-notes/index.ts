/** The public face of credit notes (gift cancellation, referrals and finalization use these). */
export {
  createCreditNote,
  setCreditNoteRefundStatus,
  markRefundNoteUnpaid,
  settleOwnInvoiceWithReturnedCredit,
  applyAvailableCredit,
  applyCreditNote,
  getCreditNote,
  listCreditNotes,
  toCreditNote,
  renderCreditNote,
  expireCreditNote,
  voidCreditNotesOfInvoice,
  creditableOnInvoice,
  creditableByLine,
} from './credit-notes.service.js';
export { payOutCreditBalance, restoreCreditBalance, unspentCreditOfInvoice } from './credit-note-refunds.js';
export type { CreditNoteRow } from './credit-notes.repository.js';
export { creditNoteSchema, type CreditNote } from './credit-notes.schemas.js';
export { applyCreditNoteBody, createCreditNoteBody, expandQuery, listCreditNotesQuery } from './credit-notes.schemas.js';
export { approveCreditNote, rejectCreditNote, voidCreditNote } from './credit-notes.service.js';
export { customersWithSpendableCredit, creditedSubtotalsOfLines, expirableCreditNotesInClockScope } from './credit-notes.service.js';
