import type { KoshModule } from '../../app-deps.js';
import { onEvent } from '../../platform/events/events.js';
import { DUNNING_STEPS_JOB } from '../../modules/dunning/index.js';
import { DUNNING_EMAIL_JOB, sendDunningEmails } from './dunning-mail.js';
import { DUNNING_SMS_JOB, sendDunningSms } from './dunning-sms.js';
import { dunningOnInvoiceEvent, runDueDunningSteps, scanOverdueInvoices } from './run-dunning.js';
import { subscription } from '../../modules/events/index.js';

export { DUNNING_STEPS_JOB };
export const DUNNING_OVERDUE_SCAN_JOB = 'dunning.scan_overdue';

/** Dunning's jobs and listener: they act across modules (invoices, collections, mail), so they live with the flows. */
export const dunningWiring: KoshModule = {
  name: 'dunning',
  jobs: {
    [DUNNING_SMS_JOB]: sendDunningSms,
    [DUNNING_EMAIL_JOB]: sendDunningEmails,
    [DUNNING_STEPS_JOB]: async (_job, env) => {
      const steps = await runDueDunningSteps(env);
      if (steps > 0) env.logger.info({ steps }, 'dunning steps');
    },
    [DUNNING_OVERDUE_SCAN_JOB]: async (_job, env) => {
      const started = await scanOverdueInvoices(env.db, env.config.mode, env.clock.now());
      if (started > 0) {
        env.logger.info({ started }, 'dunning started for overdue invoices');
        // Steps due at once (delay 0) run now rather than on the step runner's next minute.
        await runDueDunningSteps(env);
      }
    },
  },
  recurring: [
    { kind: DUNNING_STEPS_JOB, everyMs: 60_000 },
    { kind: DUNNING_OVERDUE_SCAN_JOB, everyMs: 15 * 60_000 },
  ],
  // Executions start and stop inside the transaction of the invoice event that causes it.
  init: () => onEvent(dunningOnInvoiceEvent, subscription('dunning')),
};
