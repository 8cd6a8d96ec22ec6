import type { KoshModule } from '../../app-deps.js';
import { revalueForeignReceivables, syncSecondaryLedgers } from './ledger.jobs.js';

export const ledgerModule: KoshModule = {
  name: 'ledger',
  jobs: { 'ledger.secondary_sync': syncSecondaryLedgers, 'ledger.fx_revaluation': revalueForeignReceivables },
  // Committed entries reach the secondary ledger within half a minute of a running worker.
  // Month-end revaluation of foreign receivables: hourly, doing work only around a month's turn.
  recurring: [
    { kind: 'ledger.secondary_sync', everyMs: 30_000 },
    { kind: 'ledger.fx_revaluation', everyMs: 3_600_000 },
  ],
};
