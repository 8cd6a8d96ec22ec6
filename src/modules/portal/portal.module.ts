import type { KoshModule } from '../../app-deps.js';
import { deleteExpiredCredentials } from './portal.repository.js';
import { LOGIN_LINK_JOB, sendLoginLink } from './portal.service.js';

const DAY_MS = 86_400_000;

export const portalModule: KoshModule = {
  name: 'portal',
  jobs: {
    [LOGIN_LINK_JOB]: async (job, env) => {
      const { email, requester } = job.payload as { email: string; requester: string };
      if (!job.tenant_id) return;
      await sendLoginLink(env.db, env.clock.now(), { tenant_id: job.tenant_id, email, requester }, env.config.publicUrl);
    },
    'portal.purge_credentials': async (_job, env) => {
      await deleteExpiredCredentials(env.db, new Date(env.clock.now().getTime() - DAY_MS));
    },
  },
  recurring: [{ kind: 'portal.purge_credentials', everyMs: 6 * 3_600_000 }],
};
