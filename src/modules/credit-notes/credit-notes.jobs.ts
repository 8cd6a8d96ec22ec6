import type { JobHandler } from '../../platform/jobs/jobs.js';
import { dueForExpiry } from './credit-notes.repository.js';
import { expireCreditNote } from './credit-notes.service.js';

/**
 * Expires every issued note whose expires_at has passed, each in its own transaction (one
 * tenant's failure never blocks another's). Re-running is harmless: the guarded transition
 * expires a note once.
 */
export const expireDueCreditNotes: JobHandler = async (_job, env) => {
  const now = env.clock.now();
  for (;;) {
    const due = await dueForExpiry(env.db, env.config.mode, now, 200);
    if (due.length === 0) return;
    for (const { tenant_id, id } of due) {
      await env.db.transaction().execute((tx) => expireCreditNote({ tx, tenantId: tenant_id, now }, id));
    }
    if (due.length < 200) return;
  }
};
