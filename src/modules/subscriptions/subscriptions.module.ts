import type { KoshModule } from '../../app-deps.js';
import { BILLING_RUN_JOB, billingRunJob } from './subscriptions.jobs.js';
import { registerSubscriptionRoutes } from './subscriptions.routes.js';

export const subscriptionsModule: KoshModule = {
  name: 'subscriptions',
  registerRoutes: registerSubscriptionRoutes,
  jobs: { [BILLING_RUN_JOB]: billingRunJob },
  recurring: [{ kind: BILLING_RUN_JOB, everyMs: 60_000 }],
};
