import { sql, type Insertable, type Selectable } from 'kysely';
import { plainArrayLiteral } from '../../platform/db/array-literal.js';
import { paginate } from '../../platform/db/paginate.js';
import type { Tx } from '../../platform/db/schema.js';
import type { Page } from '../../platform/http/envelope.js';
import type { Aggregation, BillableMetricsTable } from './usage.tables.js';
import './usage.tables.js';

export type MetricRow = Selectable<BillableMetricsTable>;

export async function insertMetric(tx: Tx, row: Insertable<BillableMetricsTable>): Promise<void> {
  await tx.insertInto('billable_metrics').values(row).execute();
}

export async function findMetric(tx: Tx, tenantId: string, id: string): Promise<MetricRow | undefined> {
  return tx.selectFrom('billable_metrics').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
}

/** The metrics named by `codes`, in one query. */
export async function metricsByCodes(tx: Tx, tenantId: string, codes: string[]): Promise<MetricRow[]> {
  if (codes.length === 0) return [];
  return tx.selectFrom('billable_metrics').selectAll().where('tenant_id', '=', tenantId).where('code', 'in', codes).execute();
}

export async function listMetricRows(tx: Tx, tenantId: string, page: Page): Promise<{ rows: MetricRow[]; total: number }> {
  const query = tx.selectFrom('billable_metrics').where('billable_metrics.tenant_id', '=', tenantId);
  return paginate<MetricRow>(tx, query, { tenantId, table: 'billable_metrics', page });
}

/** One event ready to store: customer and metric resolved, the aggregated property extracted. */
export type EventInsert = {
  transaction_id: string;
  customer_id: string;
  metric_id: string;
  /** RFC 3339 text PostgreSQL reads as the same instant (at most milliseconds, as `at`). */
  ts: string;
  /** `ts` in epoch milliseconds. */
  at: number;
  value: number | null;
  value_key: string | null;
  properties: Record<string, unknown>;
};

/**
 * Stores a batch in ONE statement (decisions 0430, 0690): the rows travel column by column — the
 * uuids, instants and numbers as array literals built here (they need no quoting), the texts and
 * the properties as one JSON array each (serialized natively, read by PostgreSQL's JSON parser),
 * zipped by `ROWS FROM`. A transaction_id repeated in the batch is stored once (the first wins,
 * as the client sent them). The key table `usage_event_keys` takes each (tenant, transaction_id)
 * once whatever its timestamp; an event whose key is already there is skipped. The events table
 * is partitioned by month (migration 0322), so its own key includes `ts` and cannot deduplicate
 * alone. Answers how many rows were inserted; the rest of `events` were duplicates.
 */
export async function insertEvents(tx: Tx, tenantId: string, events: EventInsert[], now: Date): Promise<number> {
  if (events.length === 0) return 0;
  const seen = new Set<string>();
  const ids: string[] = [];
  const customers: string[] = [];
  const metrics: string[] = [];
  const stamps: string[] = [];
  const values: (number | null)[] = [];
  const keys: (string | null)[] = [];
  const properties: Record<string, unknown>[] = [];
  for (const e of events) {
    if (seen.has(e.transaction_id)) continue;
    seen.add(e.transaction_id);
    ids.push(e.transaction_id);
    customers.push(e.customer_id);
    metrics.push(e.metric_id);
    stamps.push(e.ts);
    values.push(e.value);
    keys.push(e.value_key);
    properties.push(e.properties);
  }
  const result = await sql`
    WITH e AS (
      SELECT * FROM ROWS FROM (
          json_array_elements_text(${JSON.stringify(ids)}::json), unnest(${plainArrayLiteral(customers)}::uuid[]), unnest(${plainArrayLiteral(metrics)}::uuid[]),
          unnest(${plainArrayLiteral(stamps)}::timestamptz[]), unnest(${plainArrayLiteral(values)}::numeric[]), json_array_elements_text(${JSON.stringify(keys)}::json),
          jsonb_array_elements(${JSON.stringify(properties)}::jsonb))
          AS e(transaction_id, customer_id, metric_id, ts, value, value_key, properties)
    ), fresh AS (
      INSERT INTO usage_event_keys (tenant_id, transaction_id, ts)
      SELECT ${tenantId}::uuid, e.transaction_id, e.ts FROM e
      ON CONFLICT DO NOTHING
      RETURNING transaction_id
    )
    INSERT INTO usage_events (tenant_id, transaction_id, customer_id, metric_id, ts, value, value_key, properties, created_at)
    SELECT ${tenantId}::uuid, e.transaction_id, e.customer_id, e.metric_id, e.ts, e.value, e.value_key, e.properties, ${now}::timestamptz
      FROM e JOIN fresh USING (transaction_id)
    ON CONFLICT DO NOTHING`.execute(tx);
  return Number(result.numAffectedRows ?? 0);
}

/** One (subscription, metric) pair to aggregate over [start, end). */
export type UsageWindow = { key: string; customer_id: string; metric_code: string; start: Date; end: Date };

/**
 * The quantity of each window in ONE grouped query, whatever the number of subscriptions: count,
 * sum, max, unique_count or latest (the value of the last event by timestamp, then transaction_id)
 * of the customer's events of the metric with start <= ts < end. Only the aggregation each metric
 * asks for is computed (CASE evaluates one sub-plan per row). Quantities come back as decimal text.
 */
export async function aggregateUsage(tx: Tx, tenantId: string, windows: UsageWindow[]): Promise<Map<string, { quantity: string; aggregation: Aggregation }>> {
  const out = new Map<string, { quantity: string; aggregation: Aggregation }>();
  if (windows.length === 0) return out;
  const payload = windows.map((w) => ({ k: w.key, c: w.customer_id, m: w.metric_code, s: w.start.toISOString(), e: w.end.toISOString() }));
  const { rows } = await sql<{ k: string; aggregation: Aggregation; quantity: string | null }>`
    SELECT w.k, m.aggregation,
      (CASE m.aggregation
        WHEN 'count' THEN (SELECT count(*)::numeric FROM usage_events u
                            WHERE u.tenant_id = m.tenant_id AND u.customer_id = w.c AND u.metric_id = m.id AND u.ts >= w.s AND u.ts < w.e)
        WHEN 'sum' THEN (SELECT sum(u.value) FROM usage_events u
                          WHERE u.tenant_id = m.tenant_id AND u.customer_id = w.c AND u.metric_id = m.id AND u.ts >= w.s AND u.ts < w.e)
        WHEN 'max' THEN (SELECT max(u.value) FROM usage_events u
                          WHERE u.tenant_id = m.tenant_id AND u.customer_id = w.c AND u.metric_id = m.id AND u.ts >= w.s AND u.ts < w.e)
        WHEN 'unique_count' THEN (SELECT count(DISTINCT u.value_key)::numeric FROM usage_events u
                          WHERE u.tenant_id = m.tenant_id AND u.customer_id = w.c AND u.metric_id = m.id AND u.ts >= w.s AND u.ts < w.e)
        WHEN 'latest' THEN (SELECT u.value FROM usage_events u
                          WHERE u.tenant_id = m.tenant_id AND u.customer_id = w.c AND u.metric_id = m.id AND u.ts >= w.s AND u.ts < w.e
                          ORDER BY u.ts DESC, u.transaction_id DESC LIMIT 1)
      END)::text AS quantity
      FROM jsonb_to_recordset(${JSON.stringify(payload)}::jsonb) AS w(k text, c uuid, m text, s timestamptz, e timestamptz)
      JOIN billable_metrics m ON m.tenant_id = ${tenantId} AND m.code = w.m`.execute(tx);
  for (const r of rows) out.set(r.k, { quantity: r.quantity ?? '0', aggregation: r.aggregation });
  return out;
}

/** A window whose usage is broken down by dimensions: the metric's own and `dimensions` (the keys a price matches on). */
export type DimensionalWindow = UsageWindow & { dimensions: string[] };

/** One dimension combination's share of a window: each dimension's value as text (null: the event lacks it). */
export type UsageGroup = { dimensions: Record<string, string | null>; quantity: string };

/**
 * The quantity of each window per dimension combination, in ONE grouped query (DESIGN §24,
 * decision 0480): the events are grouped by the text of properties.<d> for every dimension d of
 * the metric and of the window, and each group is aggregated as aggregateUsage aggregates a whole
 * window (count, sum, max, unique_count, latest). Done when a period is read or billed — the
 * ingest path stores properties as they come and is not slowed. Groups come ordered by their
 * combination's text, so lines are stable.
 */
export async function aggregateUsageByDimensions(tx: Tx, tenantId: string, windows: DimensionalWindow[]): Promise<Map<string, UsageGroup[]>> {
  const out = new Map<string, UsageGroup[]>();
  if (windows.length === 0) return out;
  const payload = windows.map((w) => ({ k: w.key, c: w.customer_id, m: w.metric_code, s: w.start.toISOString(), e: w.end.toISOString(), d: w.dimensions }));
  const { rows } = await sql<{ k: string; dims: Record<string, string | null>; quantity: string | null }>`
    SELECT w.k, g.dims, g.quantity::text AS quantity
      FROM jsonb_to_recordset(${JSON.stringify(payload)}::jsonb) AS w(k text, c uuid, m text, s timestamptz, e timestamptz, d jsonb)
      JOIN billable_metrics m ON m.tenant_id = ${tenantId} AND m.code = w.m
      CROSS JOIN LATERAL (
        SELECT COALESCE(array_agg(DISTINCT x.n), '{}') AS names
          FROM (SELECT jsonb_array_elements_text(m.dimensions) AS n UNION SELECT jsonb_array_elements_text(w.d)) x
      ) dn
      CROSS JOIN LATERAL (
        SELECT x.dims,
          CASE m.aggregation
            WHEN 'count' THEN count(*)::numeric
            WHEN 'sum' THEN sum(x.value)
            WHEN 'max' THEN max(x.value)
            WHEN 'unique_count' THEN count(DISTINCT x.value_key)::numeric
            ELSE (array_agg(x.value ORDER BY x.ts DESC, x.transaction_id DESC))[1]
          END AS quantity
          FROM (
            SELECT u.value, u.value_key, u.ts, u.transaction_id,
              COALESCE((SELECT jsonb_object_agg(n.name, u.properties ->> n.name) FROM unnest(dn.names) AS n(name)), '{}'::jsonb) AS dims
              FROM usage_events u
             WHERE u.tenant_id = m.tenant_id AND u.customer_id = w.c AND u.metric_id = m.id AND u.ts >= w.s AND u.ts < w.e
          ) x
         GROUP BY x.dims
      ) g
     ORDER BY w.k, g.dims::text COLLATE "C"`.execute(tx);
  for (const r of rows) {
    const groups = out.get(r.k) ?? [];
    groups.push({ dimensions: r.dims, quantity: r.quantity ?? '0' });
    out.set(r.k, groups);
  }
  return out;
}
