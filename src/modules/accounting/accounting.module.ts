import type { KoshModule } from '../../app-deps.js';
import { registerAccountingRoutes } from './accounting.routes.js';
import { purgeStates, revokeToken, runSync } from './accounting.jobs.js';
import { REVOKE_JOB, SYNC_JOB } from './accounting.service.js';

export const accountingModule: KoshModule = {
  name: 'accounting',
  registerRoutes: registerAccountingRoutes,
  jobs: { [SYNC_JOB]: runSync, [REVOKE_JOB]: revokeToken, 'accounting.purge_oauth_states': purgeStates },
  recurring: [{ kind: 'accounting.purge_oauth_states', everyMs: 3_600_000 }],
};
