/**
 * Running totals of usage alerts (decision 0800): an open recurring alert on a count, sum or max
 * metric keeps its period's quantity, moved by each batch's own events instead of re-aggregating the
 * period. The total must always equal what the period's events aggregate to — duplicates counted
 * once, events of other periods not at all — and an alert still triggers exactly once.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCustomer, gstinFor } from '../support/billing.js';
import { startTestKosh, type Tenant, type TestKosh } from '../support/harness.js';
import { recordUsageEvents } from '../../src/flows/usage/record-usage-events.js';
import { lockUsageFold } from '../../src/modules/alerts/alerts.repository.js';

let t: TestKosh;
let acme: Tenant;
let seq = 0;
const uid = (p: string) => `${p}-${(seq += 1)}-${Math.random().toString(36).slice(2, 8)}`;
/** Customers without a subscription: their alerts' period is the UTC month. */
const PERIOD_START = '2031-03-01T00:00:00.000Z';

beforeAll(async () => {
  t = await startTestKosh();
  t.clock.set('2031-03-10T00:00:00Z');
  acme = await t.registerTenant({ gstin: gstinFor('29') });
});
afterAll(() => t.close());

async function metric(aggregation: 'count' | 'sum' | 'max' | 'unique_count', tenant = acme): Promise<string> {
  const code = uid('m');
  const res = await tenant.http.POST('/v1/billable-metrics', {
    body: { code, name: 'Metric', aggregation, ...(aggregation === 'count' ? {} : { field: 'n' }) },
  });
  expect(res.status, JSON.stringify(res.error)).toBe(201);
  return code;
}

async function alert(customer: string, code: string, threshold: number, tenant = acme): Promise<string> {
  const res = await tenant.http.POST('/v1/alerts', {
    body: { customer_id: customer, type: 'usage_threshold', metric_code: code, threshold, action: 'notify' },
  });
  expect(res.status, JSON.stringify(res.error)).toBe(201);
  return res.body!.data.id;
}

type Event = { transaction_id: string; customer_id: string; metric_code: string; timestamp?: string; properties?: Record<string, unknown> };
const event = (customer: string, code: string, n: number | string, extra: Partial<Event> = {}): Event => ({
  transaction_id: uid('tx'),
  customer_id: customer,
  metric_code: code,
  properties: { n },
  ...extra,
});

/** Sends a batch, then runs the worker once: its fold moves the alerts' totals (decision 0900). */
async function send(events: Event[], accepted: number, tenant = acme): Promise<void> {
  const res = await tenant.api('POST', '/v1/usage/events/batch', { events });
  expect(res.status, res.text).toBe(202);
  expect(res.body.data.accepted, res.text).toBe(accepted);
  await t.kosh.worker.drain();
}

/** The alert's kept total, if any. */
async function keptOf(alertId: string): Promise<{ period_start: string; total: number | null } | null> {
  const { rows } = await sql<{ period_start: Date; total: string | null }>`
    SELECT period_start, total::text AS total FROM usage_alert_totals
     WHERE alert_id = ${alertId}`.execute(t.database.db);
  const row = rows[0];
  return row ? { period_start: row.period_start.toISOString(), total: row.total === null ? null : Number(row.total) } : null;
}

/** The period's quantity as the events aggregate it, computed here from usage_events. */
async function periodSum(customer: string, since = PERIOD_START): Promise<{ count: number; sum: number }> {
  const { rows } = await sql<{ count: number; sum: string | null }>`
    SELECT count(*)::int AS count, sum(value)::text AS sum FROM usage_events
     WHERE customer_id = ${customer} AND ts >= ${since}`.execute(t.database.db);
  return { count: rows[0]!.count, sum: Number(rows[0]!.sum ?? 0) };
}

async function triggersOf(alertId: string, tenant = acme): Promise<{ rows: number; events: number }> {
  const rows = await sql<{ n: number }>`SELECT count(*)::int AS n FROM alert_triggers WHERE tenant_id = ${tenant.tenantId} AND alert_id = ${alertId}`.execute(
    t.database.db,
  );
  const events = await tenant.api('GET', '/v1/events?type=alert.triggered&limit=100');
  return { rows: rows.rows[0]!.n, events: events.body.data.filter((e: { data: { object: { id: string } } }) => e.data.object.id === alertId).length };
}

/**
 * A batch recorded through the ingestion flow in a transaction left open (its events and queued
 * row stored, not visible to others) until `commit()` is called.
 */
async function batchInFlight(tenant: Tenant, events: Event[]): Promise<{ commit: () => Promise<void> }> {
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  let stored!: () => void;
  const inserted = new Promise<void>((r) => (stored = r));
  const inFlight = t.database.db.transaction().execute(async (tx) => {
    await recordUsageEvents({ tx, tenantId: tenant.tenantId, now: t.clock.now() }, events);
    await sql`SELECT 1`.execute(tx); // the batch's deferred writes have been answered
    stored();
    await held;
  });
  await inserted;
  return {
    commit: async () => {
      release();
      await inFlight;
    },
  };
}

describe('usage alert running totals', () => {
  it('keeps the period sum exactly through duplicates, late and future events; triggers once when it is reached', async () => {
    const code = await metric('sum');
    const customer = await createCustomer(acme);
    const id = await alert(customer, code, 100);
    const first = [event(customer, code, 10), event(customer, code, 5)];
    await send(first, 2);
    expect((await keptOf(id))?.total).toBe(15);
    // Duplicates in the batch and of stored events (with other values: the first stored wins), an
    // event of the previous month (another period) and one dated after the period.
    const again = event(customer, code, 7);
    await send(
      [
        again,
        { ...again, properties: { n: 70 } },
        { ...first[0]!, properties: { n: 1000 } },
        event(customer, code, 500, { timestamp: '2031-02-27T00:00:00Z' }),
        event(customer, code, 3, { timestamp: '2031-05-01T00:00:00Z' }),
      ],
      3,
    );
    expect((await keptOf(id))?.total).toBe(25);
    expect((await periodSum(customer)).sum).toBe(25);
    expect(await triggersOf(id)).toEqual({ rows: 0, events: 0 });
    // Every event of this batch is new: the total moves by its own events only.
    await send([event(customer, code, 40), event(customer, code, 33.5), event(customer, code, 1000, { timestamp: '2031-01-05T00:00:00Z' })], 3);
    expect((await keptOf(id))?.total).toBe(98.5);
    expect(await triggersOf(id)).toEqual({ rows: 0, events: 0 });
    // 99.25 bills 100: reached.
    await send([event(customer, code, 0.75)], 1);
    expect((await keptOf(id))?.total).toBe(99.25);
    expect(await triggersOf(id)).toEqual({ rows: 1, events: 1 });
    await send([event(customer, code, 50)], 1);
    expect(await triggersOf(id)).toEqual({ rows: 1, events: 1 });
  });

  it('moves a kept total by the batch alone (the period is not aggregated again)', async () => {
    const code = await metric('count');
    const customer = await createCustomer(acme);
    const id = await alert(customer, code, 1000);
    await send([event(customer, code, 0)], 1);
    // A total that no longer matches the events shows which one the next batch reads.
    await sql`UPDATE usage_alert_totals SET total = total + 990 WHERE tenant_id = ${acme.tenantId} AND alert_id = ${id}`.execute(t.database.db);
    const before = (await keptOf(id))!.total!;
    await send([event(customer, code, 0), event(customer, code, 0), event(customer, code, 0)], 3);
    expect((await keptOf(id))?.total).toBe(before + 3);
    expect(await triggersOf(id)).toEqual({ rows: 0, events: 0 });
    await send(
      Array.from({ length: 1000 - before - 3 }, () => event(customer, code, 0)),
      1000 - before - 3,
    );
    expect(await triggersOf(id)).toEqual({ rows: 1, events: 1 });
  });

  it('seeds an alert made mid-period from the events already stored', async () => {
    const code = await metric('sum');
    const customer = await createCustomer(acme);
    await send([event(customer, code, 4), event(customer, code, 3), event(customer, code, 9, { timestamp: '2031-02-01T00:00:00Z' })], 3);
    const id = await alert(customer, code, 10);
    expect(await keptOf(id)).toBeNull();
    await send([event(customer, code, 2)], 1);
    expect(await keptOf(id)).toMatchObject({ period_start: PERIOD_START, total: 9 });
    expect(await triggersOf(id)).toEqual({ rows: 0, events: 0 });
    await send([event(customer, code, 1)], 1);
    expect(await triggersOf(id)).toEqual({ rows: 1, events: 1 });
  });

  it('keeps a max, and measures unique counts as before (no running total)', async () => {
    const [maxCode, uniqueCode] = [await metric('max'), await metric('unique_count')];
    const customer = await createCustomer(acme);
    const [peak, users] = [await alert(customer, maxCode, 8), await alert(customer, uniqueCode, 3)];
    await send([event(customer, maxCode, 3), event(customer, maxCode, 7), event(customer, uniqueCode, 'ann'), event(customer, uniqueCode, 'bob')], 4);
    await send([event(customer, maxCode, 5), event(customer, maxCode, 9, { timestamp: '2031-02-15T00:00:00Z' }), event(customer, uniqueCode, 'ann')], 3);
    expect((await keptOf(peak))?.total).toBe(7);
    expect(await keptOf(users)).toBeNull();
    expect(await triggersOf(peak)).toEqual({ rows: 0, events: 0 });
    expect(await triggersOf(users)).toEqual({ rows: 0, events: 0 });
    await send([event(customer, maxCode, 8), event(customer, uniqueCode, 'cy')], 2);
    expect(await triggersOf(peak)).toEqual({ rows: 1, events: 1 });
    expect(await triggersOf(users)).toEqual({ rows: 1, events: 1 });
  });

  it('triggers once when batches sent at once cross a kept total, and loses none of their events', async () => {
    const code = await metric('sum');
    const customer = await createCustomer(acme);
    const id = await alert(customer, code, 40);
    await send([event(customer, code, 1)], 1);
    // Eight batches of 5 at once: 1 + 40 ≥ 40, crossed by whichever comes last.
    const sent = await Promise.all(
      Array.from({ length: 8 }, () => acme.api('POST', '/v1/usage/events/batch', { events: Array.from({ length: 5 }, () => event(customer, code, 1)) })),
    );
    for (const res of sent) expect(res.body.data.accepted, res.text).toBe(5);
    await t.kosh.worker.drain();
    expect((await keptOf(id))?.total).toBe((await periodSum(customer)).sum);
    expect((await keptOf(id))?.total).toBe(41);
    expect(await triggersOf(id)).toEqual({ rows: 1, events: 1 });
  });

  it.runIf(process.env.DATABASE_URL)('counts a batch in flight while the first alert is made: the alert waits for it, and its total measures it', async () => {
    // A tenant without usage alerts: its batches queue nothing.
    const fresh = await t.registerTenant({ gstin: gstinFor('29') });
    const code = await metric('sum', fresh);
    const customer = await createCustomer(fresh);
    // A batch that stored 6 before there was an alert on the customer, and commits later.
    const { commit } = await batchInFlight(fresh, [event(customer, code, 3), event(customer, code, 3)]);
    let made = false;
    const creating = alert(customer, code, 10, fresh).then((id) => ((made = true), id));
    await new Promise((r) => setTimeout(r, 200));
    expect(made).toBe(false);
    await commit();
    const id = await creating;
    await send([event(customer, code, 2)], 1, fresh);
    // Seeded by the fold from the events: the batch in flight (which queued nothing) counted, 6 + 2.
    expect((await keptOf(id))?.total).toBe(8);
    await send([event(customer, code, 2)], 1, fresh);
    expect((await keptOf(id))?.total).toBe(10);
    expect(await triggersOf(id, fresh)).toEqual({ rows: 1, events: 1 });
    expect((await keptOf(id))?.total).toBe((await periodSum(customer)).sum);
  });

  it.runIf(process.env.DATABASE_URL)('adds a batch that commits during a fold in the next fold, once', async () => {
    const code = await metric('count');
    const customer = await createCustomer(acme);
    const id = await alert(customer, code, 5);
    await send([event(customer, code, 0)], 1);
    expect((await keptOf(id))?.total).toBe(1);
    const { commit } = await batchInFlight(acme, [event(customer, code, 0), event(customer, code, 0)]);
    // A fold while the batch is uncommitted sees neither its events nor its queued row.
    await send([event(customer, code, 0)], 1);
    expect((await keptOf(id))?.total).toBe(2);
    await commit();
    await t.kosh.worker.drain();
    expect((await keptOf(id))?.total).toBe(4);
    await send([event(customer, code, 0)], 1);
    expect((await keptOf(id))?.total).toBe((await periodSum(customer)).count);
    expect(await triggersOf(id)).toEqual({ rows: 1, events: 1 });
  });

  it.runIf(process.env.DATABASE_URL)('skips a tenant another worker is folding, and folds its queue on the next tick', async () => {
    const code = await metric('count');
    const customer = await createCustomer(acme);
    const id = await alert(customer, code, 100);
    await send([event(customer, code, 0)], 1);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let locked!: () => void;
    const holding = new Promise<void>((r) => (locked = r));
    // Another worker's fold of the tenant, in progress.
    const other = t.database.db.transaction().execute(async (tx) => {
      expect(await lockUsageFold(tx, acme.tenantId)).toBe(true);
      locked();
      await held;
    });
    await holding;
    const queued = async () =>
      (await sql<{ n: number }>`SELECT count(*)::int AS n FROM usage_alert_pending WHERE tenant_id = ${acme.tenantId}`.execute(t.database.db)).rows[0]!.n;
    const res = await acme.api('POST', '/v1/usage/events/batch', { events: [event(customer, code, 0), event(customer, code, 0)] });
    expect(res.body.data.accepted).toBe(2);
    await t.kosh.worker.drain();
    expect(await queued()).toBe(1);
    expect((await keptOf(id))?.total).toBe(1);
    release();
    await other;
    await t.kosh.worker.drain();
    expect(await queued()).toBe(0);
    expect((await keptOf(id))?.total).toBe(3);
  });

  it('reseeds a new period from its own events, and drops the total of an archived alert', async () => {
    const code = await metric('count');
    const customer = await createCustomer(acme);
    const id = await alert(customer, code, 5);
    await send([event(customer, code, 0), event(customer, code, 0)], 2);
    t.clock.set('2031-04-02T00:00:00Z');
    try {
      await send([event(customer, code, 0)], 1);
      expect(await keptOf(id)).toMatchObject({ period_start: '2031-04-01T00:00:00.000Z', total: 1 });
      const archived = await acme.http.POST('/v1/alerts/{id}/archive', { path: { id } });
      expect(archived.status).toBe(200);
      expect(await keptOf(id)).toBeNull();
    } finally {
      t.clock.set('2031-03-10T00:00:00Z');
    }
  });
});
