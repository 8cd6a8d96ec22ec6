import { expect } from 'vitest';
import type { Tenant, TestKosh } from './harness.js';

/**
 * Runs a full reconciliation for the tenant (through the API and the job queue) and answers the
 * completed run. The invariant harness calls it after every step and expects no discrepancies.
 */
export async function reconcileTenant(
  t: TestKosh,
  tenant: Tenant,
): Promise<{ total_discrepancies: number; discrepancies: Record<string, unknown>[] } & Record<string, unknown>> {
  const started = await tenant.api('POST', '/v1/finance/reconciliation/runs', {});
  expect(started.status, started.text).toBe(202);
  await t.kosh.worker.drain();
  const run = await tenant.api('GET', `/v1/finance/reconciliation/runs/${started.body.data.id}`);
  expect(run.body.data.status, run.text).toBe('completed');
  return run.body.data;
}

/** Every entity × currency the tenant has posted in: its trial balance has equal debit and credit totals. */
export async function expectBalancedTrialBalances(tenant: Tenant): Promise<number> {
  const entities = (await tenant.api('GET', '/v1/entities')).body.data as { id: string }[];
  let checked = 0;
  for (const entity of entities) {
    for (const currency of ['INR', 'USD', 'EUR', 'GBP']) {
      const res = await tenant.api('GET', `/v1/ledger/trial-balance?entity_id=${entity.id}&currency=${currency}`);
      expect(res.status, res.text).toBe(200);
      expect(res.body.data.total_debit, `${entity.id} ${currency}`).toBe(res.body.data.total_credit);
      if (res.body.data.accounts.length) checked += 1;
    }
  }
  return checked;
}
