import type { KoshModule } from '../../app-deps.js';
import { dayOf, snapshotAllTenants } from './analytics.service.js';

export const MRR_SNAPSHOT_JOB = 'analytics.mrr_snapshot';

export const analyticsModule: KoshModule = {
  name: 'analytics',
  jobs: {
    // Hourly: today's snapshot is refreshed until the day ends; yesterday's is then final.
    [MRR_SNAPSHOT_JOB]: async (_job, env) => {
      const now = env.clock.now();
      const { failed, ...totals } = await snapshotAllTenants(env.db, env.config.mode, now);
      for (const { tenantId, error } of failed) env.logger.error({ err: error, tenantId }, 'mrr snapshot of a tenant failed; the others went on');
      env.logger.info({ day: dayOf(now), ...totals, failed: failed.length }, 'mrr snapshot');
    },
  },
  recurring: [{ kind: MRR_SNAPSHOT_JOB, everyMs: 3_600_000 }],
};
