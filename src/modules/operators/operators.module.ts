import type { KoshModule } from '../../app-deps.js';
import { PASSWORD_RESET_JOB, sendPasswordReset } from './operators.service.js';

export const operatorsModule: KoshModule = {
  name: 'operators',
  jobs: {
    // A reset request's lookup and e-mail happen here, after the request answered (decision 0223).
    [PASSWORD_RESET_JOB]: async (job, env) => {
      const { email, tenant_id } = job.payload as { email: string; tenant_id?: string };
      await sendPasswordReset(env.db, env.clock.now(), env.config.mode, { email, tenant_id }, env.config.publicUrl);
    },
  },
};
