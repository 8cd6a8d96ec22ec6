import type { JobHandler } from '../../platform/jobs/jobs.js';
import { dueForExpiry } from './quotes.repository.js';
import { expireQuote } from './quotes.service.js';

/**
 * Marks open quotes past valid_until `expired`, each in its own transaction. Acceptance checks
 * valid_until itself, so a quote the job has not reached yet is refused all the same.
 */
export const expireDueQuotes: JobHandler = async (_job, env) => {
  const now = env.clock.now();
  for (;;) {
    const due = await dueForExpiry(env.db, env.config.mode, now, 200);
    for (const { tenant_id, id } of due) {
      await env.db.transaction().execute((tx) => expireQuote({ tx, tenantId: tenant_id, now }, id));
    }
    if (due.length < 200) return;
  }
};
