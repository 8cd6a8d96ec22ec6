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

/**
 * Serializes the alert evaluation of these customers until the transaction ends: a second batch of
 * the same customer waits here for the first to commit, then measures with its events counted
 * (two batches measuring at once would each miss the other's events, and a crossing between them
 * would go unseen). Taken in sorted order, so two batches never wait on each other.
 */
export async function lockAlertEvaluation(tx: Tx, tenantId: string, customerIds: string[]): Promise<void> {
  if (customerIds.length === 0) return;
  const keys = [...new Set(customerIds)].sort().map((c) => `${tenantId}/${c}`);
  await sql`SELECT count(pg_advisory_xact_lock(hashtext('kosh.usage_alerts'), hashtext(k))) FROM unnest(${keys}::text[]) AS k`.execute(tx);
}

/** The alerts among `items` that already triggered in the given period (cleared or not), in one query. */
export async function triggeredIn(tx: Tx, tenantId: string, items: { alertId: string; periodStart: Date }[]): Promise<Set<string>> {
  if (items.length === 0) return new Set();
  const { rows } = await sql<{ alert_id: string }>`
    SELECT t.alert_id FROM alert_triggers t
      JOIN unnest(${items.map((i) => i.alertId)}::uuid[], ${items.map((i) => i.periodStart.toISOString())}::timestamptz[]) AS w(alert_id, period_start)
        ON t.alert_id = w.alert_id AND t.period_start = w.period_start
     WHERE t.tenant_id = ${tenantId}::uuid`.execute(tx);
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
