import type { KoshModule } from '../../app-deps.js';
import { syncSecondaryLedgers } from './ledger.jobs.js';

export const ledgerModule: KoshModule = {
  name: 'ledger',
  jobs: { 'ledger.secondary_sync': syncSecondaryLedgers },
  // Committed entries reach the secondary ledger within half a minute of a running worker.
  recurring: [{ kind: 'ledger.secondary_sync', everyMs: 30_000 }],
};
