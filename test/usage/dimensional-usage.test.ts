/**
 * DESIGN §24, dimensional usage (decision 0480): a metric broken down by model and direction, a
 * metered price with a price per combination, the usage endpoint and the renewal invoice with one
 * line per combination used, and usage no dimension price matches — unpriced without a default,
 * billed at the default with one. Figures worked by hand in each test.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { operations } from '../../clients/typescript/src/schema.js';
import { startTestKosh, type Tenant, type TestKosh } from '../support/harness.js';
import { createCustomer, invoicesOf, karnatakaTenant, subscribe, travelTo } from '../subscriptions/helpers.js';

let t: TestKosh;
let acme: Tenant;
let seq = 0;
const uid = (p: string) => `${p}-${(seq += 1)}-${Math.random().toString(36).slice(2, 8)}`;

beforeAll(async () => {
  t = await startTestKosh();
  t.clock.set('2031-02-01T00:00:00Z');
  acme = await karnatakaTenant(t);
});
afterAll(() => t.close());

type PlanPrice = NonNullable<operations['createPlan']['requestBody']['content']['application/json']['prices']>[number];

async function tokensMetric(): Promise<{ id: string; code: string; dimensions: string[] }> {
  const res = await acme.http.POST('/v1/billable-metrics', {
    body: {
      code: uid('llm_tokens'),
      name: 'LLM tokens',
      aggregation: 'sum',
      field: 'tokens',
      dimensions: ['model', 'direction'],
    },
  });
  expect(res.status, res.text).toBe(201);
  return res.body.data;
}

// ₹0.0005 a token is 0.05 paise: priced per package of 1 000 tokens (50 paise = ₹0.50 per 1 000).
const gpt4 = [
  { match: { model: 'gpt-4', direction: 'input' }, unit_amount: 50, package_size: 1000 },
  { match: { model: 'gpt-4', direction: 'output' }, unit_amount: 150, package_size: 1000 },
];

async function usagePlan(metricCode: string, price: Omit<PlanPrice, 'currency'>) {
  const res = await acme.http.POST('/v1/plans', {
    body: {
      name: 'LLM',
      code: uid('llm'),
      interval: 'month',
      hsn_code: '998315',
      prices: [{ currency: 'INR', billing_scheme: 'metered', metric_code: metricCode, ...price }],
    },
  });
  expect(res.status, res.text).toBe(201);
  return res.body.data;
}

async function send(customer: string, metricCode: string, events: [string, Record<string, unknown>][]) {
  const res = await acme.http.POST('/v1/usage/events/batch', {
    body: {
      events: events.map(([timestamp, properties]) => ({ transaction_id: uid('tx'), customer_id: customer, metric_code: metricCode, timestamp, properties })),
    },
  });
  expect(res.body.data, res.text).toMatchObject({ accepted: events.length, rejected: [] });
}

type Line = { description: string; quantity: number; unit_amount: number; amount: number; cgst_amount: number; sgst_amount: number; hsn_code: string };

describe('dimensional usage', () => {
  it('shows the metric dimensions and the price dimension_prices; refuses malformed ones', async () => {
    const m = await tokensMetric();
    expect(m.dimensions).toEqual(['model', 'direction']);
    expect((await acme.http.GET('/v1/billable-metrics/{id}', { path: { id: m.id } })).body.data.dimensions).toEqual(['model', 'direction']);
    const plain = await acme.http.POST('/v1/billable-metrics', { body: { code: uid('calls'), name: 'Calls', aggregation: 'count' } });
    expect(plain.body.data.dimensions).toEqual([]);
    const repeated = await acme.api('POST', '/v1/billable-metrics', { code: uid('x'), name: 'X', aggregation: 'count', dimensions: ['model', 'model'] });
    expect(repeated.status).toBe(400);

    const p = await usagePlan(m.code, { dimension_prices: gpt4 });
    expect(p.prices[0]).toMatchObject({
      amount: 0,
      tiers: null,
      dimension_prices: [
        { match: { model: 'gpt-4', direction: 'input' }, unit_amount: 50, package_size: 1000, tiers_mode: null, tiers: null },
        { match: { model: 'gpt-4', direction: 'output' }, unit_amount: 150, package_size: 1000, tiers_mode: null, tiers: null },
      ],
    });
    const listed = await acme.http.GET('/v1/plans', { query: { q: p.code } });
    expect(listed.body.data[0]!.prices[0]!.dimension_prices).toHaveLength(2);

    const bad = async (price: Record<string, unknown>) => {
      const res = await acme.api('POST', '/v1/plans', { name: 'Bad', code: uid('bad'), interval: 'month', prices: [{ currency: 'INR', ...price }] });
      expect(res.status, JSON.stringify(price)).toBe(400);
    };
    await bad({ billing_scheme: 'per_unit', amount: 100, dimension_prices: gpt4 }); // only metered
    await bad({ billing_scheme: 'metered', metric_code: m.code, dimension_prices: [{ match: { model: 'gpt-4' } }] }); // no price
    await bad({ billing_scheme: 'metered', metric_code: m.code, dimension_prices: [{ match: {}, unit_amount: 1 }] }); // empty match
    await bad({ billing_scheme: 'metered', metric_code: m.code, dimension_prices: [gpt4[0], { ...gpt4[0], unit_amount: 70 }] }); // same match twice
    await bad({
      billing_scheme: 'metered',
      metric_code: m.code,
      dimension_prices: [{ match: { model: 'a' }, unit_amount: 1, tiers_mode: 'volume', tiers: [{ up_to: null, unit_amount: 1 }] }],
    }); // both
    await bad({ billing_scheme: 'metered', metric_code: m.code }); // neither amount nor dimension prices
  });

  it('bills one line per combination used; usage matching no price of a price without a default is counted as unpriced', async () => {
    t.clock.set('2031-02-01T00:00:00Z');
    const m = await tokensMetric();
    const p = await usagePlan(m.code, { dimension_prices: gpt4 });
    const customer = await createCustomer(acme);
    const sub = await subscribe(acme, { customer_id: customer, plan_id: p.id });
    await send(customer, m.code, [
      ['2031-02-03T00:00:00Z', { model: 'gpt-4', direction: 'input', tokens: 600_000 }],
      ['2031-02-10T00:00:00Z', { model: 'gpt-4', direction: 'input', tokens: 400_000 }],
      ['2031-02-11T00:00:00Z', { model: 'gpt-4', direction: 'output', tokens: 200_000 }],
      ['2031-02-12T00:00:00Z', { model: 'gpt-3.5', direction: 'input', tokens: 10_000 }], // matches no price
      ['2031-03-01T00:00:00Z', { model: 'gpt-4', direction: 'input', tokens: 999_000 }], // the next period
    ]);

    t.clock.set('2031-02-20T00:00:00Z');
    const usage = await acme.http.GET('/v1/subscriptions/{id}/usage', { path: { id: sub.id } });
    expect(usage.status, usage.text).toBe(200);
    // input: 1 000 000 tokens = 1 000 packages × 50 = 50 000 paise (₹500);
    // output: 200 000 tokens = 200 packages × 150 = 30 000 paise (₹300); gpt-3.5: 10 000 tokens, unpriced.
    expect(usage.body.data.metrics).toEqual([
      {
        metric_code: m.code,
        quantity: 1_210_000,
        amount: 80_000,
        unpriced_quantity: 10_000,
        dimensions: [
          { dimensions: { model: 'gpt-3.5', direction: 'input' }, quantity: 10_000, amount: 0, priced: false },
          { dimensions: { model: 'gpt-4', direction: 'input' }, quantity: 1_000_000, amount: 50_000, priced: true },
          { dimensions: { model: 'gpt-4', direction: 'output' }, quantity: 200_000, amount: 30_000, priced: true },
        ],
      },
    ]);

    const upcoming = await acme.http.GET('/v1/subscriptions/{id}/upcoming-invoice', { path: { id: sub.id } });
    expect(upcoming.status, upcoming.text).toBe(200);
    await travelTo(t, '2031-03-01T00:00:00Z');
    const invoices = await invoicesOf(acme, sub.id);
    const renewal = invoices.at(-1);
    const lines = renewal.lines as Line[];
    // The unpriced combination costs nothing: no line.
    expect(lines.map((l) => l.amount)).toEqual([50_000, 30_000]);
    expect(lines[0]!.description).toContain('usage of ' + m.code + ' (direction input, model gpt-4)');
    expect(lines[0]!.description).toContain('1,000 packages of 1,000 at 0.50');
    expect(lines[1]!.description).toContain('(direction output, model gpt-4)');
    expect(lines[1]!.description).toContain('200 packages of 1,000 at 1.50');
    expect(lines.map((l) => [l.quantity, l.unit_amount])).toEqual([
      [1, 50_000],
      [1, 30_000],
    ]);
    expect(lines.every((l) => l.hsn_code === '998315')).toBe(true);
    // GST intra-state at 18%: CGST 9% + SGST 9% per line: 4 500 + 4 500 and 2 700 + 2 700.
    expect(lines.map((l) => [l.cgst_amount, l.sgst_amount])).toEqual([
      [4_500, 4_500],
      [2_700, 2_700],
    ]);
    expect(renewal).toMatchObject({ subtotal: 80_000, cgst_amount: 7_200, sgst_amount: 7_200, tax_amount: 14_400, total: 94_400 });
    expect(upcoming.body.data.total).toBe(94_400);

    // The new period holds only the event at its first instant.
    const next = await acme.http.GET('/v1/subscriptions/{id}/usage', { path: { id: sub.id } });
    expect(next.body.data.metrics[0]).toMatchObject({ quantity: 999_000, amount: 49_950, unpriced_quantity: 0 });
  });

  it("bills usage matching no dimension price at the price's default, an event lacking a dimension included", async () => {
    t.clock.set('2031-04-01T00:00:00Z');
    const m = await tokensMetric();
    // Default: ₹0.20 per 1 000 tokens; gpt-4o: graduated tiers, the first 1 000 tokens free, then 1 paisa a token.
    const p = await usagePlan(m.code, {
      amount: 20,
      package_size: 1000,
      dimension_prices: [
        ...gpt4,
        {
          match: { model: 'gpt-4o' },
          tiers_mode: 'graduated',
          tiers: [
            { up_to: 1000, unit_amount: 0 },
            { up_to: null, unit_amount: 1 },
          ],
        },
      ],
    });
    const customer = await createCustomer(acme);
    const sub = await subscribe(acme, { customer_id: customer, plan_id: p.id });
    await send(customer, m.code, [
      ['2031-04-03T00:00:00Z', { model: 'gpt-4', direction: 'input', tokens: 1_000_000 }],
      ['2031-04-11T00:00:00Z', { model: 'gpt-4', direction: 'output', tokens: 200_000 }],
      ['2031-04-12T00:00:00Z', { model: 'gpt-3.5', direction: 'input', tokens: 10_000 }], // default
      ['2031-04-13T00:00:00Z', { model: 'gpt-4', tokens: 5_000 }], // no direction: matches no gpt-4 price, default
      ['2031-04-14T00:00:00Z', { model: 'gpt-4o', direction: 'input', tokens: 1_500 }], // tiers: 500 × 1
    ]);

    t.clock.set('2031-04-20T00:00:00Z');
    const usage = await acme.http.GET('/v1/subscriptions/{id}/usage', { path: { id: sub.id } });
    // gpt-3.5: 10 packages × 20 = 200; gpt-4 without direction: 5 × 20 = 100; gpt-4o: 1 000 free + 500 × 1 = 500.
    expect(usage.body.data.metrics).toEqual([
      {
        metric_code: m.code,
        quantity: 1_216_500,
        amount: 80_800,
        unpriced_quantity: 0,
        dimensions: [
          { dimensions: { model: 'gpt-3.5', direction: 'input' }, quantity: 10_000, amount: 200, priced: true },
          { dimensions: { model: 'gpt-4', direction: 'input' }, quantity: 1_000_000, amount: 50_000, priced: true },
          { dimensions: { model: 'gpt-4', direction: 'output' }, quantity: 200_000, amount: 30_000, priced: true },
          { dimensions: { model: 'gpt-4', direction: null }, quantity: 5_000, amount: 100, priced: true },
          { dimensions: { model: 'gpt-4o', direction: 'input' }, quantity: 1_500, amount: 500, priced: true },
        ],
      },
    ]);

    await travelTo(t, '2031-05-01T00:00:00Z');
    const renewal = (await invoicesOf(acme, sub.id)).at(-1);
    const lines = renewal.lines as Line[];
    expect(lines.map((l) => l.amount)).toEqual([200, 50_000, 30_000, 100, 500]);
    expect(lines[3]!.description).toContain('(direction (none), model gpt-4)');
    expect(lines[4]!.description).toContain('graduated tiers: 1–1,000 at 0.00; 1,001–1,500 at 0.01');
    // CGST = SGST per line: 18, 4 500, 2 700, 9, 45 → 7 272 each; tax 14 544; total 80 800 + 14 544 = 95 344.
    expect(lines.map((l) => l.cgst_amount)).toEqual([18, 4_500, 2_700, 9, 45]);
    expect(renewal).toMatchObject({ subtotal: 80_800, cgst_amount: 7_272, sgst_amount: 7_272, tax_amount: 14_544, total: 95_344 });
  });
  describe('dimension keys (decision 0560)', () => {
    it('refuses a dimension price matching on a key its metric does not declare, on a new plan and on a new price', async () => {
      const m = await tokensMetric(); // dimensions: model, direction
      const res = await acme.api('POST', '/v1/plans', {
        name: 'LLM',
        code: uid('llm'),
        interval: 'month',
        prices: [
          {
            currency: 'INR',
            billing_scheme: 'metered',
            metric_code: m.code,
            dimension_prices: [gpt4[0], { match: { model: 'gpt-4', region: 'eu' }, unit_amount: 70 }],
          },
        ],
      });
      expect(res.status, res.text).toBe(400);
      expect(res.body.error.details).toEqual([
        { field: 'prices.0.dimension_prices.1.match.region', message: `is not a dimension of metric ${m.code} (its dimensions are model, direction)` },
      ]);
      expect(res.body.error.message).toBe(
        `prices.0.dimension_prices.1.match.region is not a dimension of metric ${m.code} (its dimensions are model, direction)`,
      );

      // A metric without dimensions: every match key is refused.
      const calls = await acme.http.POST('/v1/billable-metrics', { body: { code: uid('calls'), name: 'Calls', aggregation: 'count' } });
      const flat = await acme.api('POST', '/v1/plans', {
        name: 'Calls',
        code: uid('calls'),
        interval: 'month',
        prices: [
          { currency: 'INR', billing_scheme: 'metered', metric_code: calls.body.data.code, dimension_prices: [{ match: { model: 'x' }, unit_amount: 1 }] },
        ],
      });
      expect(flat.status, flat.text).toBe(400);
      expect(flat.body.error.details[0].message).toBe(`is not a dimension of metric ${calls.body.data.code} (it declares no dimensions)`);

      // A new price of an existing plan: refused the same way, and the plan keeps its price.
      const p = await usagePlan(m.code, { dimension_prices: gpt4 });
      const added = await acme.api('POST', `/v1/plans/${p.id}/prices`, {
        currency: 'INR',
        billing_scheme: 'metered',
        metric_code: m.code,
        dimension_prices: [{ match: { direction: 'input', tier: 'gold' }, unit_amount: 1 }],
      });
      expect(added.status, added.text).toBe(400);
      expect(added.body.error.details).toEqual([
        { field: 'dimension_prices.0.match.tier', message: `is not a dimension of metric ${m.code} (its dimensions are model, direction)` },
      ]);
      const after = await acme.http.GET('/v1/plans/{id}', { path: { id: p.id } });
      expect(after.body.data.prices.map((x: { id: string; active: boolean }) => [x.id, x.active])).toEqual([[p.prices[0]!.id, true]]);
    });

    it("accepts events whose properties go beyond the metric's dimensions: the extra ones do not split a combination", async () => {
      t.clock.set('2031-06-01T00:00:00Z');
      const m = await tokensMetric();
      const p = await usagePlan(m.code, { dimension_prices: gpt4 });
      const customer = await createCustomer(acme);
      const sub = await subscribe(acme, { customer_id: customer, plan_id: p.id });
      await send(customer, m.code, [
        ['2031-06-03T00:00:00Z', { model: 'gpt-4', direction: 'input', region: 'eu', tokens: 300_000 }],
        ['2031-06-04T00:00:00Z', { model: 'gpt-4', direction: 'input', region: 'us', tokens: 700_000 }],
      ]);
      t.clock.set('2031-06-10T00:00:00Z');
      const usage = await acme.http.GET('/v1/subscriptions/{id}/usage', { path: { id: sub.id } });
      // One combination, regions merged: 1 000 000 tokens = 1 000 packages × 50 paise = 50 000.
      expect(usage.body.data.metrics[0]!.dimensions).toEqual([
        { dimensions: { model: 'gpt-4', direction: 'input' }, quantity: 1_000_000, amount: 50_000, priced: true },
      ]);
      await acme.http.POST('/v1/subscriptions/{id}/cancel', { path: { id: sub.id }, body: { at_period_end: false } });
    });
  });
});
