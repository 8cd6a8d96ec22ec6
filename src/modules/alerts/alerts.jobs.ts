import type { JobEnv, Ticker } from '../../platform/jobs/jobs.js';
import { tenantsWithPendingUsage } from './alerts.repository.js';
import { foldTenantUsageAlerts } from './alerts.service.js';

/** How often the worker folds the usage deltas ingestion queued (decision 0900): an alert triggers within about this long. */
export const USAGE_ALERT_FOLD_MS = 1_000;

/**
 * Folds every tenant's queued usage deltas into its usage alerts, one transaction per tenant,
 * oldest queue first. A tenant whose fold fails is logged and left queued for the next tick; the
 * others go on.
 */
export async function foldPendingUsageAlerts(env: JobEnv): Promise<number> {
  let triggered = 0;
  for (const tenantId of await tenantsWithPendingUsage(env.db, env.config.mode)) {
    try {
      triggered += await env.db.transaction().execute((tx) => foldTenantUsageAlerts({ tx, tenantId, now: env.clock.now() }));
    } catch (error) {
      env.logger.warn({ err: error, tenant_id: tenantId }, 'folding usage alerts failed; the deltas stay queued for the next tick');
    }
  }
  return triggered;
}

export const usageAlertFold: Ticker = { name: 'alerts.fold_usage', everyMs: USAGE_ALERT_FOLD_MS, run: foldPendingUsageAlerts };
