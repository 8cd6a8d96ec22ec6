import type { KoshModule } from '../../app-deps.js';
import { onEvent } from '../../platform/events/events.js';
import { NOTIFY_JOB, TRIAL_SCAN_JOB, notificationJob, queueCustomerNotifications, scanEndingTrials } from './notify-customers.js';
import { subscription } from '../../modules/events/index.js';

/** Customer notifications: the listener queues a job per enabled notification; the jobs render and queue the mail. */
export const notificationsWiring: KoshModule = {
  name: 'notifications',
  jobs: {
    [NOTIFY_JOB]: notificationJob,
    [TRIAL_SCAN_JOB]: async (_job, env) => {
      const sent = await scanEndingTrials(env);
      if (sent > 0) env.logger.info({ sent }, 'trial-ending notices queued');
    },
  },
  recurring: [{ kind: TRIAL_SCAN_JOB, everyMs: 60 * 60_000 }],
  init: () => onEvent(queueCustomerNotifications, subscription('notifications')),
};
