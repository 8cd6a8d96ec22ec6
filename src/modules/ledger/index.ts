/** The public face of the ledger: posting entries and reading them back. */
export { Account, ACCOUNT_NAMES, type AccountCode } from './accounts.js';
export { postEntry, postEntries, getJournalEntry, listInvoiceJournalEntries, type Posting, type PostingLine } from './ledger.service.js';
export { accountBalance, trialBalanceRows, type TrialBalanceRow } from './ledger.repository.js';
export { journalEntrySchema, type JournalEntry } from './ledger.schemas.js';
