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
const store = new AsyncLocalStorage<{ testClockId: string }>();

export function runOnTestClock<T>(testClockId: string, work: () => Promise<T>): Promise<T> {
  return store.run({ testClockId }, work);
}

/** The clock whose advance is running here, or null (the real worker, an API request). */
export function currentTestClock(): string | null {
  return store.getStore()?.testClockId ?? null;
}

/**
 * A condition on a row that names a customer: inside an advance, "the customer is on this clock";
 * elsewhere, "the customer is on no clock". `tenant` and `customer` are column references
 * (`subscriptions.tenant_id`, `subscriptions.customer_id`).
 */
export function testClockScope(tenant: string, customer: string): RawBuilder<boolean> {
  const clock = currentTestClock();
  if (clock === null) {
    return sql<boolean>`NOT EXISTS (SELECT 1 FROM customers clock_c WHERE clock_c.tenant_id = ${sql.ref(tenant)} AND clock_c.id = ${sql.ref(customer)} AND clock_c.test_clock_id IS NOT NULL)`;
  }
  return sql<boolean>`EXISTS (SELECT 1 FROM customers clock_c WHERE clock_c.tenant_id = ${sql.ref(tenant)} AND clock_c.id = ${sql.ref(customer)} AND clock_c.test_clock_id = ${clock})`;
}

/** The same for a row that names only its tenant (a tenant-wide sweep): inside an advance, tenants with customers on this clock. */
export function testClockTenantScope(tenant: string): RawBuilder<boolean> {
  const clock = currentTestClock();
  if (clock === null) return sql<boolean>`TRUE`;
  return sql<boolean>`EXISTS (SELECT 1 FROM customers clock_c WHERE clock_c.tenant_id = ${sql.ref(tenant)} AND clock_c.test_clock_id = ${clock})`;
}
