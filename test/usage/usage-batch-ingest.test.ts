/**
 * Batched usage ingestion (decision 0430): one statement stores a batch, duplicates count once
 * wherever they repeat, and each batch queues what it stored for the usage alerts, which the
 * worker's fold evaluates (decision 0900) — firing once per period however many batches cross
 * them, at once or one after the other.
 */
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCustomer, gstinFor } from '../support/billing.js';
import { startTestKosh, type Tenant, type TestKosh } from '../support/harness.js';

let t: TestKosh;
let acme: Tenant;
let seq = 0;
const uid = (p: string) => `${p}-${(seq += 1)}-${Math.random().toString(36).slice(2, 8)}`;

beforeAll(async () => {
  t = await startTestKosh();
  t.clock.set('2031-01-10T00:00:00Z');
  acme = await t.registerTenant({ gstin: gstinFor('29') });
});
afterAll(() => t.close());

async function metric(tenant: Tenant, aggregation: 'count' | 'sum' = 'sum'): Promise<string> {
  const code = uid('m');
  const res = await tenant.http.POST('/v1/billable-metrics', { body: { code, name: 'Metric', aggregation, ...(aggregation === 'sum' ? { field: 'n' } : {}) } });
  expect(res.status, res.text).toBe(201);
  return code;
}

const batch = (tenant: Tenant, events: Record<string, unknown>[]) => tenant.http.POST('/v1/usage/events/batch', { body: { events } });

/** The customer's stored events: how many, and the sum of their values. */
async function storedSum(tenantId: string, customer: string): Promise<{ rows: number; sum: number }> {
  const { rows } = await sql<{ rows: number; sum: string | null }>`
    SELECT count(*)::int AS rows, sum(value)::text AS sum FROM usage_events WHERE tenant_id = ${tenantId} AND customer_id = ${customer}`.execute(t.database.db);
  return { rows: rows[0]!.rows, sum: Number(rows[0]!.sum ?? 0) };
}

async function alert(customer: string, code: string, threshold: number) {
  const res = await acme.http.POST('/v1/alerts', { body: { customer_id: customer, type: 'usage_threshold', metric_code: code, threshold } });
  expect(res.status, res.text).toBe(201);
  return res.body.data.id as string;
}

/** The alert's trigger rows and `alert.triggered` events, once the worker has folded what was queued. */
async function triggersOf(alertId: string): Promise<{ rows: number; events: number }> {
  await t.kosh.worker.drain();
  const rows = await sql<{ n: number }>`SELECT count(*)::int AS n FROM alert_triggers WHERE alert_id = ${alertId}`.execute(t.database.db);
  const events = await acme.http.GET('/v1/events', { query: { type: 'alert.triggered', limit: 100 } });
  return { rows: rows.rows[0]!.n, events: events.body.data.filter((e) => e.data.object.id === alertId).length };
}

describe('batched usage ingestion', () => {
  it('stores a transaction_id repeated in a batch, across batches and in batches sent at once exactly once (the first in a batch wins)', async () => {
    const code = await metric(acme);
    const customer = await createCustomer(acme);
    const [a, b, c] = [uid('tx'), uid('tx'), uid('tx')];
    const event = (id: string, n: number) => ({ transaction_id: id, customer_id: customer, metric_code: code, properties: { n } });

    const first = await batch(acme, [event(a, 1), event(b, 2), event(a, 100), event(a, 100)]);
    expect(first.status, first.text).toBe(202);
    expect(first.body.data).toEqual({ accepted: 2, duplicates: 2, rejected: [] });

    // A retry of the batch without timestamps (each is stamped with a new instant) adds nothing.
    t.clock.set('2031-01-10T00:05:00Z');
    const retry = await batch(acme, [event(a, 1), event(b, 2)]);
    expect(retry.body.data).toEqual({ accepted: 0, duplicates: 2, rejected: [] });

    // Five batches at once, each carrying c and one id of its own: c is stored by one of them.
    const together = await Promise.all(Array.from({ length: 5 }, (_, i) => batch(acme, [event(c, 10), event(uid('tx'), i + 1)])));
    for (const res of together) expect(res.status, res.text).toBe(202);
    expect(together.reduce((n, res) => n + res.body.data.accepted, 0)).toBe(6);
    expect(together.reduce((n, res) => n + res.body.data.duplicates, 0)).toBe(4);

    // 1 + 2 (the first batch) + 10 (c) + 1..5 (the five ids of their own).
    expect(await storedSum(acme.tenantId, customer)).toEqual({ rows: 8, sum: 1 + 2 + 10 + 15 });
  });

  it('keeps tenants apart: the same transaction_id is a new event for another tenant', async () => {
    const other = await t.registerTenant({ gstin: gstinFor('27') });
    const [ours, theirs] = [await metric(acme), await metric(other)];
    const [mine, yours] = [await createCustomer(acme), await createCustomer(other)];
    const id = uid('shared');
    expect((await batch(acme, [{ transaction_id: id, customer_id: mine, metric_code: ours, properties: { n: 3 } }])).body.data.accepted).toBe(1);
    expect((await batch(other, [{ transaction_id: id, customer_id: yours, metric_code: theirs, properties: { n: 4 } }])).body.data.accepted).toBe(1);
    // Another tenant's customer is not found, and its metric code is not ours.
    const crossed = await batch(acme, [
      { transaction_id: uid('tx'), customer_id: yours, metric_code: ours, properties: { n: 1 } },
      { transaction_id: uid('tx'), customer_id: mine, metric_code: theirs, properties: { n: 1 } },
    ]);
    expect(crossed.body.data.accepted).toBe(0);
    expect(crossed.body.data.rejected.map((r: { index: number }) => r.index)).toEqual([0, 1]);
    expect(await storedSum(acme.tenantId, mine)).toEqual({ rows: 1, sum: 3 });
    expect(await storedSum(other.tenantId, yours)).toEqual({ rows: 1, sum: 4 });
  });

  it('fires a usage alert once per period when batches sent at once cross it; alerts on the same quantity each fire once', async () => {
    const code = await metric(acme);
    const customer = await createCustomer(acme);
    const [low, high, never] = [await alert(customer, code, 5), await alert(customer, code, 12), await alert(customer, code, 1_000)];
    const events = (n: number) =>
      Array.from({ length: n }, () => ({ transaction_id: uid('tx'), customer_id: customer, metric_code: code, properties: { n: 1 } }));
    const sent = await Promise.all(Array.from({ length: 6 }, () => batch(acme, events(3))));
    for (const res of sent) expect(res.body.data.accepted, res.text).toBe(3);
    // 18 ≥ 12 ≥ 5: both crossed, each once (a trigger row and one alert.triggered); 1 000 is not.
    expect(await triggersOf(low)).toEqual({ rows: 1, events: 1 });
    expect(await triggersOf(high)).toEqual({ rows: 1, events: 1 });
    expect(await triggersOf(never)).toEqual({ rows: 0, events: 0 });
    await batch(acme, events(4));
    expect(await triggersOf(low)).toEqual({ rows: 1, events: 1 });
    // The next calendar month (no subscription) is a new period: the batch crossing it fires again.
    t.clock.set('2031-02-01T00:00:01Z');
    expect((await batch(acme, events(5))).body.data.accepted).toBe(5);
    expect(await triggersOf(low)).toEqual({ rows: 2, events: 2 });
    expect(await triggersOf(high)).toEqual({ rows: 1, events: 1 });
    t.clock.set('2031-01-10T00:10:00Z');
  });

  it.runIf(process.env.DATABASE_URL)('sends as many statements for a batch whatever the number of alerts watching it', async () => {
    const code = await metric(acme, 'count');
    const [few, many] = [await createCustomer(acme), await createCustomer(acme)];
    await alert(few, code, 1);
    for (let i = 0; i < 20; i += 1) await alert(many, code, 1 + i);
    const events = (customer: string, n: number) => Array.from({ length: n }, () => ({ transaction_id: uid('tx'), customer_id: customer, metric_code: code }));
    // Cross them all first: from then on nothing can happen to them until the next period.
    expect((await batch(acme, events(few, 25))).status).toBe(202);
    expect((await batch(acme, events(many, 25))).status).toBe(202);
    await t.kosh.worker.drain();
    const counted = (customer: string) => statementsOf(() => batch(acme, events(customer, 10)), 10);
    const [withOne, withTwenty] = [await counted(few), await counted(many)];
    expect(withTwenty).toBe(withOne);
  });

  it.runIf(process.env.DATABASE_URL)(
    'queues a watched batch in the statements of an unwatched one; the fold evaluates the alerts it moves in one statement, whatever their number',
    async () => {
      const code = await metric(acme, 'count');
      const customers = [await createCustomer(acme), await createCustomer(acme), await createCustomer(acme)];
      const unwatched = await createCustomer(acme);
      for (const [i, customer] of customers.entries()) for (let k = 0; k < 4; k += 1) await alert(customer, code, 1000 + 10 * i + k);
      const events = (who: string[], n: number) =>
        Array.from({ length: n }, (_, i) => ({ transaction_id: uid('tx'), customer_id: who[i % who.length]!, metric_code: code }));
      await t.kosh.worker.drain();
      const none = await statementsOf(() => batch(acme, events([unwatched], 12)), 12);
      const foldNone = await countStatements(() => t.kosh.worker.drain());
      const twelveOpen = await statementsOf(() => batch(acme, events(customers, 12)), 12);
      const foldTwelve = await countStatements(() => t.kosh.worker.drain());
      // The queue row rides the batch's round trips whether an alert watches it or not, and the
      // fold is its lock and one statement measuring the alerts, none or twelve.
      expect(twelveOpen).toBe(none);
      expect(foldTwelve).toBe(foldNone);
      const queued = await sql<{ n: number }>`SELECT count(*)::int AS n FROM usage_alert_pending WHERE tenant_id = ${acme.tenantId}`.execute(t.database.db);
      expect(queued.rows[0]!.n).toBe(0);
      // None was crossed; crossed in the next batch, each triggers once.
      const crossing = Array.from({ length: 1030 }, (_, i) => ({
        transaction_id: uid('tx'),
        customer_id: customers[0]!,
        metric_code: code,
        properties: { i },
      }));
      expect((await batch(acme, crossing.slice(0, 1000))).body.data.accepted).toBe(1000);
      expect((await batch(acme, crossing.slice(1000))).body.data.accepted).toBe(30);
      await t.kosh.worker.drain();
      const fired = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM alert_triggers t JOIN alerts a ON a.tenant_id = t.tenant_id AND a.id = t.alert_id
       WHERE a.customer_id = ${customers[0]!}`.execute(t.database.db);
      expect(fired.rows[0]!.n).toBe(4);
    },
  );

  it('takes a plain batch as it came, strips keys it does not know, and answers a malformed one 400 in the error envelope', async () => {
    const code = await metric(acme);
    const customer = await createCustomer(acme);
    const tx = uid('tx');
    const res = await batch(acme, [
      { transaction_id: tx, customer_id: customer, metric_code: code, properties: { n: 2 } },
      { transaction_id: uid('tx'), customer_id: customer, metric_code: code, properties: { n: 3 }, note: 'not a field' },
      { transaction_id: uid('tx'), customer_id: customer.toUpperCase(), metric_code: code, properties: { n: 4 } },
      { transaction_id: uid('tx'), customer_id: customer, metric_code: code, properties: { n: 5 }, timestamp: '2031-02-30T00:00:00Z' },
    ]);
    expect(res.status, res.text).toBe(202);
    expect(res.body.data.accepted).toBe(2);
    expect(res.body.data.rejected.map((r: { index: number }) => r.index)).toEqual([2, 3]);
    expect(await storedSum(acme.tenantId, customer)).toEqual({ rows: 2, sum: 5 });
    const stored = await sql<{
      properties: unknown;
    }>`SELECT properties FROM usage_events WHERE tenant_id = ${acme.tenantId} AND transaction_id = ${tx}`.execute(t.database.db);
    expect(stored.rows).toEqual([{ properties: { n: 2 } }]);
    for (const body of [{ events: 'x' }, { events: [] }, { events: [1] }, [{ events: [] }]]) {
      const refused = await acme.api('POST', '/v1/usage/events/batch', body);
      expect(refused.status, JSON.stringify(body)).toBe(400);
      expect(refused.body.error.code, refused.text).toBe('validation_failed');
    }
  });

  it('stores each timestamp as the instant it names: offsets, fractions and none', async () => {
    t.clock.set('2031-01-10T00:10:00Z');
    const code = await metric(acme);
    const customer = await createCustomer(acme);
    const stamps = ['2031-01-10T05:30:00+05:30', '2031-01-09T23:00:00.5Z', '2031-01-09T23:00:00.123456Z', '2031-01-09T18:29:59.999-05:30', undefined];
    const res = await batch(
      acme,
      stamps.map((timestamp, i) => ({ transaction_id: `ts-${i}-${uid('x')}`, customer_id: customer, metric_code: code, timestamp, properties: { n: i } })),
    );
    expect(res.body.data).toEqual({ accepted: 5, duplicates: 0, rejected: [] });
    const { rows } = await sql<{
      ts: Date;
    }>`SELECT ts FROM usage_events WHERE tenant_id = ${acme.tenantId} AND customer_id = ${customer} ORDER BY value`.execute(t.database.db);
    expect(rows.map((r) => r.ts.toISOString())).toEqual([
      '2031-01-10T00:00:00.000Z',
      '2031-01-09T23:00:00.500Z',
      '2031-01-09T23:00:00.123Z',
      '2031-01-09T23:59:59.999Z',
      '2031-01-10T00:10:00.000Z',
    ]);
  });
});

/** The statements a request sends (background work on other connections excluded), checking the batch accepted `accepted`. */
async function statementsOf(request: () => Promise<{ body: { data: { accepted: number } } }>, accepted: number): Promise<number> {
  return countStatements(async () => expect((await request()).body.data.accepted).toBe(accepted));
}

/** The statements sent while `work` runs. */
async function countStatements(work: () => Promise<unknown>): Promise<number> {
  let statements = 0;
  const original = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: string } | undefined)?.text;
    // Background work on other connections (rate-limit flushes, the change feed's heartbeats) is not the batch's.
    if (text !== undefined && !/\brate_limit_counters\b|\bpg_notify\b|^LISTEN\b/.test(text)) statements += 1;
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof original;
  try {
    await work();
  } finally {
    pg.Client.prototype.query = original;
  }
  return statements;
}
