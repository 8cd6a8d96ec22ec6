import type { KoshModule } from '../../app-deps.js';
import { passwordResetBody } from './operators.schemas.js';
import { PASSWORD_RESET_JOB, sendPasswordReset } from './operators.service.js';

export const operatorsModule: KoshModule = {
  name: 'operators',
  jobs: {
    // A reset request's lookup and e-mail happen here, after the request answered (decision 0223).
    [PASSWORD_RESET_JOB]: async (job, env) =>
      sendPasswordReset(env.db, env.clock.now(), env.config.mode, passwordResetBody.parse(job.payload), env.config.publicUrl),
  },
};
