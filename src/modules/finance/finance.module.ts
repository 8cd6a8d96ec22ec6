import type { KoshModule } from '../../app-deps.js';
import { onEvent } from '../../platform/events/events.js';
import { recognizeRevenue, runReconciliation, scheduleDailyReconciliation } from './finance.jobs.js';
import { RUN_JOB } from './reconciliation.service.js';
import { revenueListener } from './revenue.service.js';
import { subscription } from '../events/index.js';

export const financeModule: KoshModule = {
  name: 'finance',
  jobs: {
    [RUN_JOB]: runReconciliation,
    'finance.reconciliation_daily': scheduleDailyReconciliation,
    'finance.recognize_revenue': recognizeRevenue,
  },
  recurring: [
    { kind: 'finance.reconciliation_daily', everyMs: 24 * 3_600_000 },
    // Recognition is by whole days; running hourly recognizes each day soon after it ends.
    { kind: 'finance.recognize_revenue', everyMs: 3_600_000 },
  ],
  // Deferral and its adjustments commit with the finalization, credit note, void or cancellation.
  init: () => onEvent(revenueListener, subscription('finance.revenue')),
};
