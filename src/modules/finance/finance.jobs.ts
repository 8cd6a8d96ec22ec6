import type { JobHandler } from '../../platform/jobs/jobs.js';
import { syncSecondaryLedger } from '../ledger/index.js';
import { tenantsToReconcile } from './reconciliation.repository.js';
import { executeRun, startRun } from './reconciliation.service.js';
import { recognizeDueRevenue } from './revenue.service.js';

/** Runs one requested reconciliation run (payload `run_id`). */
export const runReconciliation: JobHandler = async (job, env) => {
  const runId = (job.payload as { run_id?: unknown }).run_id;
  if (!job.tenant_id || typeof runId !== 'string') return;
  await executeRun(
    env.db,
    job.tenant_id,
    runId,
    () => env.clock.now(),
    (tenantId) => syncSecondaryLedger(env.db, tenantId, env.clock.now(), env.logger),
  );
};

/**
 * The daily scheduled run: one run over every entity per tenant whose journal changed since its
 * last run (skipped where one is running).
 */
export const scheduleDailyReconciliation: JobHandler = async (_job, env) => {
  for (let after: string | null = null; ;) {
    const tenants = await tenantsToReconcile(env.db, env.config.mode, after, 500);
    for (const tenantId of tenants) {
      await env.db.transaction().execute((tx) => startRun({ tx, tenantId, now: env.clock.now() }, null, null));
    }
    if (tenants.length < 500) return;
    after = tenants[tenants.length - 1]!;
  }
};

/** Recognizes the elapsed days of every active revenue schedule. */
export const recognizeRevenue: JobHandler = async (_job, env) => {
  await recognizeDueRevenue(env.db, env.config.mode, env.clock.now());
};
