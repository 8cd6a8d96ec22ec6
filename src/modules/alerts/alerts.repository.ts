import { sql, type Insertable, type Selectable } from 'kysely';
import { deferWrite } from '../../platform/db/pipeline.js';
import { plainArrayLiteral } from '../../platform/db/array-literal.js';
import type { Tx, WriteTx } from '../../platform/db/schema.js';
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

/** The advisory lock between ingestion batches (shared) and the creation of a usage alert (exclusive), per tenant. */
const usageQueueLock = (tenantId: string) => sql`hashtext('kosh.usage_alert_queue'), hashtext(${tenantId}::text)`;

/**
 * Queues what an ingestion batch stored for the usage alerts (decision 0900), in the batch's
 * transaction and without waiting for the answer: one row carrying the batch's figures per
 * (customer, metric id) pair, written only while the tenant has an active usage alert. The row is
 * visible exactly when the batch's events are, so the fold that deletes it counts them once.
 *
 * Whether the tenant has an alert is read after the tenant's queue lock is held (shared, so batches
 * never wait for each other): a usage alert being created holds it exclusively until it commits
 * (holdUsageQueue), so a batch either commits before the alert is visible — and the fold that
 * seeds the alert's total measures its events — or sees the alert and queues its row.
 */
export async function queueUsageDeltas(tx: WriteTx, tenantId: string, stored: StoredPairs, now: Date): Promise<void> {
  if (stored.customers.length === 0) return;
  // Its own statement: the insert's snapshot is taken once the lock is held.
  await deferWrite(tx, sql`SELECT pg_advisory_xact_lock_shared(${usageQueueLock(tenantId)})`);
  await deferWrite(
    tx,
    sql`
    INSERT INTO usage_alert_pending (tenant_id, customers, metrics, vals, earliest, exact, created_at)
    SELECT ${tenantId}::uuid, ${plainArrayLiteral(stored.customers)}::uuid[], ${plainArrayLiteral(stored.metrics)}::uuid[], ${stored.values}::text[],
           ${plainArrayLiteral(stored.earliest)}::timestamptz[], ${stored.exact}::boolean, ${now}::timestamptz
     WHERE EXISTS (SELECT 1 FROM alerts a WHERE a.tenant_id = ${tenantId}::uuid AND a.status = 'active' AND a.type = 'usage_threshold')`,
  );
}

/** Holds the tenant's usage queue until the transaction ends: batches in flight commit first, later ones wait (see queueUsageDeltas). */
export async function holdUsageQueue(tx: WriteTx, tenantId: string): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(${usageQueueLock(tenantId)})`.execute(tx);
}

/** The tenants of this mode with usage deltas waiting to be folded, oldest first. */
export async function tenantsWithPendingUsage(db: Tx, mode: string): Promise<string[]> {
  const { rows } = await sql<{ tenant_id: string }>`
    SELECT p.tenant_id FROM (SELECT tenant_id, min(created_at) AS since FROM usage_alert_pending GROUP BY tenant_id) p
      JOIN tenants t ON t.id = p.tenant_id
     WHERE t.mode = ${mode}
     ORDER BY p.since`.execute(db);
  return rows.map((r) => r.tenant_id);
}

/**
 * The tenant's usage-alert fold, held until the transaction ends, or false when another worker
 * holds it (that one folds what is queued; what it misses waits for the next tick).
 */
export async function lockUsageFold(tx: WriteTx, tenantId: string): Promise<boolean> {
  const { rows } = await sql<{ held: boolean }>`
    SELECT pg_try_advisory_xact_lock(hashtext('kosh.usage_alert_fold'), hashtext(${tenantId}::text)) AS held`.execute(tx);
  return rows[0]?.held === true;
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
 * Folds the tenant's queued usage deltas into its usage alerts, measured and triggered in ONE
 * statement (decisions 0690, 0800, 0890, 0900): the queued rows are deleted and their figures
 * summed per (customer, metric) pair — the pair's count, sum and max, its earliest event, and
 * whether every batch was `exact` — then, for each active usage alert watching a pair, its current
 * period start (its subscription's, else the customer's first running one's by id, else
 * `monthStart`; a one-off alert's period starts at the epoch), skipping the alerts already
 * triggered in that period; the quantity of the alert's metric over [period start, end of time) as
 * the metric aggregates it, billed in whole units (rounded up, never negative); a trigger row for
 * each alert whose quantity reached its threshold, `ON CONFLICT DO NOTHING`. Answers the alerts
 * whose row is new, by id, with the value and period start.
 *
 * A recurring alert on a count, sum or max metric keeps its quantity in `usage_alert_totals`
 * (decision 0800). While its row is of the current period, every batch folded was `exact` and the
 * pair's earliest event is in the period, the pair's own figures move it (`total + delta`, or the
 * greater for max) and nothing is re-aggregated. Otherwise — no row yet (a new alert), a new
 * period, a batch with duplicates (which events were new is not known), an event of the pair
 * before the period start, a row seeded by an older version still listing `unsettled`
 * transactions — the period is measured and the row (re)seeded with that quantity. One snapshot
 * holds both the queued rows deleted and the events measured, and a batch's row is visible exactly
 * when its events are: an event measured is never also added as a delta, and one not yet visible
 * comes with its row in a later fold. Folds of one tenant run one after the other (lockUsageFold),
 * so the total read is the one the update moves.
 *
 * Every pair's figures ride on its own row (decision 0890): after the one aggregate of the queued
 * rows, no two intermediate results of the statement are joined to each other, so the plan is index
 * lookups per alert whatever the planner guesses of their sizes.
 */
export async function foldUsageAlerts(
  tx: WriteTx,
  tenantId: string,
  running: readonly string[],
  monthStart: Date,
  now: Date,
): Promise<(AlertRow & { value: number; period_start: Date })[]> {
  const { rows } = await sql<AlertRow & { value: number; period_start: Date }>`
    WITH taken AS (
      DELETE FROM usage_alert_pending WHERE tenant_id = ${tenantId}::uuid RETURNING customers, metrics, vals, earliest, exact
    ), pairs AS (
      SELECT p.c, p.mid, sum(b.n) AS n, sum(b.s) AS s, max(b.mx) AS mx, min(p.earliest) AS earliest, bool_and(q.exact) AS exact
        FROM taken q
        CROSS JOIN LATERAL ROWS FROM (unnest(q.customers), unnest(q.metrics), unnest(q.vals), unnest(q.earliest)) AS p(c, mid, vals, earliest)
        CROSS JOIN LATERAL (SELECT count(*)::numeric AS n, coalesce(sum(v), 0) AS s, max(v) AS mx FROM unnest(p.vals::numeric[]) AS v) b
       GROUP BY p.c, p.mid
    ), watching AS (
      SELECT a.*, m.id AS metric_id, m.aggregation, p.n AS batch_n, p.s AS batch_s, p.mx AS batch_mx, p.earliest AS batch_earliest, p.exact AS batch_exact,
        CASE WHEN NOT a.recurring THEN 'epoch'::timestamptz
             ELSE coalesce(ss.current_period_start, sc.current_period_start, ${monthStart}::timestamptz) END AS period_start
        FROM pairs p
        JOIN billable_metrics m ON m.tenant_id = ${tenantId}::uuid AND m.id = p.mid
        JOIN alerts a ON a.tenant_id = ${tenantId}::uuid AND a.customer_id = p.c AND a.metric_code = m.code
        LEFT JOIN LATERAL (SELECT s.current_period_start FROM subscriptions s
                            WHERE a.recurring AND a.subscription_id IS NOT NULL
                              AND s.tenant_id = a.tenant_id AND s.id = a.subscription_id AND s.status = ANY(${[...running]}::text[])) ss ON true
        LEFT JOIN LATERAL (SELECT s.current_period_start FROM subscriptions s
                            WHERE a.recurring AND a.subscription_id IS NULL
                              AND s.tenant_id = a.tenant_id AND s.customer_id = a.customer_id AND s.status = ANY(${[...running]}::text[])
                            ORDER BY s.id LIMIT 1) sc ON true
       WHERE a.status = 'active' AND a.type = 'usage_threshold'
    ), open AS (
      SELECT w.*, (w.recurring AND w.aggregation IN ('count', 'sum', 'max')) AS kept,
        t.period_start AS kept_start, t.total AS kept_total,
        (t.period_start = w.period_start AND cardinality(t.unsettled) = 0 AND w.batch_exact AND w.batch_earliest >= w.period_start) AS by_delta,
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
      SELECT x.tenant_id, x.id, x.period_start, x.quantity, '{}'::xid8[]
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
