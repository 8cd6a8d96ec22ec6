import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBillingRun } from '../../src/flows/subscriptions/run-billing.js';
import type { operations } from '../../clients/typescript/src/schema.js';
import { startTestKosh, type Tenant, type TestKosh } from '../support/harness.js';
import { priceQuantity, type PricingScheme } from '../../src/modules/plans/index.js';
import { createCustomer, invoicesOf, karnatakaTenant, subscribe, travelTo } from '../subscriptions/helpers.js';

let t: TestKosh;
let acme: Tenant;
let seq = 0;
const uid = (p: string) => `${p}-${(seq += 1)}-${Math.random().toString(36).slice(2, 8)}`;

beforeAll(async () => {
  t = await startTestKosh();
  t.clock.set('2031-01-01T00:00:00Z');
  acme = await karnatakaTenant(t);
});
afterAll(() => t.close());

type MetricBody = operations['createBillableMetric']['requestBody']['content']['application/json'];
type PlanBody = operations['createPlan']['requestBody']['content']['application/json'];

async function metric(body: Omit<MetricBody, 'name' | 'code'> & { code?: string }) {
  const res = await acme.http.POST('/v1/billable-metrics', { body: { name: 'Metric', ...body, code: uid(String(body.code ?? 'm')) } });
  expect(res.status, res.text).toBe(201);
  return res.body.data as { id: string; code: string };
}

async function plan(prices: NonNullable<PlanBody['prices']>, extra: Partial<PlanBody> = {}) {
  const res = await acme.http.POST('/v1/plans', { body: { name: 'Usage plan', code: uid('plan'), interval: 'month', hsn_code: '998314', prices, ...extra } });
  expect(res.status, res.text).toBe(201);
  return res.body.data;
}

const batch = (events: Record<string, unknown>[]) => acme.http.POST('/v1/usage/events/batch', { body: { events } });

describe('billable metrics', () => {
  it('creates, lists and reads one', async () => {
    const m = await metric({ code: 'gb', aggregation: 'sum', field: 'gb' });
    await metric({ code: 'seats', aggregation: 'max', field: 'seats' });
    const one = await acme.http.GET('/v1/billable-metrics/{id}', { path: { id: m.id } });
    expect(one.body.data).toMatchObject({ code: m.code, aggregation: 'sum', field: 'gb' });
    const list = await acme.http.GET('/v1/billable-metrics', { query: { limit: 1 } });
    expect(list.status).toBe(200);
    expect(list.body.data).toHaveLength(1);
    expect(list.body.has_more).toBe(true);
  });

  it('requires a field for sum, max, unique_count and latest; refuses a taken code', async () => {
    for (const aggregation of ['sum', 'max', 'unique_count', 'latest']) {
      const res = await acme.api('POST', '/v1/billable-metrics', { code: uid('x'), name: 'X', aggregation });
      expect(res.status, aggregation).toBe(400);
    }
    const m = await metric({ aggregation: 'count' });
    const again = await acme.http.POST('/v1/billable-metrics', { body: { code: m.code, name: 'X', aggregation: 'count' } });
    expect(again.status).toBe(409);
    expect(again.error!.reason).toBe('metric_code_taken');
  });

  it('answers 404 for another tenant’s metric', async () => {
    const m = await metric({ aggregation: 'count' });
    const other = await t.registerTenant();
    expect((await other.http.GET('/v1/billable-metrics/{id}', { path: { id: m.id } })).status).toBe(404);
  });
});

describe('prices', () => {
  it('accepts tiered, metered and package prices beside a fixed one (both shapes)', async () => {
    const calls = await metric({ code: 'calls', aggregation: 'count' });
    const p = await plan([
      {
        currency: 'INR',
        billing_scheme: 'tiered',
        tiers_mode: 'volume',
        tiers: [
          { up_to: 5, unit_amount: 1000 },
          { up_to: null, unit_amount: 800, flat_amount: 100 },
        ],
      },
      { currency: 'INR', billing_scheme: 'metered', metric_code: calls.code, amount: 50, package_size: 1000, hsn_code: '998315' },
    ]);
    expect(p.prices).toEqual([
      expect.objectContaining({
        billing_scheme: 'tiered',
        amount: 0,
        tiers_mode: 'volume',
        tiers: [
          { up_to: 5, unit_amount: 1000, flat_amount: 0 },
          { up_to: null, unit_amount: 800, flat_amount: 100 },
        ],
      }),
      expect.objectContaining({ billing_scheme: 'metered', metric_code: calls.code, amount: 50, package_size: 1000, hsn_code: '998315' }),
    ]);
    const formal = await acme.http.POST('/v1/plans', {
      body: {
        name: 'F',
        code: uid('f'),
        interval_unit: 'month',
        interval_count: 1,
        amount: 1000,
        currency: 'INR',
        prices: [{ currency: 'INR', billing_scheme: 'metered', metric_code: calls.code, tiers_mode: 'graduated', tiers: [{ up_to: null, unit_amount: 2 }] }],
      },
    });
    expect(formal.status, formal.text).toBe(201);
    const listed = await acme.http.GET('/v1/plans', { query: { q: p.code } });
    expect(listed.body.data[0]!.prices).toEqual(p.prices);
  });

  it.each([
    [
      'tiers not ascending',
      {
        billing_scheme: 'tiered',
        tiers_mode: 'graduated',
        tiers: [
          { up_to: 10, unit_amount: 1 },
          { up_to: 5, unit_amount: 1 },
          { up_to: null, unit_amount: 1 },
        ],
      },
    ],
    [
      'overlapping tiers',
      {
        billing_scheme: 'tiered',
        tiers_mode: 'graduated',
        tiers: [
          { up_to: 10, unit_amount: 1 },
          { up_to: 10, unit_amount: 1 },
          { up_to: null, unit_amount: 1 },
        ],
      },
    ],
    ['last tier bounded', { billing_scheme: 'tiered', tiers_mode: 'graduated', tiers: [{ up_to: 10, unit_amount: 1 }] }],
    ['tiers without tiers_mode', { billing_scheme: 'tiered', tiers: [{ up_to: null, unit_amount: 1 }] }],
    ['tiered without tiers', { billing_scheme: 'tiered', tiers_mode: 'volume' }],
    ['amount and tiers', { billing_scheme: 'tiered', amount: 5, tiers_mode: 'volume', tiers: [{ up_to: null, unit_amount: 1 }] }],
    ['metered without a metric', { billing_scheme: 'metered', amount: 5 }],
    ['a zero package', { amount: 5, package_size: 0 }],
  ])('refuses %s with 400', async (_name, price) => {
    const res = await acme.api('POST', '/v1/plans', { name: 'Bad', code: uid('bad'), interval: 'month', prices: [{ currency: 'INR', ...price }] });
    expect(res.status, res.text).toBe(400);
  });

  it('refuses an unknown metric; accepts metered prices alone (a pure usage plan)', async () => {
    const unknown = await acme.api('POST', '/v1/plans', {
      name: 'Bad',
      code: uid('bad'),
      interval: 'month',
      prices: [
        { currency: 'INR', amount: 100 },
        { currency: 'INR', billing_scheme: 'metered', metric_code: 'no-such-metric', amount: 1 },
      ],
    });
    expect(unknown.status, unknown.text).toBe(400);
    const calls = await metric({ aggregation: 'count' });
    const alone = await acme.http.POST('/v1/plans', {
      body: {
        name: 'Bad',
        code: uid('bad'),
        interval: 'month',
        prices: [{ currency: 'INR', billing_scheme: 'metered', metric_code: calls.code, amount: 1 }],
      },
    });
    expect(alone.status, alone.text).toBe(201);
  });
});

describe('usage events', () => {
  it('accepts a single event (202), counts a repeat as a duplicate, 404s an unknown metric or customer', async () => {
    const m = await metric({ aggregation: 'count' });
    const customer = await createCustomer(acme);
    const tx = uid('tx');
    const first = await acme.http.POST('/v1/usage/events', { body: { transaction_id: tx, customer_id: customer, metric_code: m.code } });
    expect(first.status, first.text).toBe(202);
    expect(first.body.data).toEqual({ transaction_id: tx, duplicate: false });
    const again = await acme.http.POST('/v1/usage/events', { body: { transaction_id: tx, customer_id: customer, metric_code: m.code } });
    expect(again.body.data.duplicate).toBe(true);
    expect((await acme.http.POST('/v1/usage/events', { body: { transaction_id: uid('tx'), customer_id: customer, metric_code: 'nope' } })).status).toBe(404);
    const missing = await acme.http.POST('/v1/usage/events', {
      body: {
        transaction_id: uid('tx'),
        customer_id: '00000000-0000-4000-8000-000000000000',
        metric_code: m.code,
      },
    });
    expect(missing.status).toBe(404);
    expect(missing.error).toMatchObject({ code: 'not_found', request_id: expect.any(String) });
  });

  it('rejects bad events of a batch by index and accepts the rest', async () => {
    const sum = await metric({ aggregation: 'sum', field: 'gb' });
    const ext = uid('ext');
    const res0 = await acme.http.POST('/v1/customers', { body: { email: `${ext}@example.in`, name: 'Ext', external_id: ext } });
    expect(res0.status, res0.text).toBe(201);
    const customer = res0.body.data.id;
    const dup = uid('tx');
    const res = await batch([
      { transaction_id: dup, external_customer_id: ext, metric_code: sum.code, properties: { gb: 2.5 } },
      { transaction_id: uid('tx'), external_customer_id: ext, metric_code: 'unknown-metric', properties: { gb: 1 } },
      { transaction_id: uid('tx'), customer_id: customer, metric_code: sum.code, properties: { gb: '3' } },
      { transaction_id: uid('tx'), external_customer_id: 'nobody', metric_code: sum.code, properties: { gb: 1 } },
      { customer_id: customer, metric_code: sum.code },
      { transaction_id: dup, customer_id: customer, metric_code: sum.code, properties: { gb: 9 } },
      { transaction_id: uid('tx'), customer_id: customer, metric_code: sum.code, properties: { gb: 4 }, timestamp: '2031-01-01T00:00:00+05:30' },
    ]);
    expect(res.status, res.text).toBe(202);
    expect(res.body.data.accepted).toBe(2);
    expect(res.body.data.duplicates).toBe(1);
    expect(res.body.data.rejected.map((r: { index: number }) => r.index)).toEqual([1, 2, 3, 4]);
    expect(res.body.data.rejected[1]!.error).toMatch(/must be a number/);
  });

  it('refuses more than 1 000 events (400) and a body over 1 MiB (413)', async () => {
    const events = Array.from({ length: 1001 }, (_, i) => ({ transaction_id: `t${i}`, customer_id: '00000000-0000-4000-8000-000000000000', metric_code: 'x' }));
    expect((await acme.api('POST', '/v1/usage/events/batch', { events })).status).toBe(400);
    const big = Array.from({ length: 900 }, (_, i) => ({ transaction_id: `t${i}`, metric_code: 'x', properties: { pad: 'x'.repeat(1500) } }));
    expect((await acme.api('POST', '/v1/usage/events/batch', { events: big })).status).toBe(413);
  });
});

describe('usage billing', () => {
  it('aggregates count, sum, max, unique_count and latest over [start, end), bills them in arrears with GST per line', async () => {
    t.clock.set('2031-02-01T00:00:00Z');
    const count = await metric({ aggregation: 'count' });
    const sum = await metric({ aggregation: 'sum', field: 'gb' });
    const max = await metric({ aggregation: 'max', field: 'seats' });
    const uniq = await metric({ aggregation: 'unique_count', field: 'user' });
    const latest = await metric({ aggregation: 'latest', field: 'level' });
    const p = await plan([
      { currency: 'INR', amount: 100_000 },
      { currency: 'INR', billing_scheme: 'metered', metric_code: count.code, amount: 10, hsn_code: '998315' },
      { currency: 'INR', billing_scheme: 'metered', metric_code: sum.code, amount: 100 },
      {
        currency: 'INR',
        billing_scheme: 'metered',
        metric_code: max.code,
        tiers_mode: 'graduated',
        tiers: [
          { up_to: 2, unit_amount: 0 },
          { up_to: null, unit_amount: 500 },
        ],
      },
      { currency: 'INR', billing_scheme: 'metered', metric_code: uniq.code, amount: 1000, package_size: 2 },
      {
        currency: 'INR',
        billing_scheme: 'metered',
        metric_code: latest.code,
        tiers_mode: 'volume',
        tiers: [
          { up_to: 10, unit_amount: 7 },
          { up_to: null, unit_amount: 3 },
        ],
      },
    ]);
    const customer = await createCustomer(acme);
    const sub = await subscribe(acme, { customer_id: customer, plan_id: p.id });
    const at = (iso: string, code: string, properties: Record<string, unknown> = {}) => ({
      transaction_id: uid('tx'),
      customer_id: customer,
      metric_code: code,
      timestamp: iso,
      properties,
    });
    const res = await batch([
      at('2031-02-01T00:00:00Z', count.code),
      at('2031-02-10T00:00:00Z', count.code),
      at('2031-02-28T23:59:59.999Z', count.code),
      at('2031-03-01T00:00:00Z', count.code), // the next period
      at('2031-02-02T00:00:00Z', sum.code, { gb: 1.5 }),
      at('2031-02-03T00:00:00Z', sum.code, { gb: 2 }),
      at('2031-02-02T00:00:00Z', max.code, { seats: 4 }),
      at('2031-02-03T00:00:00Z', max.code, { seats: 3 }),
      at('2031-02-02T00:00:00Z', uniq.code, { user: 'a' }),
      at('2031-02-03T00:00:00Z', uniq.code, { user: 'b' }),
      at('2031-02-04T00:00:00Z', uniq.code, { user: 'a' }),
      at('2031-02-05T00:00:00Z', uniq.code, { user: 7 }),
      at('2031-02-02T00:00:00Z', latest.code, { level: 30 }),
      at('2031-02-20T00:00:00Z', latest.code, { level: 12 }),
      at('2031-02-10T00:00:00Z', latest.code, { level: 50 }),
    ]);
    expect(res.body.data, res.text).toMatchObject({ accepted: 15, duplicates: 0, rejected: [] });

    t.clock.set('2031-02-15T00:00:00Z');
    const usage = await acme.http.GET('/v1/subscriptions/{id}/usage', { path: { id: sub.id } });
    expect(usage.status, usage.text).toBe(200);
    expect(usage.body.data.period_start).toBe('2031-02-01T00:00:00.000Z');
    const byCode = Object.fromEntries(usage.body.data.metrics.map((m: { metric_code: string }) => [m.metric_code, m]));
    expect(byCode[count.code]).toEqual({ metric_code: count.code, quantity: 3, amount: 30, unpriced_quantity: 0, dimensions: [] });
    expect(byCode[sum.code]).toEqual({ metric_code: sum.code, quantity: 4, amount: 400, unpriced_quantity: 0, dimensions: [] }); // 3.5 GB bills 4
    expect(byCode[max.code]).toEqual({ metric_code: max.code, quantity: 4, amount: 1000, unpriced_quantity: 0, dimensions: [] });
    expect(byCode[uniq.code]).toEqual({ metric_code: uniq.code, quantity: 3, amount: 2000, unpriced_quantity: 0, dimensions: [] });
    expect(byCode[latest.code]).toEqual({ metric_code: latest.code, quantity: 12, amount: 36, unpriced_quantity: 0, dimensions: [] });

    const upcoming = await acme.http.GET('/v1/subscriptions/{id}/upcoming-invoice', { path: { id: sub.id } });
    expect(upcoming.status, upcoming.text).toBe(200);
    expect(upcoming.body.data.id).toBeNull();
    expect(upcoming.body.data.lines).toHaveLength(6);
    const before = await invoicesOf(acme, sub.id);

    await travelTo(t, '2031-03-01T00:00:00Z');
    const invoices = await invoicesOf(acme, sub.id);
    expect(invoices).toHaveLength(before.length + 1);
    const renewal = invoices.at(-1);
    expect(renewal.billing_reason).toBe('subscription_cycle');
    const lines = renewal.lines as { description: string; amount: number; hsn_code: string; cgst_amount: number; sgst_amount: number; period_start: string }[];
    expect(lines.map((l) => l.amount)).toEqual([30, 400, 1000, 2000, 36, 100_000]);
    expect(lines[0]!.hsn_code).toBe('998315');
    expect(lines[5]!.hsn_code).toBe('998314');
    expect(lines[0]!.period_start).toBe('2031-02-01T00:00:00.000Z');
    expect(lines[5]!.period_start).toBe('2031-03-01T00:00:00.000Z');
    for (const l of lines) expect(l.cgst_amount + l.sgst_amount).toBe(Math.round(l.amount * 0.09) * 2);
    expect(lines[2]!.description).toContain('4 units (graduated tiers: 1–2 at 0.00; 3–4 at 5.00)');
    // The preview computed the same lines the renewal wrote.
    expect(upcoming.body.data.lines.map((l: { amount: number }) => l.amount)).toEqual(lines.map((l) => l.amount));
    expect(upcoming.body.data.total).toBe(renewal.total);

    // The event at exactly the old period's end is in the new period.
    const next = await acme.http.GET('/v1/subscriptions/{id}/usage', { path: { id: sub.id } });
    expect(next.body.data.metrics.find((m: { metric_code: string }) => m.metric_code === count.code)!.quantity).toBe(1);

    // An event dated in the invoiced period is now refused; one in the current period accepted.
    const late = await batch([at('2031-02-27T00:00:00Z', count.code), at('2031-03-02T00:00:00Z', count.code)]);
    expect(late.body.data.accepted).toBe(1);
    expect(late.body.data.rejected).toEqual([{ index: 0, error: expect.stringMatching(/before the current period/) }]);
    const single = await acme.http.POST('/v1/usage/events', { body: at('2031-02-27T00:00:00Z', count.code) });
    expect(single.status).toBe(409);
    // The late check covers every pair of a batch: a first event of another customer, in the
    // present, does not hide a later one that is late (decision 0790: the batch's oldest event).
    const other = await createCustomer(acme);
    const mixed = await batch([{ ...at('2031-03-03T00:00:00Z', count.code), customer_id: other }, at('2031-02-26T00:00:00Z', count.code)]);
    expect(mixed.body.data.accepted).toBe(1);
    expect(mixed.body.data.rejected).toEqual([{ index: 1, error: expect.stringMatching(/before the current period/) }]);
  });

  it('bills a tiered fixed price on the subscription quantity', async () => {
    t.clock.set('2031-04-01T00:00:00Z');
    const p = await plan([
      {
        currency: 'INR',
        billing_scheme: 'tiered',
        tiers_mode: 'graduated',
        tiers: [
          { up_to: 5, unit_amount: 1000 },
          { up_to: null, unit_amount: 600, flat_amount: 200 },
        ],
      },
    ]);
    const customer = await createCustomer(acme);
    const sub = await subscribe(acme, { customer_id: customer, plan_id: p.id, quantity: 8 });
    const [first] = await invoicesOf(acme, sub.id);
    expect(first.lines[0].amount).toBe(5 * 1000 + 3 * 600 + 200);
    expect(first.lines[0].description).toContain('8 units (graduated tiers');
  });
});

describe('property: the usage amount is the price of the accepted events, whatever their order, duplicates and batches', () => {
  it('holds for count and sum metrics under tiered and package prices', async () => {
    const count = await metric({ aggregation: 'count' });
    const sum = await metric({ aggregation: 'sum', field: 'n' });
    const countTiers = [
      { up_to: 3, unit_amount: 100 },
      { up_to: 7, unit_amount: 40, flat_amount: 15 },
      { up_to: null, unit_amount: 9 },
    ];
    const countPrice: PricingScheme = { amount: 0, tiers_mode: 'graduated', tiers: countTiers };
    const sumPrice: PricingScheme = { amount: 250, package_size: 5 };
    let month = 0;
    const p = await plan([
      { currency: 'INR', amount: 1000 },
      { currency: 'INR', billing_scheme: 'metered', metric_code: count.code, tiers_mode: 'graduated', tiers: countTiers },
      { currency: 'INR', billing_scheme: 'metered', metric_code: sum.code, amount: 250, package_size: 5 },
    ]);
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ metric: fc.constantFrom('count', 'sum'), n: fc.integer({ min: 0, max: 20 }), day: fc.integer({ min: 0, max: 40 }) }), {
          maxLength: 30,
        }),
        fc.array(fc.nat(), { maxLength: 10 }),
        fc.array(fc.nat(), { maxLength: 10 }),
        fc.integer({ min: 1, max: 7 }),
        async (specs, dupPicks, order, chunk) => {
          // Each run in its own month, the clock only moving forward.
          month += 1;
          const start = new Date(Date.UTC(2032, month, 1));
          const end = new Date(Date.UTC(2032, month + 1, 1));
          t.clock.set(start.toISOString());
          const customer = await createCustomer(acme);
          const sub = await subscribe(acme, { customer_id: customer, plan_id: p.id });
          const events = specs.map((s) => ({
            transaction_id: uid('p'),
            customer_id: customer,
            metric_code: s.metric === 'count' ? count.code : sum.code,
            timestamp: new Date(start.getTime() + s.day * 86_400_000).toISOString(),
            properties: { n: s.n },
          }));
          // Duplicates (same transaction_id, another value: the first stored wins), then a shuffle.
          const sent = [...events, ...dupPicks.filter(() => events.length > 0).map((i) => ({ ...events[i % events.length]!, properties: { n: 99 } }))];
          for (const [i, j] of order.entries()) {
            const a = i % Math.max(sent.length, 1);
            const b = j % Math.max(sent.length, 1);
            if (sent.length) [sent[a], sent[b]] = [sent[b]!, sent[a]!];
          }
          const firstSeen = new Map<string, (typeof events)[number]>();
          for (const e of sent) if (!firstSeen.has(e.transaction_id)) firstSeen.set(e.transaction_id, e);
          let accepted = 0;
          for (let i = 0; i < sent.length; i += chunk) {
            const res = await batch(sent.slice(i, i + chunk));
            expect(res.status, res.text).toBe(202);
            accepted += res.body.data.accepted;
          }
          const inPeriod = [...firstSeen.values()].filter((e) => e.timestamp < end.toISOString());
          expect(accepted).toBe(firstSeen.size);
          const expectCount = priceQuantity(countPrice, inPeriod.filter((e) => e.metric_code === count.code).length).amount;
          const expectSum = priceQuantity(
            sumPrice,
            inPeriod.filter((e) => e.metric_code === sum.code).reduce((s, e) => s + e.properties.n, 0),
          ).amount;
          t.clock.set(end.toISOString());
          const report = await runBillingRun(t.database.db, t.clock.now());
          expect(report.renewed).toBeGreaterThanOrEqual(1);
          const renewal = (await invoicesOf(acme, sub.id)).at(-1);
          const usageAmount = (code: string) =>
            renewal.lines
              .filter((l: { description: string }) => l.description.includes(`usage of ${code}:`))
              .reduce((s: number, l: { amount: number }) => s + l.amount, 0);
          expect(usageAmount(count.code)).toBe(expectCount);
          expect(usageAmount(sum.code)).toBe(expectSum);
          expect(renewal.billing_reason).toBe('subscription_cycle');
          expect((await acme.http.POST('/v1/subscriptions/{id}/cancel', { path: { id: sub.id }, body: {} })).status).toBe(200);
        },
      ),
      { numRuns: 12 },
    );
  });
});
