import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKosh, type Tenant, type TestKosh } from '../../../test/support/harness.js';
import { createCustomer, createPlan, subscribe } from '../../../test/subscriptions/helpers.js';
import { gstinFor } from '../../../test/support/billing.js';

let t: TestKosh;
let acme: Tenant;

beforeAll(async () => {
  t = await startTestKosh();
  acme = await t.registerTenant({ gstin: gstinFor('29') });
  for (const body of [
    { key: 'sso', name: 'Single sign-on', type: 'boolean' },
    { key: 'seats', name: 'Seats', type: 'quantity' },
    { key: 'support', name: 'Support tier', type: 'enum', values: ['email', 'phone', 'dedicated'] },
  ]) {
    const res = await acme.api('POST', '/v1/features', body);
    expect(res.status, res.text).toBe(201);
  }
});
afterAll(() => t.close());

const entitlementsOf = async (customer: string) => {
  const res = await acme.http.GET('/v1/customers/{id}/entitlements', { path: { id: customer } });
  expect(res.status, res.text).toBe(200);
  return res.body.data;
};

/** Reads until the answer matches (a change shows within one second), failing after 1.2 s. */
async function eventually(customer: string, expected: Record<string, unknown>) {
  const start = Date.now();
  for (;;) {
    const data = await entitlementsOf(customer);
    try {
      expect(data).toMatchObject(expected);
      return Date.now() - start;
    } catch (error) {
      if (Date.now() - start > 1_200) throw error;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

describe('entitlements', () => {
  it("serves a customer's features from its plan, subscription overrides on top, defaults for the rest", async () => {
    const pro = await createPlan(acme, { amount: 10_000 });
    const put = await acme.http.PUT('/v1/plans/{id}/entitlements', {
      path: { id: pro.id },
      body: [
        { feature_key: 'sso', value: true },
        { feature_key: 'seats', value: 10 },
      ],
    });
    expect(put.status, put.text).toBe(200);
    expect((await acme.http.GET('/v1/plans/{id}/entitlements', { path: { id: pro.id } })).body.data).toEqual([
      { feature_key: 'seats', value: 10 },
      { feature_key: 'sso', value: true },
    ]);

    const customer = await createCustomer(acme);
    expect(await entitlementsOf(customer)).toMatchObject({ features: { sso: false, seats: 0, support: null }, blocked: false, blocked_reason: null });
    const sub = await subscribe(acme, { customer_id: customer, plan_id: pro.id });
    await eventually(customer, { features: { sso: true, seats: 10, support: null } });

    const override = await acme.http.PUT('/v1/subscriptions/{id}/entitlements', {
      path: { id: sub.id },
      body: [
        { feature_key: 'seats', value: 25 },
        { feature_key: 'support', value: 'phone' },
      ],
    });
    expect(override.status, override.text).toBe(200);
    await eventually(customer, { features: { sso: true, seats: 25, support: 'phone' } });
  });

  it('answers a plan change within one second, and emits entitlements.updated', async () => {
    const plan = await createPlan(acme, { amount: 5_000 });
    await acme.http.PUT('/v1/plans/{id}/entitlements', { path: { id: plan.id }, body: [{ feature_key: 'seats', value: 3 }] });
    const customer = await createCustomer(acme);
    await subscribe(acme, { customer_id: customer, plan_id: plan.id });
    await eventually(customer, { features: { seats: 3 } });
    // Served from memory now; the plan changes, and the read follows within a second.
    await acme.http.PUT('/v1/plans/{id}/entitlements', { path: { id: plan.id }, body: [{ feature_key: 'seats', value: 7 }] });
    const took = await eventually(customer, { features: { seats: 7 } });
    expect(took).toBeLessThan(1_000);
    const events = await acme.http.GET('/v1/events', { query: { type: 'entitlements.updated', limit: 10 } });
    expect(events.body.data[0]!.data.object).toMatchObject({ plan_id: plan.id, entitlements: [{ feature_key: 'seats', value: 7 }] });
  });

  it('grants nothing for a paused subscription, gives it back on resume, and announces both with entitlements.updated', async () => {
    const plan = await createPlan(acme, { amount: 5_000 });
    await acme.http.PUT('/v1/plans/{id}/entitlements', {
      path: { id: plan.id },
      body: [
        { feature_key: 'sso', value: true },
        { feature_key: 'seats', value: 4 },
      ],
    });
    const customer = await createCustomer(acme);
    const sub = await subscribe(acme, { customer_id: customer, plan_id: plan.id });
    await acme.http.PUT('/v1/subscriptions/{id}/entitlements', { path: { id: sub.id }, body: [{ feature_key: 'support', value: 'phone' }] });
    await eventually(customer, { features: { sso: true, seats: 4, support: 'phone' } });

    const paused = await acme.http.POST('/v1/subscriptions/{id}/pause', { path: { id: sub.id } });
    expect(paused.status, paused.text).toBe(200);
    // Neither the plan's features nor the subscription's overrides while it is paused.
    expect(await eventually(customer, { features: { sso: false, seats: 0, support: null } })).toBeLessThan(1_000);
    const announced = async () =>
      ((await acme.http.GET('/v1/events', { query: { type: 'entitlements.updated', limit: 20 } })).body.data as { data: { object: Record<string, unknown> } }[])
        .map((e) => e.data.object)
        .filter((o) => o.customer_id === customer && o.object === 'customer_entitlements');
    expect((await announced())[0]).toMatchObject({
      subscription_id: sub.id,
      reason: 'subscription.paused',
      features: { sso: false, seats: 0, support: null },
    });

    const resumed = await acme.http.POST('/v1/subscriptions/{id}/resume', { path: { id: sub.id } });
    expect(resumed.status, resumed.text).toBe(200);
    expect(await eventually(customer, { features: { sso: true, seats: 4, support: 'phone' } })).toBeLessThan(1_000);
    expect((await announced())[0]).toMatchObject({ reason: 'subscription.resumed', features: { sso: true, seats: 4, support: 'phone' } });
  });

  it('keeps what another running subscription grants while one is paused', async () => {
    const basic = await createPlan(acme, { amount: 1_000 });
    const pro = await createPlan(acme, { amount: 9_000 });
    await acme.http.PUT('/v1/plans/{id}/entitlements', { path: { id: basic.id }, body: [{ feature_key: 'seats', value: 2 }] });
    await acme.http.PUT('/v1/plans/{id}/entitlements', {
      path: { id: pro.id },
      body: [
        { feature_key: 'seats', value: 20 },
        { feature_key: 'sso', value: true },
      ],
    });
    const customer = await createCustomer(acme);
    await subscribe(acme, { customer_id: customer, plan_id: basic.id });
    const big = await subscribe(acme, { customer_id: customer, plan_id: pro.id });
    await eventually(customer, { features: { seats: 20, sso: true } });
    expect((await acme.http.POST('/v1/subscriptions/{id}/pause', { path: { id: big.id } })).status).toBe(200);
    await eventually(customer, { features: { seats: 2, sso: false } });
  });

  it('sees a change made by another process (another app on the same database) within one second', async () => {
    if (!process.env.DATABASE_URL) return; // PGlite is one process (test/platform/caches-across-processes.test.ts shares it between two apps)
    const plan = await createPlan(acme, { amount: 5_000 });
    await acme.http.PUT('/v1/plans/{id}/entitlements', { path: { id: plan.id }, body: [{ feature_key: 'sso', value: false }] });
    const customer = await createCustomer(acme);
    await subscribe(acme, { customer_id: customer, plan_id: plan.id });
    await eventually(customer, { features: { sso: false } });
    // Write straight to the database, as another process would: only its change record (whose trigger notifies) tells this one.
    await t.database.db.updateTable('plan_entitlements').set({ value: 'true' }).where('plan_id', '=', plan.id).execute();
    await t.database.db.insertInto('entitlement_changes').values({ tenant_id: acme.tenantId, changed_at: new Date() }).execute();
    expect(await eventually(customer, { features: { sso: true } })).toBeLessThan(1_000);
  });

  describe('bad input', () => {
    it.each([
      ['a boolean feature given a number', [{ feature_key: 'sso', value: 1 }], '0.value'],
      ['a quantity given a string', [{ feature_key: 'seats', value: 'ten' }], '0.value'],
      ['a negative quantity', [{ feature_key: 'seats', value: -1 }], '0.value'],
      ['an enum value not in its list', [{ feature_key: 'support', value: 'carrier pigeon' }], '0.value'],
      ['an unknown feature', [{ feature_key: 'teleport', value: true }], '0.feature_key'],
      [
        'a feature twice',
        [
          { feature_key: 'sso', value: true },
          { feature_key: 'sso', value: false },
        ],
        '1.feature_key',
      ],
    ])('refuses %s with 400', async (_label, body, field) => {
      const plan = await createPlan(acme, { amount: 1_000 });
      const res = await acme.http.PUT('/v1/plans/{id}/entitlements', { path: { id: plan.id }, body });
      expect(res.status, res.text).toBe(400);
      expect(res.error!.details!.map((d: { field: string }) => d.field)).toContain(field);
    });

    it('refuses a bad feature with 400 and a duplicate key with 409', async () => {
      expect((await acme.http.POST('/v1/features', { body: { key: 'x', name: 'X', type: 'enum' } })).status).toBe(400);
      expect((await acme.http.POST('/v1/features', { body: { key: 'Bad Key', name: 'X', type: 'boolean' } })).status).toBe(400);
      expect((await acme.http.POST('/v1/features', { body: { key: 'y', name: 'Y', type: 'boolean', values: ['a'] } })).status).toBe(400);
      const dup = await acme.http.POST('/v1/features', { body: { key: 'sso', name: 'SSO', type: 'boolean' } });
      expect(dup.status).toBe(409);
      expect(dup.error!.reason).toBe('feature_key_taken');
    });

    it("answers 404 for another tenant's customer, plan or subscription", async () => {
      const other = await t.registerTenant();
      const theirPlan = await createPlan(other, { amount: 1_000 });
      const theirCustomer = await createCustomer(other);
      const theirSub = await subscribe(other, { customer_id: theirCustomer, plan_id: theirPlan.id });
      expect((await acme.http.GET('/v1/customers/{id}/entitlements', { path: { id: theirCustomer } })).status).toBe(404);
      expect((await acme.http.PUT('/v1/plans/{id}/entitlements', { path: { id: theirPlan.id }, body: [] })).status).toBe(404);
      expect((await acme.http.PUT('/v1/subscriptions/{id}/entitlements', { path: { id: theirSub.id }, body: [] })).status).toBe(404);
    });
  });
});
