import { sql, type Insertable, type Selectable } from 'kysely';
import { plainArrayLiteral } from '../../platform/db/array-literal.js';
import type { Tx } from '../../platform/db/schema.js';
import type { AlertsTable, AlertType } from './alerts.tables.js';
import './alerts.tables.js';

export type AlertRow = Selectable<AlertsTable>;

export async function insertAlert(tx: Tx, row: Insertable<AlertsTable>): Promise<AlertRow> {
  return tx.insertInto('alerts').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function findAlert(tx: Tx, tenantId: string, id: string): Promise<AlertRow | undefined> {
  return tx.selectFrom('alerts').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
}

export async function listAlertRows(tx: Tx, tenantId: string, customerId?: string): Promise<AlertRow[]> {
  let q = tx.selectFrom('alerts').selectAll().where('tenant_id', '=', tenantId);
  if (customerId) q = q.where('customer_id', '=', customerId);
  return q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(1000).execute();
}

export async function activeAlertsOf(tx: Tx, tenantId: string, customerIds: string[], types: readonly AlertType[]): Promise<AlertRow[]> {
  if (customerIds.length === 0) return [];
  return tx
    .selectFrom('alerts')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('customer_id', '=', sql<string>`ANY(${customerIds}::uuid[])`)
    .where('status', '=', 'active')
    .where('type', 'in', [...types])
    .orderBy('id')
    .execute();
}

/**
 * Once per alert and period, for a batch of crossed alerts in ONE statement: each row is new, or
 * its insert does nothing. Answers the alerts whose row is new (the ones that trigger now).
 */
export async function insertTriggers(
  tx: Tx,
  tenantId: string,
  items: { alertId: string; periodStart: Date; value: number }[],
  now: Date,
): Promise<Set<string>> {
  if (items.length === 0) return new Set();
  const { rows } = await sql<{ alert_id: string }>`
    INSERT INTO alert_triggers (tenant_id, alert_id, period_start, value, triggered_at, cleared_at)
    SELECT ${tenantId}::uuid, t.alert_id, t.period_start, t.value, ${now}::timestamptz, NULL
      FROM unnest(${items.map((i) => i.alertId)}::uuid[], ${items.map((i) => i.periodStart.toISOString())}::timestamptz[], ${items.map((i) => i.value)}::bigint[])
        AS t(alert_id, period_start, value)
    ON CONFLICT (tenant_id, alert_id, period_start) DO NOTHING
    RETURNING alert_id`.execute(tx);
  return new Set(rows.map((r) => r.alert_id));
}

/** The uncleared triggers of these block alerts for these periods. */
export async function liveTriggers(tx: Tx, tenantId: string, items: { alertId: string; periodStart: Date }[]): Promise<Set<string>> {
  if (items.length === 0) return new Set();
  const rows = await tx
    .selectFrom('alert_triggers')
    .select(['alert_id', 'period_start'])
    .where('tenant_id', '=', tenantId)
    .where(
      'alert_id',
      'in',
      items.map((i) => i.alertId),
    )
    .where('cleared_at', 'is', null)
    .execute();
  const wanted = new Set(items.map((i) => `${i.alertId}/${i.periodStart.getTime()}`));
  return new Set(rows.filter((r) => wanted.has(`${r.alert_id}/${r.period_start.getTime()}`)).map((r) => r.alert_id));
}

export async function archiveAlertRow(tx: Tx, tenantId: string, id: string, now: Date): Promise<AlertRow | undefined> {
  // An archived alert is never evaluated again: its running total (decision 0800) goes.
  await tx.deleteFrom('usage_alert_totals').where('tenant_id', '=', tenantId).where('alert_id', '=', id).execute();
  await tx
    .updateTable('alert_triggers')
    .set({ cleared_at: now })
    .where('tenant_id', '=', tenantId)
    .where('alert_id', '=', id)
    .where('cleared_at', 'is', null)
    .execute();
  return tx
    .updateTable('alerts')
    .set({ status: 'archived', updated_at: now })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .where('status', '=', 'active')
    .returningAll()
    .executeTakeFirst();
}

/** The end of the windows alerts measure: all events from the period start on. */
const END_OF_TIME = '9999-12-31T23:59:59Z';

/** The (customer, metric code) pairs an ingestion batch stored events for, as two aligned arrays. */
const pairArrays = (pairs: { customerId: string; metricCode: string }[]) =>
  sql`unnest(${pairs.map((p) => p.customerId)}::uuid[], ${pairs.map((p) => p.metricCode)}::text[]) AS p(c, m)`;

/**
 * Serializes the usage-alert evaluation of the customers with an active usage alert watching one
 * of these pairs until the transaction ends, in one statement: a second batch of the same customer
 * waits here for the first to commit, then measures with its events counted (two batches measuring
 * at once would each miss the other's events, and a crossing between them would go unseen). Taken
 * in one sorted order, so two batches never wait on each other. Answers the customers locked, as
 * comma-separated text (empty: no alert watches the batch, and there is nothing to evaluate); only
 * their alerts are evaluated, so an alert made visible between the two statements waits for the
 * next batch instead of being measured without its customer's lock.
 */
export async function lockUsageAlertEvaluation(tx: Tx, tenantId: string, pairs: { customerId: string; metricCode: string }[]): Promise<string> {
  if (pairs.length === 0) return '';
  const { rows } = await sql<{ n: number; customers: string | null }>`
    SELECT count(pg_advisory_xact_lock(hashtext('kosh.usage_alerts'), hashtext(k.k)))::int AS n, string_agg(k.c::text, ',') AS customers
      FROM (SELECT DISTINCT ${tenantId}::text || '/' || a.customer_id::text COLLATE "C" AS k, a.customer_id AS c
              FROM alerts a JOIN ${pairArrays(pairs)} ON a.customer_id = p.c AND a.metric_code = p.m
             WHERE a.tenant_id = ${tenantId}::uuid AND a.status = 'active' AND a.type = 'usage_threshold'
             ORDER BY 1) AS k`.execute(tx);
  return rows[0]?.customers ?? '';
}

/**
 * What a batch stored, per (customer, metric id) pair, column by column: the values of the pair's
 * events (a `numeric[]` literal each, see numberListsLiteral; null for events without one) and its
 * earliest event's instant; `exact` when every event of the batch was new (no duplicate, in the batch
 * or already stored), so that these events are what moves the running totals of the alerts watching
 * them. Uuids and instants are sent as array literals built without escaping, as the insert sends them.
 */
export type StoredPairs = { customers: string[]; metrics: string[]; values: string; earliest: string[]; exact: boolean };

/** The quantity of the open alert `o`'s metric over [period start, end of time), as the metric aggregates it. */
const PERIOD_QUANTITY = sql`(CASE o.aggregation
          WHEN 'count' THEN (SELECT count(*)::numeric FROM usage_events u
                              WHERE u.tenant_id = o.tenant_id AND u.customer_id = o.customer_id AND u.metric_id = o.metric_id AND u.ts >= o.period_start AND u.ts < ${END_OF_TIME}::timestamptz)
          WHEN 'sum' THEN (SELECT coalesce(sum(u.value), 0) FROM usage_events u
                            WHERE u.tenant_id = o.tenant_id AND u.customer_id = o.customer_id AND u.metric_id = o.metric_id AND u.ts >= o.period_start AND u.ts < ${END_OF_TIME}::timestamptz)
          WHEN 'max' THEN (SELECT max(u.value) FROM usage_events u
                            WHERE u.tenant_id = o.tenant_id AND u.customer_id = o.customer_id AND u.metric_id = o.metric_id AND u.ts >= o.period_start AND u.ts < ${END_OF_TIME}::timestamptz)
          WHEN 'unique_count' THEN (SELECT count(DISTINCT u.value_key)::numeric FROM usage_events u
                            WHERE u.tenant_id = o.tenant_id AND u.customer_id = o.customer_id AND u.metric_id = o.metric_id AND u.ts >= o.period_start AND u.ts < ${END_OF_TIME}::timestamptz)
          WHEN 'latest' THEN (SELECT u.value FROM usage_events u
                            WHERE u.tenant_id = o.tenant_id AND u.customer_id = o.customer_id AND u.metric_id = o.metric_id AND u.ts >= o.period_start AND u.ts < ${END_OF_TIME}::timestamptz
                            ORDER BY u.ts DESC, u.transaction_id DESC LIMIT 1)
        END)`;

/**
 * The usage alerts of the locked customers watching the batch's (customer, metric) pairs, measured
 * and triggered in ONE statement (decisions 0690, 0800, 0890): each alert's current period start (its
 * subscription's, else the customer's first running one's by id, else `monthStart`; a one-off
 * alert's period starts at the epoch), skipping the alerts already triggered in that period; the
 * quantity of the alert's metric over [period start, end of time) as the metric aggregates it,
 * billed in whole units (rounded up, never negative); a trigger row for each alert whose quantity
 * reached its threshold, `ON CONFLICT DO NOTHING`. Answers the alerts whose row is new, by id, with
 * the value and period start.
 *
 * A recurring alert on a count, sum or max metric keeps its quantity in `usage_alert_totals`
 * (decision 0800). While its row is of the current period and settled, the batch is `exact` and its
 * pair's earliest event is in the period, the pair's own events move it (`total + delta`, or the
 * greater for max) and nothing is re-aggregated. Otherwise — no row yet (a new alert), a new
 * period, a batch with duplicates (which events were new is not known), an event of the pair
 * before the period start, a row not yet settled — the period is measured as before and the row
 * (re)seeded with that quantity. A row seeded lists the transactions then in progress
 * (`unsettled`): a batch in flight before the alert was visible took no lock and will add no delta,
 * so the row is measured again until none of them is in progress for this statement's snapshot;
 * from then on every batch moving it holds the customer's lock and adds its delta.
 *
 * Every pair's figures ride on its own row (decision 0890): no two intermediate results of the
 * statement are joined to each other, so the plan is index lookups per alert whatever the planner
 * guesses of their sizes (two 1 000-row CTEs joined by a nested loop cost a million comparisons a
 * batch). The delta's quantity is the total read plus the batch's figures: every batch that moves
 * a total holds its customer's lock, so the total read is the one the update moves.
 */
export async function triggerUsageAlerts(
  tx: Tx,
  tenantId: string,
  stored: StoredPairs,
  locked: string,
  running: readonly string[],
  monthStart: Date,
  now: Date,
): Promise<(AlertRow & { value: number; period_start: Date })[]> {
  if (stored.customers.length === 0 || locked === '') return [];
  const { rows } = await sql<AlertRow & { value: number; period_start: Date }>`
    WITH watching AS (
      SELECT a.*, m.id AS metric_id, m.aggregation, b.n AS batch_n, b.s AS batch_s, b.mx AS batch_mx, p.earliest AS batch_earliest,
        CASE WHEN NOT a.recurring THEN 'epoch'::timestamptz
             ELSE coalesce(ss.current_period_start, sc.current_period_start, ${monthStart}::timestamptz) END AS period_start
        FROM ROWS FROM (unnest(${plainArrayLiteral(stored.customers)}::uuid[]), unnest(${plainArrayLiteral(stored.metrics)}::uuid[]),
                        unnest(${stored.values}::text[]), unnest(${plainArrayLiteral(stored.earliest)}::timestamptz[])) AS p(c, mid, vals, earliest)
        JOIN billable_metrics m ON m.tenant_id = ${tenantId}::uuid AND m.id = p.mid
        JOIN alerts a ON a.tenant_id = ${tenantId}::uuid AND a.customer_id = p.c AND a.metric_code = m.code
        CROSS JOIN LATERAL (SELECT count(*)::numeric AS n, coalesce(sum(v), 0) AS s, max(v) AS mx FROM unnest(p.vals::numeric[]) AS v) b
        LEFT JOIN LATERAL (SELECT s.current_period_start FROM subscriptions s
                            WHERE a.recurring AND a.subscription_id IS NOT NULL
                              AND s.tenant_id = a.tenant_id AND s.id = a.subscription_id AND s.status = ANY(${[...running]}::text[])) ss ON true
        LEFT JOIN LATERAL (SELECT s.current_period_start FROM subscriptions s
                            WHERE a.recurring AND a.subscription_id IS NULL
                              AND s.tenant_id = a.tenant_id AND s.customer_id = a.customer_id AND s.status = ANY(${[...running]}::text[])
                            ORDER BY s.id LIMIT 1) sc ON true
       WHERE a.status = 'active' AND a.type = 'usage_threshold'
         AND a.customer_id = ANY(string_to_array(${locked}, ',')::uuid[])
    ), open AS (
      SELECT w.*, (w.recurring AND w.aggregation IN ('count', 'sum', 'max')) AS kept,
        t.period_start AS kept_start, t.total AS kept_total,
        (t.period_start = w.period_start AND cardinality(t.unsettled) = 0 AND ${stored.exact}::boolean AND w.batch_earliest >= w.period_start) AS by_delta,
        t.unsettled
        FROM watching w LEFT JOIN usage_alert_totals t ON t.tenant_id = w.tenant_id AND t.alert_id = w.id
       WHERE NOT EXISTS (SELECT 1 FROM alert_triggers t WHERE t.tenant_id = w.tenant_id AND t.alert_id = w.id AND t.period_start = w.period_start)
    ), moved AS (
      UPDATE usage_alert_totals t
         SET total = CASE o.aggregation WHEN 'count' THEN t.total + o.batch_n WHEN 'sum' THEN t.total + o.batch_s ELSE greatest(t.total, o.batch_mx) END
        FROM open o
       WHERE t.tenant_id = ${tenantId}::uuid AND t.alert_id = o.id AND o.kept AND o.by_delta
      RETURNING t.alert_id
    ), measured AS (
      SELECT o.*,
        CASE WHEN o.kept AND o.by_delta
             THEN CASE o.aggregation WHEN 'count' THEN o.kept_total + o.batch_n WHEN 'sum' THEN o.kept_total + o.batch_s ELSE greatest(o.kept_total, o.batch_mx) END
             ELSE ${PERIOD_QUANTITY} END AS quantity
        FROM open o
    ), seeded AS (
      INSERT INTO usage_alert_totals (tenant_id, alert_id, period_start, total, unsettled)
      SELECT x.tenant_id, x.id, x.period_start, x.quantity,
        CASE WHEN x.kept_start = x.period_start
             THEN ARRAY(SELECT u FROM unnest(x.unsettled) AS u WHERE u IN (SELECT pg_snapshot_xip(pg_current_snapshot())))
             ELSE ARRAY(SELECT pg_snapshot_xip(pg_current_snapshot())) END
        FROM measured x
       WHERE x.kept AND NOT coalesce(x.by_delta, false)
      ON CONFLICT (tenant_id, alert_id) DO UPDATE SET period_start = excluded.period_start, total = excluded.total, unsettled = excluded.unsettled
    ), fresh AS (
      INSERT INTO alert_triggers (tenant_id, alert_id, period_start, value, triggered_at, cleared_at)
      SELECT c.tenant_id, c.id, c.period_start, c.value, ${now}::timestamptz, NULL
        FROM (SELECT x.*, (CASE WHEN x.quantity > 0 THEN ceil(x.quantity - 0.000000001) ELSE 0 END)::bigint AS value FROM measured x) c
       WHERE c.value >= c.threshold
      ON CONFLICT (tenant_id, alert_id, period_start) DO NOTHING
      RETURNING alert_id, period_start, value
    )
    SELECT a.tenant_id, a.id, a.customer_id, a.subscription_id, a.type, a.metric_code, a.currency, a.threshold, a.action, a.recurring, a.status,
           a.created_at, a.updated_at, f.value, f.period_start
      FROM fresh f JOIN alerts a ON a.tenant_id = ${tenantId}::uuid AND a.id = f.alert_id
     ORDER BY a.id`.execute(tx);
  return rows;
}
