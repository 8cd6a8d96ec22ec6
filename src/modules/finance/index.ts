/** The public face of finance: reconciliation runs, revenue recognition and ledger reports. */
export { reconcile, executeRun, startRun, recordsChecked, MAX_STORED_DISCREPANCIES } from './reconciliation.service.js';
export { activeSchedulesInClockScope, cumulativeTarget, periodDays, recognizeDueRevenue, revenueReport } from './revenue.service.js';
export { trialBalance } from './reports.service.js';
export {
  exportQuery,
  journalEntriesQuery,
  ledgerAccountSchema,
  reconciliationRunSchema,
  reconciliationReportSchema,
  revenueQuery,
  revenueSchema,
  startRunBody,
  trialBalanceQuery,
  trialBalanceSchema,
} from './finance.schemas.js';
export { getLatestRun, getRun, listReconciliationRuns, requestRun } from './reconciliation.service.js';
export { chartOfAccounts, exportGeneralLedger, listJournalEntries, rangeOf, reportZone } from './reports.service.js';
export { tdsReport, tdsReportCsvRows, tdsReportQuery, tdsReportSchema, TDS_REPORT_CSV_COLUMNS } from './tds-report.service.js';
