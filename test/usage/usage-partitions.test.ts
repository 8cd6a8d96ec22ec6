import { Kysely, PostgresDialect, type CompiledQuery } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DB } from '../../src/platform/db/schema.js';
import { aggregateUsage } from '../../src/modules/usage/index.js';
import { maintainUsagePartitions } from '../../src/modules/usage/usage.partitions.js';
import { startTestKosh, type Tenant, type TestKosh } from '../support/harness.js';

/**
 * Usage events live in monthly partitions (decision 0322). The worker makes this month's and the
 * next two months' partitions, moving events that arrived early (into DEFAULT) into their month;
 * the period aggregation reads only the months it needs; KOSH_USAGE_RETENTION_MONTHS drops whole
 * old months. A `transaction_id` is taken once per tenant whatever its timestamp.
 */
let t: TestKosh;
let acme: Tenant;
let customerId: string;

beforeAll(async () => {
  // The test clock starts in April 2026; the migration made partitions around the real date only.
  t = await startTestKosh({ env: { KOSH_USAGE_RETENTION_MONTHS: '3' } });
  t.clock.set('2026-04-10T00:00:00Z');
  acme = await t.registerTenant();
  const metric = await acme.http.POST('/v1/billable-metrics', { body: { code: 'calls', name: 'API calls', aggregation: 'count' } });
  expect(metric.status, metric.text).toBe(201);
  const customer = await acme.http.POST('/v1/customers', { body: { email: 'metered@usage.test', name: 'Metered' } });
  customerId = customer.body.data.id;
}, 60_000);
afterAll(() => t?.close());

const event = (transaction_id: string, timestamp?: string) => ({
  transaction_id,
  customer_id: customerId,
  metric_code: 'calls',
  ...(timestamp ? { timestamp } : {}),
});

async function rowsIn(partition: string): Promise<number> {
  const { rows } = await t.database.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${partition}`);
  return rows[0]!.n;
}

async function partitionNames(): Promise<string[]> {
  const { rows } = await t.database.pool.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent WHERE p.relname = 'usage_events' ORDER BY 1`,
  );
  return rows.map((r) => r.name);
}

describe('usage events partitioned by month', () => {
  it('moves early events out of DEFAULT into the month the worker makes, and takes a transaction_id once whatever its timestamp', async () => {
    // 3 events in April 2026 and 2 in May, before any of those months has a partition.
    const res = await acme.http.POST('/v1/usage/events/batch', {
      body: {
        events: [
          event('a1', '2026-04-02T10:00:00Z'),
          event('a2', '2026-04-15T10:00:00Z'),
          event('a3', '2026-04-30T23:59:59Z'),
          event('m1', '2026-05-01T00:00:00Z'),
          event('m2', '2026-05-20T00:00:00Z'),
        ],
      },
    });
    expect(res.status, res.text).toBe(202);
    expect(await rowsIn('usage_events_default')).toBe(5);

    // The worker's hourly job: April, May and June 2026 are made; the five events move out.
    await t.kosh.worker.drain();
    const names = await partitionNames();
    expect(names).toEqual(expect.arrayContaining(['usage_events_p202604', 'usage_events_p202605', 'usage_events_p202606']));
    expect(await rowsIn('usage_events_default')).toBe(0);
    expect(await rowsIn('usage_events_p202604')).toBe(3);
    expect(await rowsIn('usage_events_p202605')).toBe(2);

    // The same transaction_id again, once with another timestamp and once with none (stamped
    // now): both are duplicates, nothing is stored twice.
    const again = await acme.http.POST('/v1/usage/events/batch', { body: { events: [event('a1', '2026-04-03T10:00:00Z'), event('a2')] } });
    expect(again.status, again.text).toBe(202);
    expect(again.body.data).toMatchObject({ accepted: 0, duplicates: 2 });
    expect(await rowsIn('usage_events_p202604')).toBe(3);
  });

  it("reads only the partition of the period's month when aggregating", async () => {
    // The aggregation's own statement, captured and run again under EXPLAIN ANALYZE: the
    // partitions it executed (actual loops > 0) are the ones it read.
    let captured: CompiledQuery | undefined;
    const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool: t.database.pool }), log: (e) => void (captured = e.query) });
    const quantities = await aggregateUsage(db as never, acme.tenantId, [
      { key: 'april', customer_id: customerId, metric_code: 'calls', start: new Date('2026-04-01T00:00:00Z'), end: new Date('2026-05-01T00:00:00Z') },
    ]);
    expect(quantities.get('april')?.quantity).toBe('3');
    const { rows } = await t.database.pool.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${captured!.sql}`, captured!.parameters as unknown[]);
    const read = new Set<string>();
    const walk = (node: { 'Relation Name'?: string; 'Actual Loops'?: number; Plans?: unknown[] }) => {
      if (node['Relation Name']?.startsWith('usage_events') && (node['Actual Loops'] ?? 0) > 0) read.add(node['Relation Name']);
      for (const child of node.Plans ?? []) walk(child as typeof node);
    };
    walk((rows[0] as Record<string, [{ Plan: Parameters<typeof walk>[0] }]>)['QUERY PLAN']![0].Plan);
    expect([...read]).toEqual(['usage_events_p202604']);
  });

  it('drops whole months older than KOSH_USAGE_RETENTION_MONTHS, with their keys', async () => {
    // September 2026 with 3 months kept: June, July and August stay; April and May go.
    const result = await maintainUsagePartitions(t.kosh.deps.db, new Date('2026-09-05T00:00:00Z'), t.config.usageRetentionMonths);
    expect(result.dropped.sort()).toEqual(['usage_events_p202604', 'usage_events_p202605']);
    expect(result.created).toEqual(expect.arrayContaining(['usage_events_p202609', 'usage_events_p202610']));
    expect(result.keysDeleted).toBe(5);
    const names = await partitionNames();
    expect(names).not.toContain('usage_events_p202604');
    expect(names).toContain('usage_events_p202606');
  });
});
