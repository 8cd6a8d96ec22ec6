import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKosh, type Tenant, type TestKosh } from '../support/harness.js';

/** GET /v1/usage/daily: a customer's usage of a metric per calendar day (the dashboard's chart). */
let t: TestKosh;
let acme: Tenant;
let customerId: string;

beforeAll(async () => {
  t = await startTestKosh();
  t.clock.set('2026-04-10T00:00:00Z');
  acme = await t.registerTenant({ state_code: '29' });
  customerId = (await acme.http.POST('/v1/customers', { body: { email: 'daily@acme.test', name: 'Daily' } })).body.data.id;
  await acme.http.POST('/v1/billable-metrics', { body: { code: 'tokens', name: 'Tokens', aggregation: 'sum', field: 'tokens' } });
  await acme.http.POST('/v1/billable-metrics', { body: { code: 'peak', name: 'Peak', aggregation: 'max', field: 'seats' } });
  const event = (i: number, ts: string, properties: Record<string, number>, metric = 'tokens') => ({
    transaction_id: `d-${i}`,
    customer_id: customerId,
    metric_code: metric,
    timestamp: ts,
    properties,
  });
  const res = await acme.http.POST('/v1/usage/events/batch', {
    body: {
      events: [
        event(1, '2026-04-01T10:00:00Z', { tokens: 5 }),
        // 20:00 UTC on 1 April is 01:30 on 2 April in India.
        event(2, '2026-04-01T20:00:00Z', { tokens: 7 }),
        event(3, '2026-04-02T08:00:00Z', { tokens: 1.5 }),
        event(4, '2026-04-01T10:00:00Z', { seats: 3 }, 'peak'),
        event(5, '2026-04-01T11:00:00Z', { seats: 9 }, 'peak'),
      ],
    },
  });
  expect(res.body.data, res.text).toMatchObject({ accepted: 5, rejected: [] });
});
afterAll(() => t.close());

type DailyQuery = { metric_code: string; from: string; to: string; time_zone?: string };
const daily = (query: DailyQuery) => acme.http.GET('/v1/usage/daily', { query: { customer_id: customerId, ...query } });
/** For the refused ranges and zones (400): a query the route answers with validation_failed. */
const dailyRaw = (query: string) => acme.api('GET', `/v1/usage/daily?customer_id=${customerId}&${query}`);

describe('usage by day', () => {
  it("aggregates each day of the primary entity's zone, every day listed", async () => {
    const res = await daily({ metric_code: 'tokens', from: '2026-04-01T00:00:00+05:30', to: '2026-04-04T00:00:00+05:30' });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toEqual({
      customer_id: customerId,
      metric_code: 'tokens',
      aggregation: 'sum',
      time_zone: 'Asia/Kolkata',
      days: [
        { date: '2026-04-01', quantity: 5 },
        { date: '2026-04-02', quantity: 8.5 },
        { date: '2026-04-03', quantity: 0 },
      ],
    });
  });

  it('takes another zone, and aggregates as the metric does (max)', async () => {
    const utc = await daily({ metric_code: 'tokens', from: '2026-04-01T00:00:00Z', to: '2026-04-03T00:00:00Z', time_zone: 'UTC' });
    expect(utc.body.data.days).toEqual([
      { date: '2026-04-01', quantity: 12 },
      { date: '2026-04-02', quantity: 1.5 },
    ]);
    const peak = await daily({ metric_code: 'peak', from: '2026-04-01T00:00:00Z', to: '2026-04-02T00:00:00Z', time_zone: 'UTC' });
    expect(peak.body.data.days).toEqual([{ date: '2026-04-01', quantity: 9 }]);
  });

  it('refuses an unknown metric, another tenant’s customer, a bad zone and a range over 92 days', async () => {
    expect((await daily({ metric_code: 'nope', from: '2026-04-01T00:00:00Z', to: '2026-04-02T00:00:00Z' })).status).toBe(404);
    const other = await t.registerTenant();
    const foreign = await other.http.GET('/v1/usage/daily', {
      query: { customer_id: customerId, metric_code: 'tokens', from: '2026-04-01T00:00:00Z', to: '2026-04-02T00:00:00Z' },
    });
    expect(foreign.status).toBe(404);
    expect((await dailyRaw('metric_code=tokens&from=2026-04-01T00:00:00Z&to=2026-04-02T00:00:00Z&time_zone=Mars/Olympus')).status).toBe(400);
    expect((await dailyRaw('metric_code=tokens&from=2026-01-01T00:00:00Z&to=2026-04-04T00:00:00Z')).status).toBe(400);
    expect((await dailyRaw('metric_code=tokens&from=2026-04-02T00:00:00Z&to=2026-04-01T00:00:00Z')).status).toBe(400);
  });
});
