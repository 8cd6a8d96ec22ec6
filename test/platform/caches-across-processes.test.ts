import { setTimeout as sleep } from 'node:timers/promises';
import pino from 'pino';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKosh, type Kosh } from '../../src/app.js';
import { onPostgresServer } from '../support/database.js';
import { startTestKosh, toResponse, type Tenant, type TestKosh } from '../support/harness.js';
import { createCustomer, createPlan, subscribe } from '../subscriptions/helpers.js';

/**
 * Every process keeps verified API keys and customers' entitlements in memory (decision 0420);
 * what another process changes reaches it through LISTEN/NOTIFY within a second. Two Kosh apps
 * on one database stand for two processes: the first changes, the second — which has the old
 * answer in memory — must follow. The clock does not move: a key cached here would be trusted for
 * KOSH_API_KEY_CACHE_SECONDS if nothing told this process.
 */
let one: TestKosh;
let two: Kosh;
let acme: Tenant;

beforeAll(async () => {
  one = await startTestKosh();
  two = await createKosh({ config: one.config, clock: one.clock, database: one.database, validateResponses: true, logger: pino({ level: 'silent' }) });
  acme = await one.registerTenant();
  for (const body of [
    { key: 'sso', name: 'Single sign-on', type: 'boolean' },
    { key: 'seats', name: 'Seats', type: 'quantity' },
  ]) {
    const res = await acme.api('POST', '/v1/features', body);
    expect(res.status, res.text).toBe(201);
  }
});
afterAll(async () => {
  await two?.close();
  await one?.close();
});

/** A call to the second process, with this key. */
const onTwo = async (key: string, method: 'GET' | 'POST', url: string, body?: unknown) =>
  toResponse(
    await two.app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    }),
  );

/** Asks the second process until `check` passes; the contract is one second after the change committed. */
async function withinOneSecond(check: () => Promise<void>): Promise<void> {
  return withinMs(1_000, check);
}

async function withinMs(ms: number, check: () => Promise<void>): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      await check();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await sleep(25);
    }
  }
}

const entitlementsOnTwo = async (customer: string) => {
  const res = await onTwo(acme.key, 'GET', `/v1/customers/${customer}/entitlements`);
  expect(res.status, res.text).toBe(200);
  return res.body.data;
};

describe('entitlements changed in one process', () => {
  it('reach the other within a second: a plan change, then a subscription override', async () => {
    const plan = await createPlan(acme, { amount: 5_000 });
    expect((await acme.api('PUT', `/v1/plans/${plan.id}/entitlements`, [{ feature_key: 'seats', value: 3 }])).status).toBe(200);
    const customer = await createCustomer(acme);
    const sub = await subscribe(acme, { customer_id: customer, plan_id: plan.id });
    await withinOneSecond(async () => expect(await entitlementsOnTwo(customer)).toMatchObject({ features: { seats: 3, sso: false } }));
    // The second process has the answer in memory now.
    expect(await entitlementsOnTwo(customer)).toMatchObject({ features: { seats: 3 } });

    expect((await acme.api('PUT', `/v1/plans/${plan.id}/entitlements`, [{ feature_key: 'seats', value: 7 }])).status).toBe(200);
    await withinOneSecond(async () => expect(await entitlementsOnTwo(customer)).toMatchObject({ features: { seats: 7 } }));

    const override = await acme.api('PUT', `/v1/subscriptions/${sub.id}/entitlements`, [{ feature_key: 'sso', value: true }]);
    expect(override.status, override.text).toBe(200);
    await withinOneSecond(async () => expect(await entitlementsOnTwo(customer)).toMatchObject({ features: { seats: 7, sso: true } }));
  });

  it('reach the other within a second: a blocking usage alert triggered by the fold of ingested usage', async () => {
    const metric = await acme.api('POST', '/v1/billable-metrics', { code: 'calls', name: 'Calls', aggregation: 'count' });
    expect(metric.status, metric.text).toBe(201);
    const customer = await createCustomer(acme);
    const cap = await acme.api('POST', '/v1/alerts', { customer_id: customer, type: 'usage_threshold', metric_code: 'calls', threshold: 2, action: 'block' });
    expect(cap.status, cap.text).toBe(201);
    expect(await entitlementsOnTwo(customer)).toMatchObject({ blocked: false });

    const events = Array.from({ length: 2 }, (_, i) => ({ transaction_id: `cap-${i}`, customer_id: customer, metric_code: 'calls' }));
    expect((await acme.api('POST', '/v1/usage/events/batch', { events })).status).toBe(202);
    // The first process's worker folds the batch into the alert (decision 0900), which triggers it.
    await one.kosh.worker.drain();
    await withinOneSecond(async () =>
      expect(await entitlementsOnTwo(customer)).toMatchObject({ blocked: true, blocked_reason: 'alert', blocked_by: cap.body.data.id }),
    );

    // Archived in the first process (decision 0570): the block is lifted in both long before the
    // one second an alert-blocked answer may stay cached — both have just cached `blocked: true`,
    // so only the change notification can clear them this fast.
    expect((await acme.api('GET', `/v1/customers/${customer}/entitlements`)).body.data.blocked).toBe(true);
    const archived = await acme.api('POST', `/v1/alerts/${cap.body.data.id}/archive`);
    expect(archived.status, archived.text).toBe(200);
    const since = performance.now();
    // On PostgreSQL the notification reaches even this process a few milliseconds after the commit.
    await withinMs(400, async () =>
      expect((await acme.api('GET', `/v1/customers/${customer}/entitlements`)).body.data).toMatchObject({ blocked: false, blocked_reason: null }),
    );
    await withinMs(400, async () => expect(await entitlementsOnTwo(customer)).toMatchObject({ blocked: false }));
    expect(performance.now() - since).toBeLessThan(1_000);
    const archivedEvents = await acme.api('GET', `/v1/events?type=alert.archived&limit=10`);
    expect(archivedEvents.body.data.map((e: { data: { object: { id: string } } }) => e.data.object.id)).toContain(cap.body.data.id);
  });

  it("never answers one tenant's cached customer to another tenant", async () => {
    const customer = await createCustomer(acme);
    expect(await entitlementsOnTwo(customer)).toMatchObject({ customer_id: customer });
    const other = await one.registerTenant();
    expect((await onTwo(other.key, 'GET', `/v1/customers/${customer}/entitlements`)).status).toBe(404);
  });
});

describe('API keys revoked in one process', () => {
  it('are refused by the other within a second', async () => {
    const key = (await acme.api('POST', '/v1/developer/keys', { name: 'revoked elsewhere' })).body.data;
    expect((await onTwo(key.key, 'GET', '/v1/settings')).status).toBe(200); // verified, and remembered there
    expect((await onTwo(key.key, 'GET', '/v1/settings')).status).toBe(200);

    expect((await acme.api('DELETE', `/v1/developer/keys/${key.id}`)).status).toBe(200);
    await withinOneSecond(async () => {
      const refused = await onTwo(key.key, 'GET', '/v1/settings');
      expect(refused.status).toBe(401);
      expect(refused.body.error.reason).toBe('invalid_api_key');
    });
  });

  it('are refused within a second however they were revoked (a statement run by hand, another release)', async () => {
    const key = (await acme.api('POST', '/v1/developer/keys', { name: 'revoked by hand' })).body.data;
    expect((await onTwo(key.key, 'GET', '/v1/settings')).status).toBe(200);
    await one.database.db.updateTable('api_keys').set({ revoked_at: one.clock.now() }).where('id', '=', key.id).execute();
    await withinOneSecond(async () => expect((await onTwo(key.key, 'GET', '/v1/settings')).status).toBe(401));
  });
});

describe.skipIf(!onPostgresServer)('a process whose notification session drops', () => {
  it('reads from the database until it listens again, and misses nothing meanwhile', async () => {
    const key = (await acme.api('POST', '/v1/developer/keys', { name: 'revoked while deaf' })).body.data;
    expect((await onTwo(key.key, 'GET', '/v1/settings')).status).toBe(200);
    // Every listening session of this database ends (both apps'); they reconnect on their own.
    await sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
              WHERE datname = current_database() AND pid <> pg_backend_pid() AND query LIKE '%pg_notify%'`.execute(one.database.db);
    expect((await acme.api('DELETE', `/v1/developer/keys/${key.id}`)).status).toBe(200);
    await withinOneSecond(async () => expect((await onTwo(key.key, 'GET', '/v1/settings')).status).toBe(401));
    // And once listening again it serves from memory, still current.
    await sleep(1_500);
    expect(two.deps.changes?.isFresh()).toBe(true);
  });
});
