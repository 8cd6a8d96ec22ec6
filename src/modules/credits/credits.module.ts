import type { KoshModule } from '../../app-deps.js';
import { onEvent } from '../../platform/events/events.js';
import { EXPIRE_GRANTS_JOB, expireDueCreditGrants, followTopUpInvoices } from './credits.jobs.js';
import { subscription } from '../events/index.js';

export const creditsModule: KoshModule = {
  name: 'credits',
  jobs: { [EXPIRE_GRANTS_JOB]: expireDueCreditGrants },
  recurring: [{ kind: EXPIRE_GRANTS_JOB, everyMs: 15 * 60_000 }],
  init: () => onEvent(followTopUpInvoices, subscription('credits.top_up_grants')),
};
