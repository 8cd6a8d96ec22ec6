/** The public face of the ledger: posting entries and reading them back. */
export { Account, ACCOUNT_NAMES, type AccountCode } from './accounts.js';
export { postEntry, postEntries, creditedBy, getJournalEntry, listInvoiceJournalEntries, type Posting, type PostingLine } from './ledger.service.js';
export type { TrialBalanceRow } from './ledger.repository.js';
export { journalEntrySchema, type JournalEntry } from './ledger.schemas.js';
export type { EntryFilter, ExportRow } from './ledger.reports.repository.js';
export { toJournalEntries } from './ledger.service.js';
export { syncSecondaryLedger } from './ledger.jobs.js';
export {
  ledgerNumber,
  ledgerParts,
  accountId,
  transferCode,
  CONTROL_ACCOUNT_CODE,
  TRANSFER_FLAG_LINKED,
  type SecondaryLedgerWriter,
  type SecondaryAccount,
  type SecondaryTransfer,
  type CreateTransferResult,
} from './secondary-ledger.js';
export { trialBalanceRows, accountTotals, functionalAccountTotals, listEntries, exportPage, PostgresSecondaryLedger } from './ledger.service.js';
export { revalueMonth, revalueEndedMonth, type RevaluationEntity } from './revaluation.service.js';
export type { FxRevaluationRow } from './revaluation.repository.js';
