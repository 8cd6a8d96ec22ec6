import type { JobHandler } from '../../platform/jobs/jobs.js';
import { dueForExpiry } from './referrals.repository.js';
import { expireReferral } from './referrals.service.js';

/**
 * Expires every pending referral whose window has closed, each in its own transaction. Re-running
 * is harmless: the guarded transition expires a referral once, and a payment that completed it
 * first simply leaves nothing to expire.
 */
export const expireDueReferrals: JobHandler = async (_job, env) => {
  const now = env.clock.now();
  for (;;) {
    const due = await dueForExpiry(env.db, env.config.mode, now, 200);
    for (const { tenant_id, id } of due) {
      await env.db.transaction().execute((tx) => expireReferral({ tx, tenantId: tenant_id, now }, id));
    }
    if (due.length < 200) return;
  }
};
