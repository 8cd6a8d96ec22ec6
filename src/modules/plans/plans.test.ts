import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKosh, type Tenant, type TestKosh } from '../../../test/support/harness.js';

let t: TestKosh;
let acme: Tenant;

beforeAll(async () => {
  t = await startTestKosh();
  acme = await t.registerTenant();
});
afterAll(() => t.close());

const formal = { name: 'Pro', code: 'pro', interval_unit: 'month' as const, interval_count: 1, amount: 49900, currency: 'INR', hsn_code: '998314' };

describe('plans', () => {
  describe('create', () => {
    it('accepts the formal shape and answers 201 with the plan and its price', async () => {
      const res = await acme.http.POST('/v1/plans', { body: formal });
      expect(res.status).toBe(201);
      expect(res.body.data).toMatchObject({
        name: 'Pro',
        code: 'pro',
        interval_unit: 'month',
        interval: 'month',
        interval_count: 1,
        hsn_code: '998314',
        active: true,
        tenant_id: acme.tenantId,
      });
      expect(res.body.data.prices).toEqual([expect.objectContaining({ currency: 'INR', amount: 49900, type: 'recurring', plan_id: res.body.data.id })]);
    });

    it('accepts the second shape (interval, prices[], features, metadata) and derives a code', async () => {
      const res = await acme.http.POST('/v1/plans', {
        body: {
          name: 'Team Annual',
          description: 'For teams',
          interval: 'year',
          trial_days: 14,
          prices: [
            { amount: 100000, currency: 'INR', billing_scheme: 'per_unit' },
            { amount: 1500, currency: 'usd' },
          ],
          features: ['sso'],
          metadata: { tier: 'team' },
        },
      });
      expect(res.status).toBe(201);
      expect(res.body.data).toMatchObject({
        code: 'team-annual',
        interval_unit: 'year',
        interval_count: 1,
        trial_days: 14,
        features: ['sso'],
        metadata: { tier: 'team' },
      });
      expect(res.body.data.prices.map((p) => p.currency).sort()).toEqual(['INR', 'USD']);
    });

    it('refuses a duplicate code with 409', async () => {
      const res = await acme.http.POST('/v1/plans', { body: formal });
      expect(res.status).toBe(409);
      expect(res.error?.code).toBe('conflict');
    });

    it.each([
      ['zero amount', { ...formal, code: 'z', amount: 0 }, 'amount'],
      ['negative amount', { ...formal, code: 'n', amount: -5 }, 'amount'],
      ['fractional amount', { ...formal, code: 'f', amount: 1.5 }, 'amount'],
      ['unsafe amount', { ...formal, code: 'u', amount: 2 ** 60 }, 'amount'],
      ['unknown interval', { ...formal, code: 'i', interval_unit: 'fortnight' }, 'interval_unit'],
      ['interval_count 0', { ...formal, code: 'c', interval_count: 0 }, 'interval_count'],
      ['bad currency', { ...formal, code: 'cur', currency: 'RUPEE' }, 'currency'],
      ['no price at all', { name: 'x', interval_unit: 'month' }, 'amount'],
      [
        'two prices in one currency',
        {
          name: 'x',
          interval_unit: 'month',
          prices: [
            { amount: 1, currency: 'INR' },
            { amount: 2, currency: 'inr' },
          ],
        },
        'prices',
      ],
      [
        'tiered pricing without tiers',
        { name: 'x', interval_unit: 'month', prices: [{ amount: 1, currency: 'INR', billing_scheme: 'tiered' }] },
        'prices.0.tiers',
      ],
      [
        'overlapping tiers',
        {
          name: 'x',
          interval_unit: 'month',
          prices: [
            {
              currency: 'INR',
              billing_scheme: 'tiered',
              tiers_mode: 'graduated',
              tiers: [
                { up_to: 10, unit_amount: 1 },
                { up_to: 10, unit_amount: 1 },
                { up_to: null, unit_amount: 1 },
              ],
            },
          ],
        },
        'prices.0.tiers',
      ],
      ['bad hsn', { ...formal, code: 'h', hsn_code: '12' }, 'hsn_code'],
      ['over-long name', { ...formal, code: 'l', name: 'x'.repeat(201) }, 'name'],
    ])('refuses %s with 400 validation_failed naming the field', async (_label, body, field) => {
      const res = await acme.api('POST', '/v1/plans', body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('validation_failed');
      expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
    });
  });

  describe('list', () => {
    it('filters by q, currency and interval_unit and reports totals', async () => {
      const byCurrency = await acme.http.GET('/v1/plans', { query: { currency: 'usd' } });
      expect(byCurrency.status).toBe(200);
      expect(byCurrency.body).toMatchObject({ object: 'list', has_more: false, total_count: 1 });
      expect(byCurrency.body.data[0]?.code).toBe('team-annual');

      const byQuery = await acme.http.GET('/v1/plans', { query: { q: 'PRO' } });
      expect(byQuery.body.data.map((p) => p.code)).toEqual(['pro']);

      const byInterval = await acme.http.GET('/v1/plans', { query: { interval_unit: 'month' } });
      expect(byInterval.body.data.map((p) => p.code)).toEqual(['pro']);
    });

    it('pages newest first and caps limit at 1000 instead of refusing it', async () => {
      const first = await acme.http.GET('/v1/plans', { query: { limit: 1, page: 1 } });
      expect(first.body).toMatchObject({ has_more: true, total_count: 2 });
      expect(first.body.data[0]?.code).toBe('team-annual');
      const second = await acme.http.GET('/v1/plans', { query: { limit: 1, page: 2 } });
      expect(second.body.data[0]?.code).toBe('pro');
      expect(second.body.has_more).toBe(false);
      const capped = await acme.http.GET('/v1/plans', { query: { limit: 5000 } });
      expect(capped.status).toBe(200);
      expect(capped.body.data).toHaveLength(2);
    });

    it.each(['limit=0', 'limit=-1', 'limit=abc', 'page=0', 'interval_unit=hour'])('refuses %s with 400', async (q) => {
      const res = await acme.api('GET', `/v1/plans?${q}`);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('validation_failed');
    });
  });

  describe('get', () => {
    it('answers 404 for a missing id and 400 for a malformed one', async () => {
      expect((await acme.http.GET('/v1/plans/{id}', { path: { id: '00000000-0000-7000-8000-000000000000' } })).status).toBe(404);
      expect((await acme.http.GET('/v1/plans/{id}', { path: { id: 'not-a-uuid' } })).status).toBe(400);
    });

    it("hides another tenant's plan exactly like a missing one", async () => {
      const other = await t.registerTenant();
      const created = await other.http.POST('/v1/plans', { body: { ...formal, code: 'other' } });
      const res = await acme.http.GET('/v1/plans/{id}', { path: { id: created.body.data.id } });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: { request_id: expect.any(String), code: 'not_found', message: 'plan not found' } });
    });
  });
  describe('archive a price', () => {
    it('archives a metered price (answering the plan with it), then refuses a second archive with 409', async () => {
      await acme.http.POST('/v1/billable-metrics', { body: { code: 'archived_tokens', name: 'Tokens', aggregation: 'sum', field: 'count' } });
      const plan = (await acme.http.POST('/v1/plans', { body: { ...formal, code: 'metered-archive' } })).body.data;
      const added = await acme.http.POST('/v1/plans/{id}/prices', {
        path: { id: plan.id },
        body: { billing_scheme: 'metered', metric_code: 'archived_tokens', amount: 20, currency: 'INR' },
      });
      const metered = added.body.data.prices.find((p) => p.billing_scheme === 'metered')!;
      const archived = await acme.http.POST('/v1/plans/{id}/prices/{price_id}/archive', { path: { id: plan.id, price_id: metered.id } });
      expect(archived.status).toBe(200);
      expect(archived.body.data.prices.find((p) => p.id === metered.id)).toMatchObject({ active: false, metric_code: 'archived_tokens' });
      const again = await acme.http.POST('/v1/plans/{id}/prices/{price_id}/archive', { path: { id: plan.id, price_id: metered.id } });
      expect([again.status, again.error?.reason]).toEqual([409, 'price_archived']);
    });
  });
});
