import type { KoshModule } from '../../app-deps.js';
import { purgeStates, revokeToken, runSync } from './accounting.jobs.js';
import { REVOKE_JOB, SYNC_JOB } from './accounting.service.js';

export const accountingModule: KoshModule = {
  name: 'accounting',
  jobs: { [SYNC_JOB]: runSync, [REVOKE_JOB]: revokeToken, 'accounting.purge_oauth_states': purgeStates },
  recurring: [{ kind: 'accounting.purge_oauth_states', everyMs: 3_600_000 }],
};
