/** The public face of finance: reconciliation runs, revenue recognition and ledger reports. */
export { reconcile, executeRun, startRun, recordsChecked, MAX_STORED_DISCREPANCIES } from './reconciliation.service.js';
export { cumulativeTarget, periodDays, recognizeDueRevenue, revenueReport } from './revenue.service.js';
export { trialBalance } from './reports.service.js';
