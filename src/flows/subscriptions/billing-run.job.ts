import type { JobHandler } from '../../platform/jobs/jobs.js';
import { runBillingRun } from './run-billing.js';

export const BILLING_RUN_JOB = 'subscriptions.billing_run';

/** The billing run at the clock's now (see runBillingRun); idempotent, so a retried job is harmless. */
export const billingRunJob: JobHandler = async (_job, env) => {
  const report = await runBillingRun(env.db, env.clock.now(), {
    log: (message, fields) => env.logger.warn(fields ?? {}, message),
    mode: env.config.mode,
  });
  if (report.renewed + report.trials_ended + report.ended + report.failed + report.past_due + report.unpaid + report.recovered > 0) {
    env.logger.info({ report }, 'billing run');
  }
};
