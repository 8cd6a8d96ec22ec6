import { AsyncLocalStorage } from 'node:async_hooks';
import { sql, type RawBuilder } from 'kysely';

/**
 * Which test clock the running work belongs to (DESIGN §24, decision 0440). Advancing a clock runs
 * the worker's own sweeps and jobs inside `runOnTestClock(id, …)`: every sweep that finds due work
 * by customer narrows itself with `testClockScope(…)` to that clock's customers, the jobs it
 * enqueues carry the clock (only that clock's advance runs them) and its events say
 * `test_clock_id`. Outside an advance the same filter leaves every clock's customers out, so the
 * real worker never bills a simulated customer at the real time.
 */
const store = new AsyncLocalStorage<{ testClockId: string; tenantId: string }>();

/** Runs `work` as the advance of the clock `testClockId` of the tenant `tenantId` (a clock's customers are all of its tenant). */
export function runOnTestClock<T>(tenantId: string, testClockId: string, work: () => Promise<T>): Promise<T> {
  return store.run({ testClockId, tenantId }, work);
}

/** The clock whose advance is running here, or null (the real worker, an API request). */
export function currentTestClock(): string | null {
  return store.getStore()?.testClockId ?? null;
}

/**
 * A condition on a row that names a customer: inside an advance, "the customer is on this clock";
 * elsewhere, "the customer is on no clock". `tenant` and `customer` are column references
 * (`subscriptions.tenant_id`, `subscriptions.customer_id`). Inside an advance the row's tenant is
 * also given as the clock's, so a sweep's discovery reads that tenant's rows by its indexes
 * instead of every tenant's.
 */
export function testClockScope(tenant: string, customer: string): RawBuilder<boolean> {
  const scope = store.getStore();
  if (!scope) {
    return sql<boolean>`NOT EXISTS (SELECT 1 FROM customers clock_c WHERE clock_c.tenant_id = ${sql.ref(tenant)} AND clock_c.id = ${sql.ref(customer)} AND clock_c.test_clock_id IS NOT NULL)`;
  }
  return sql<boolean>`${sql.ref(tenant)} = ${scope.tenantId} AND EXISTS (SELECT 1 FROM customers clock_c WHERE clock_c.tenant_id = ${scope.tenantId} AND clock_c.id = ${sql.ref(customer)} AND clock_c.test_clock_id = ${scope.testClockId})`;
}

/** The same for a row that names only its tenant (a tenant-wide sweep): inside an advance, the clock's tenant when customers are on this clock. */
export function testClockTenantScope(tenant: string): RawBuilder<boolean> {
  const scope = store.getStore();
  if (!scope) return sql<boolean>`TRUE`;
  return sql<boolean>`${sql.ref(tenant)} = ${scope.tenantId} AND EXISTS (SELECT 1 FROM customers clock_c WHERE clock_c.tenant_id = ${scope.tenantId} AND clock_c.test_clock_id = ${scope.testClockId})`;
}
