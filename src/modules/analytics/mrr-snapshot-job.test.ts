import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKosh, type Tenant, type TestKosh } from '../../../test/support/harness.js';
import { dataOf as ok } from '../../../test/support/typed-api.js';
import { snapshotAllTenants } from './analytics.service.js';

/**
 * The hourly MRR snapshot job across tenants: a plan whose price changed (an archived and an
 * active price in one currency) counts each subscription once, at its own price, and one tenant
 * whose snapshot fails never leaves the others without theirs.
 */
let t: TestKosh;
let repriced: Tenant;
let healthy: Tenant;

async function subscribeOne(tenant: Tenant, amount: number): Promise<string> {
  const plan = await ok(tenant.http.POST('/v1/plans', { body: { name: 'Team', code: 'team', interval_unit: 'month', amount, currency: 'INR' } }));
  const customer = await ok(tenant.http.POST('/v1/customers', { body: { email: `c@${tenant.tenantId.slice(0, 8)}.test`, name: 'C' } }));
  await ok(tenant.http.POST('/v1/subscriptions', { body: { customer_id: customer.id, plan_id: plan.id } }));
  return plan.id as string;
}

beforeAll(async () => {
  t = await startTestKosh();
  repriced = await t.registerTenant();
  healthy = await t.registerTenant();
  const plan = await subscribeOne(repriced, 100_000);
  // The plan's price changes: the old price is archived, the running subscription keeps it.
  await ok(repriced.http.POST('/v1/plans/{id}/prices', { path: { id: plan }, body: { amount: 150_000, currency: 'INR' } }));
  await subscribeOne(healthy, 70_000);
}, 120_000);
afterAll(() => t?.close());

describe('the MRR snapshot job', () => {
  it('counts a subscription of a repriced plan once, at the price it bills', async () => {
    const res = await repriced.http.POST('/v1/analytics/snapshots');
    expect(res.status, res.text).toBe(200);
    const mrr = await ok(repriced.http.GET('/v1/analytics/mrr'));
    expect(mrr.months.at(-1)).toMatchObject({ mrr: 100_000, subscriptions: 1 });
  });

  it("takes every other tenant's snapshot when one tenant's fails, and names the one that failed", async () => {
    // A fault in the database for one tenant's rows alone.
    await sql
      .raw(
        `CREATE FUNCTION refuse_one_tenant() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN IF NEW.tenant_id = '${repriced.tenantId}' THEN RAISE EXCEPTION 'refused for this test'; END IF; RETURN NEW; END $$;
         CREATE TRIGGER refuse_one_tenant BEFORE INSERT ON mrr_daily FOR EACH ROW EXECUTE FUNCTION refuse_one_tenant();`,
      )
      .execute(t.database.db);
    try {
      const totals = await snapshotAllTenants(t.database.db, 'test', t.clock.now());
      expect(totals.failed.map((f) => f.tenantId)).toEqual([repriced.tenantId]);
      expect(totals.tenants).toBe(1);
      const mrr = await ok(healthy.http.GET('/v1/analytics/mrr'));
      expect(mrr.months.at(-1)).toMatchObject({ mrr: 70_000, subscriptions: 1 });
    } finally {
      await sql.raw('DROP TRIGGER refuse_one_tenant ON mrr_daily; DROP FUNCTION refuse_one_tenant();').execute(t.database.db);
    }
  });
});
