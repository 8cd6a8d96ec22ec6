import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKosh, type Tenant, type TestKosh } from '../../../test/support/harness.js';

/**
 * Organizations and consolidated MRR (SPEC 4.13, 4.16) with three tenants billing in INR, USD and
 * EUR, consolidated into INR at rates set by hand:
 *   INR tenant ₹1 000.00/month                       → 100 000 paise
 *   USD tenant $50.00/month at 83.25                  → 5 000 × 83.25 = 416 250 paise
 *   EUR tenant €480.00/year = €40.00/month at 90.50   → 4 000 × 90.50 = 362 000 paise (91.00 from May: 364 000)
 */
let t: TestKosh;
let inr: Tenant;
let usd: Tenant;
let eur: Tenant;
let outsider: Tenant;
let orgId: string;
let joinCode: string;

async function subscribe(tenant: Tenant, currency: string, interval_unit: 'month' | 'year', amount: number) {
  const plan = await tenant.http.POST('/v1/plans', { body: { name: 'Plan', code: `plan-${currency}`, interval_unit, amount, currency } });
  const customer = await tenant.http.POST('/v1/customers', {
    body: { email: `buyer-${currency}@org.test`, name: 'Buyer', billing_address: { country: 'US' } },
  });
  const sub = await tenant.http.POST('/v1/subscriptions', { body: { customer_id: customer.body.data.id, plan_id: plan.body.data.id, currency } });
  expect(sub.status).toBe(201);
  expect((await tenant.http.POST('/v1/analytics/snapshots')).status).toBe(200);
}

beforeAll(async () => {
  t = await startTestKosh();
  inr = await t.registerTenant({ base_currency: 'INR' });
  usd = await t.registerTenant({ base_currency: 'USD' });
  eur = await t.registerTenant({ base_currency: 'EUR' });
  outsider = await t.registerTenant();
  t.clock.set(new Date('2026-04-10T10:00:00Z'));
  await subscribe(inr, 'INR', 'month', 100000);
  await subscribe(usd, 'USD', 'month', 5000);
  await subscribe(eur, 'EUR', 'year', 48000);
}, 120_000);

afterAll(async () => {
  await t?.close();
});

describe('organizations', () => {
  describe('POST /v1/organizations', () => {
    it('creates an organization the caller joins, showing the join code once', async () => {
      const res = await inr.http.POST('/v1/organizations', { body: { name: 'Group', reporting_currency: 'inr' } });
      expect(res.status).toBe(201);
      expect(res.body.data).toMatchObject({ name: 'Group', reporting_currency: 'INR', join_code: expect.stringMatching(/^orgjoin_/) });
      orgId = res.body.data.id;
      joinCode = res.body.data.join_code!;
      const again = await inr.http.GET('/v1/organizations/{id}', { path: { id: orgId } });
      expect(again.status).toBe(200);
      expect(again.body.data.join_code).toBeUndefined();
    });

    it('refuses a second organization for a tenant that belongs to one (409)', async () => {
      const res = await inr.http.POST('/v1/organizations', { body: { name: 'Other', reporting_currency: 'INR' } });
      expect(res.status).toBe(409);
      expect(res.error!.reason).toBe('already_in_organization');
    });

    it.each([[{ name: 'X', reporting_currency: 'ZZZ' }], [{ name: '', reporting_currency: 'INR' }], [{ name: 'X' }]])('refuses %j with 400', async (body) => {
      const res = await outsider.api('POST', '/v1/organizations', body);
      expect(res.status).toBe(400);
    });
  });

  describe('POST /v1/organizations/{id}/tenants', () => {
    it('attaches the calling tenant with the join code', async () => {
      for (const member of [usd, eur]) {
        const res = await member.http.POST('/v1/organizations/{id}/tenants', { path: { id: orgId }, body: { join_code: joinCode } });
        expect(res.status).toBe(201);
        expect(res.body.data).toMatchObject({ id: member.tenantId, organization_id: orgId });
      }
    });

    it('answers a wrong join code exactly like an organization that does not exist (404)', async () => {
      const wrong = await outsider.http.POST('/v1/organizations/{id}/tenants', { path: { id: orgId }, body: { join_code: 'orgjoin_guess' } });
      expect(wrong.status).toBe(404);
      expect((await outsider.http.GET('/v1/organizations/{id}', { path: { id: orgId } })).status).toBe(404);
      expect((await outsider.http.GET('/v1/organizations/{id}/tenants', { path: { id: orgId } })).status).toBe(404);
      expect((await outsider.http.GET('/v1/organizations/{id}/analytics/mrr', { path: { id: orgId } })).status).toBe(404);
    });
  });

  describe('GET /v1/organizations/{id}/tenants', () => {
    it('pages with limit and with starting_after / ending_before', async () => {
      const first = await usd.http.GET('/v1/organizations/{id}/tenants', { path: { id: orgId }, query: { limit: 2 } });
      expect(first.body.data.map((m: { id: string }) => m.id)).toEqual([inr.tenantId, usd.tenantId]);
      expect(first.body).toMatchObject({ has_more: true, total_count: 3 });
      const next = await usd.http.GET('/v1/organizations/{id}/tenants', { path: { id: orgId }, query: { limit: 2, starting_after: usd.tenantId } });
      expect(next.body.data.map((m: { id: string }) => m.id)).toEqual([eur.tenantId]);
      expect(next.body.has_more).toBe(false);
      const previous = await usd.http.GET('/v1/organizations/{id}/tenants', { path: { id: orgId }, query: { limit: 1, ending_before: eur.tenantId } });
      expect(previous.body.data.map((m: { id: string }) => m.id)).toEqual([usd.tenantId]);
      expect(previous.body.has_more).toBe(true);
      // A cursor naming a tenant outside the organization finds no anchor: an empty page.
      const foreign = await usd.http.GET('/v1/organizations/{id}/tenants', {
        path: { id: orgId },
        query: { starting_after: usd.tenantId.replace(/.$/, (c) => (c === '0' ? '1' : '0')) },
      });
      expect(foreign.body.data).toEqual([]);
    });

    it('lists the members in both SPEC list shapes', async () => {
      const res = await usd.http.GET('/v1/organizations/{id}/tenants', { path: { id: orgId } });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ object: 'list', has_more: false, total_count: 3 });
      expect(res.body.data.map((m: { id: string }) => m.id)).toEqual([inr.tenantId, usd.tenantId, eur.tenantId]);
      expect(res.body.data[1]).toEqual({
        id: usd.tenantId,
        name: expect.any(String),
        email: expect.any(String),
        data_region: 'in',
        base_currency: 'USD',
        organization_id: orgId,
        created_at: expect.any(String),
        updated_at: expect.any(String),
      });
    });
  });

  describe('GET /v1/organizations/{id}/analytics/mrr', () => {
    it('lists the missing rates instead of guessing a total', async () => {
      const res = await inr.http.GET('/v1/organizations/{id}/analytics/mrr', { path: { id: orgId }, query: { date: '2026-04-10' } });
      expect(res.status).toBe(200);
      expect(res.body.data.total_mrr).toBeNull();
      expect(res.body.data.missing_rates).toEqual([
        { currency: 'USD', tenant_ids: [usd.tenantId] },
        { currency: 'EUR', tenant_ids: [eur.tenantId] },
      ]);
      expect(res.body.data.tenants[0]).toMatchObject({ tenant_id: inr.tenantId, mrr_reporting: 100000 });
    });

    it('consolidates every member in the reporting currency at the rate in force on the date', async () => {
      const rates = [
        [inr, 'USD', { rate: '83.25', effective_date: '2026-04-01' }],
        [usd, 'eur', { rate: 90.5, effective_date: '2026-04-01' }],
        [eur, 'EUR', { rate: '91', effective_date: '2026-05-01' }],
      ] as const;
      for (const [tenant, currency, body] of rates) {
        expect((await tenant.http.PUT('/v1/organizations/{id}/fx-rates/{currency}', { path: { id: orgId, currency }, body })).status).toBe(200);
      }

      const april = (await inr.http.GET('/v1/organizations/{id}/analytics/mrr', { path: { id: orgId }, query: { date: '2026-04-10' } })).body.data;
      expect(april.missing_rates).toEqual([]);
      expect(april.tenants.map((x) => [x.tenant_id, x.mrr_reporting])).toEqual([
        [inr.tenantId, 100000],
        [usd.tenantId, 416250],
        [eur.tenantId, 362000],
      ]);
      expect(april.total_mrr).toBe(878250);
      // 10 April is today on the test's clock: computed on read, no snapshot day.
      expect(april.tenants[2]!.currencies).toEqual([{ currency: 'EUR', mrr: 4000, snapshot_date: null, rate: '90.5', mrr_reporting: 362000 }]);

      const may = (await inr.http.GET('/v1/organizations/{id}/analytics/mrr', { path: { id: orgId }, query: { date: '2026-05-15' } })).body.data;
      expect(may.total_mrr).toBe(100000 + 416250 + 364000);
    });

    it('computes today on read: a subscription started after the last snapshot counts at once, a past day keeps its snapshot', async () => {
      // A second INR customer on ₹250.00/month, after the 10 April snapshot; the clock moves to 12 April (no snapshot since).
      t.clock.set(new Date('2026-04-12T09:00:00Z'));
      const plan = await inr.http.POST('/v1/plans', { body: { name: 'Small', code: 'plan-small', interval_unit: 'month', amount: 25000, currency: 'INR' } });
      const customer = await inr.http.POST('/v1/customers', { body: { email: 'second@org.test', name: 'Second', billing_address: { country: 'US' } } });
      expect(
        (await inr.http.POST('/v1/subscriptions', { body: { customer_id: customer.body.data.id, plan_id: plan.body.data.id, currency: 'INR' } })).status,
      ).toBe(201);

      const today = (await inr.http.GET('/v1/organizations/{id}/analytics/mrr', { path: { id: orgId } })).body.data;
      expect(today.date).toBe('2026-04-12');
      // INR ₹1,000.00 + ₹250.00 = 125 000 paise, computed now (no snapshot day); USD and EUR as before.
      expect(today.tenants[0]!.currencies).toEqual([{ currency: 'INR', mrr: 125000, snapshot_date: null, rate: '1', mrr_reporting: 125000 }]);
      expect(today.total_mrr).toBe(125000 + 416250 + 362000);
      // 11 April reads the 10 April snapshot, before the new subscription.
      const before = (await inr.http.GET('/v1/organizations/{id}/analytics/mrr', { path: { id: orgId }, query: { date: '2026-04-11' } })).body.data;
      expect(before.tenants[0]!.currencies).toEqual([{ currency: 'INR', mrr: 100000, snapshot_date: '2026-04-10', rate: '1', mrr_reporting: 100000 }]);
    });

    it('answers CSV', async () => {
      const res = await inr.http.GET('/v1/organizations/{id}/analytics/mrr', { path: { id: orgId }, query: { date: '2026-04-10', format: 'csv' } });
      expect(res.headers['content-type']).toMatch(/^text\/csv/);
      expect(res.text.split('\n')).toHaveLength(5); // header, three tenants, trailing newline
    });
  });

  describe('PUT /v1/organizations/{id}/fx-rates/{currency}', () => {
    it.each([[{ rate: 0 }], [{ rate: -2 }], [{ rate: '0' }], [{ rate: 'abc' }], [{ rate: '1', effective_date: '2026-02-30' }]])(
      'refuses %j with 400',
      async (body) => {
        const res = await inr.api('PUT', `/v1/organizations/${orgId}/fx-rates/USD`, body);
        expect(res.status).toBe(400);
      },
    );

    it('refuses an unknown currency with 400', async () => {
      expect((await inr.api('PUT', `/v1/organizations/${orgId}/fx-rates/ZZZ`, { rate: '1' })).status).toBe(400);
    });
  });

  describe('DELETE /v1/organizations/{id}/tenants/{tenant_id}', () => {
    it('lets a tenant detach itself, and only itself', async () => {
      expect((await inr.http.DELETE('/v1/organizations/{id}/tenants/{tenant_id}', { path: { id: orgId, tenant_id: usd.tenantId } })).status).toBe(404);
      const leave = await eur.http.DELETE('/v1/organizations/{id}/tenants/{tenant_id}', { path: { id: orgId, tenant_id: eur.tenantId } });
      expect(leave.status).toBe(200);
      expect(leave.body.data.organization_id).toBeNull();
      expect((await eur.http.GET('/v1/organizations/{id}', { path: { id: orgId } })).status).toBe(404);
      expect((await inr.http.GET('/v1/organizations/{id}/tenants', { path: { id: orgId } })).body.total_count).toBe(2);
    });
  });
});
