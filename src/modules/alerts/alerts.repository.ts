import { sql, type Insertable, type Selectable } from 'kysely';
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
 * in one sorted order, so two batches never wait on each other. Answers how many customers were
 * locked: 0 means no alert watches the batch, and there is nothing to evaluate.
 */
export async function lockUsageAlertEvaluation(tx: Tx, tenantId: string, pairs: { customerId: string; metricCode: string }[]): Promise<number> {
  if (pairs.length === 0) return 0;
  const { rows } = await sql<{ n: number }>`
    SELECT count(pg_advisory_xact_lock(hashtext('kosh.usage_alerts'), hashtext(k.k)))::int AS n
      FROM (SELECT DISTINCT ${tenantId}::text || '/' || a.customer_id::text COLLATE "C" AS k
              FROM alerts a JOIN ${pairArrays(pairs)} ON a.customer_id = p.c AND a.metric_code = p.m
             WHERE a.tenant_id = ${tenantId}::uuid AND a.status = 'active' AND a.type = 'usage_threshold'
             ORDER BY 1) AS k`.execute(tx);
  return rows[0]?.n ?? 0;
}

/**
 * The usage alerts watching these pairs, measured and triggered in ONE statement (decision 0690):
 * each alert's current period start (its subscription's, else the customer's first running one's
 * by id, else `monthStart`; a one-off alert's period starts at the epoch), skipping the alerts
 * already triggered in that period; the quantity of the alert's metric over [period start, end of
 * time) as the metric aggregates it, billed in whole units (rounded up, never negative); a trigger
 * row for each alert whose quantity reached its threshold, `ON CONFLICT DO NOTHING`. Answers the
 * alerts whose row is new, by id, with the value and period start.
 */
export async function triggerUsageAlerts(
  tx: Tx,
  tenantId: string,
  pairs: { customerId: string; metricCode: string }[],
  running: readonly string[],
  monthStart: Date,
  now: Date,
): Promise<(AlertRow & { value: number; period_start: Date })[]> {
  if (pairs.length === 0) return [];
  const { rows } = await sql<AlertRow & { value: number; period_start: Date }>`
    WITH watching AS (
      SELECT a.*,
        CASE WHEN NOT a.recurring THEN 'epoch'::timestamptz
             ELSE coalesce(
               CASE WHEN a.subscription_id IS NOT NULL
                    THEN (SELECT s.current_period_start FROM subscriptions s
                           WHERE s.tenant_id = a.tenant_id AND s.id = a.subscription_id AND s.status = ANY(${[...running]}::text[]))
                    ELSE (SELECT s.current_period_start FROM subscriptions s
                           WHERE s.tenant_id = a.tenant_id AND s.customer_id = a.customer_id AND s.status = ANY(${[...running]}::text[])
                           ORDER BY s.id LIMIT 1)
               END, ${monthStart}::timestamptz)
        END AS period_start
        FROM alerts a JOIN ${pairArrays(pairs)} ON a.customer_id = p.c AND a.metric_code = p.m
       WHERE a.tenant_id = ${tenantId}::uuid AND a.status = 'active' AND a.type = 'usage_threshold'
    ), open AS (
      SELECT w.* FROM watching w
       WHERE NOT EXISTS (SELECT 1 FROM alert_triggers t WHERE t.tenant_id = w.tenant_id AND t.alert_id = w.id AND t.period_start = w.period_start)
    ), measured AS (
      SELECT o.*,
        (CASE m.aggregation
          WHEN 'count' THEN (SELECT count(*)::numeric FROM usage_events u
                              WHERE u.tenant_id = m.tenant_id AND u.customer_id = o.customer_id AND u.metric_id = m.id AND u.ts >= o.period_start AND u.ts < ${END_OF_TIME}::timestamptz)
          WHEN 'sum' THEN (SELECT sum(u.value) FROM usage_events u
                            WHERE u.tenant_id = m.tenant_id AND u.customer_id = o.customer_id AND u.metric_id = m.id AND u.ts >= o.period_start AND u.ts < ${END_OF_TIME}::timestamptz)
          WHEN 'max' THEN (SELECT max(u.value) FROM usage_events u
                            WHERE u.tenant_id = m.tenant_id AND u.customer_id = o.customer_id AND u.metric_id = m.id AND u.ts >= o.period_start AND u.ts < ${END_OF_TIME}::timestamptz)
          WHEN 'unique_count' THEN (SELECT count(DISTINCT u.value_key)::numeric FROM usage_events u
                            WHERE u.tenant_id = m.tenant_id AND u.customer_id = o.customer_id AND u.metric_id = m.id AND u.ts >= o.period_start AND u.ts < ${END_OF_TIME}::timestamptz)
          WHEN 'latest' THEN (SELECT u.value FROM usage_events u
                            WHERE u.tenant_id = m.tenant_id AND u.customer_id = o.customer_id AND u.metric_id = m.id AND u.ts >= o.period_start AND u.ts < ${END_OF_TIME}::timestamptz
                            ORDER BY u.ts DESC, u.transaction_id DESC LIMIT 1)
        END) AS quantity
        FROM open o JOIN billable_metrics m ON m.tenant_id = o.tenant_id AND m.code = o.metric_code
    ), crossed AS (
      SELECT x.*, (CASE WHEN x.quantity > 0 THEN ceil(x.quantity - 0.000000001) ELSE 0 END)::bigint AS value
        FROM measured x
    ), fresh AS (
      INSERT INTO alert_triggers (tenant_id, alert_id, period_start, value, triggered_at, cleared_at)
      SELECT c.tenant_id, c.id, c.period_start, c.value, ${now}::timestamptz, NULL FROM crossed c WHERE c.value >= c.threshold
      ON CONFLICT (tenant_id, alert_id, period_start) DO NOTHING
      RETURNING alert_id
    )
    SELECT c.tenant_id, c.id, c.customer_id, c.subscription_id, c.type, c.metric_code, c.currency, c.threshold, c.action, c.recurring, c.status,
           c.created_at, c.updated_at, c.value, c.period_start
      FROM crossed c JOIN fresh f ON f.alert_id = c.id
     ORDER BY c.id`.execute(tx);
  return rows;
}
