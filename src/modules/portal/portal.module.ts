import type { KoshModule } from '../../app-deps.js';
import { deleteExpiredCredentials } from './portal.repository.js';
import { registerPortalRoutes } from './portal.routes.js';

const DAY_MS = 86_400_000;

export const portalModule: KoshModule = {
  name: 'portal',
  registerRoutes: registerPortalRoutes,
  jobs: {
    'portal.purge_credentials': async (_job, env) => {
      await deleteExpiredCredentials(env.db, new Date(env.clock.now().getTime() - DAY_MS));
    },
  },
  recurring: [{ kind: 'portal.purge_credentials', everyMs: 6 * 3_600_000 }],
};
