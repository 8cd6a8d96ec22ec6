import { sql, type Insertable, type RawBuilder, type Selectable } from 'kysely';
import { testClockScope } from '../../platform/test-clock-scope.js';
import { deferWrite } from '../../platform/db/pipeline.js';
import type { Tx, WriteTx } from '../../platform/db/schema.js';
import type { RevenueSchedulesTable } from './finance.tables.js';
import './finance.tables.js';
import { inMode, type Mode } from '../../platform/auth/tenant-mode.js';

export type ScheduleRow = Selectable<RevenueSchedulesTable>;

/** Deferred (platform/db/pipeline): nothing in the finalizing action reads the schedules back. */
export async function insertSchedules(tx: WriteTx, rows: Insertable<RevenueSchedulesTable>[]): Promise<void> {
  if (rows.length) await deferWrite(tx, tx.insertInto('revenue_schedules').values(rows));
}

export async function activeSchedulesOfInvoice(tx: WriteTx, tenantId: string, invoiceId: string): Promise<ScheduleRow[]> {
  return tx
    .selectFrom('revenue_schedules')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('invoice_id', '=', invoiceId)
    .where('status', '=', 'active')
    .orderBy('id')
    .forUpdate()
    .execute();
}

export async function activeSchedulesOfSubscription(tx: WriteTx, tenantId: string, subscriptionId: string): Promise<ScheduleRow[]> {
  return tx
    .selectFrom('revenue_schedules')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('subscription_id', '=', subscriptionId)
    .where('status', '=', 'active')
    .orderBy('id')
    .forUpdate()
    .execute();
}

/** Whether a schedule in the test clock scope is still active: a test clock's advance skips the recognition sweep while none is. */
export function activeSchedulesInClockScope(): RawBuilder<boolean> {
  return sql<boolean>`EXISTS (SELECT 1 FROM revenue_schedules WHERE status = 'active'
    AND ${testClockScope('revenue_schedules.tenant_id', 'revenue_schedules.customer_id')})`;
}

/** Active schedules with at least one more whole day elapsed, across tenants, in keyset order. */
export async function dueSchedules(
  tx: Tx,
  mode: Mode | null,
  now: Date,
  after: { tenantId: string; id: string } | null,
  limit: number,
): Promise<ScheduleRow[]> {
  const rows = await sql<ScheduleRow>`
    SELECT * FROM revenue_schedules
    WHERE status = 'active' AND period_start + make_interval(days => recognized_days + 1) <= ${now} AND ${inMode(mode)}
      AND ${testClockScope('revenue_schedules.tenant_id', 'revenue_schedules.customer_id')}
      ${after ? sql`AND (tenant_id, id) > (${after.tenantId}, ${after.id})` : sql``}
    ORDER BY tenant_id, id LIMIT ${limit}`.execute(tx);
  return rows.rows.map((r) => ({ ...r, amount: Number(r.amount), recognized: Number(r.recognized), base_recognized: Number(r.base_recognized) }));
}

/** Re-reads and locks schedules for update (the job works on the fresh rows). */
export async function lockSchedules(tx: WriteTx, tenantId: string, ids: string[]): Promise<ScheduleRow[]> {
  if (ids.length === 0) return [];
  return tx
    .selectFrom('revenue_schedules')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('id', 'in', ids)
    .where('status', '=', 'active')
    .orderBy('id')
    .forUpdate()
    .execute();
}

export async function updateSchedule(
  tx: Tx,
  tenantId: string,
  id: string,
  values: Partial<Pick<ScheduleRow, 'amount' | 'recognized' | 'recognized_days' | 'base_recognized' | 'base_day' | 'status' | 'updated_at'>>,
): Promise<void> {
  await tx.updateTable('revenue_schedules').set(values).where('tenant_id', '=', tenantId).where('id', '=', id).execute();
}

/**
 * What the daily recognition recorded on several schedules, in one statement, deferred
 * (platform/db/pipeline): the recognition reads none of them back before its next statement.
 */
export async function recordRecognition(
  tx: WriteTx,
  tenantId: string,
  now: Date,
  rows: { id: string; recognized: number; recognized_days: number; status: ScheduleRow['status'] }[],
): Promise<void> {
  if (rows.length === 0) return;
  await deferWrite(
    tx,
    sql`UPDATE revenue_schedules s
      SET recognized = v.recognized, recognized_days = v.recognized_days, status = v.status, updated_at = ${now}
      FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS v(id uuid, recognized bigint, recognized_days integer, status text)
      WHERE s.tenant_id = ${tenantId} AND s.id = v.id`,
  );
}

/** Recognized revenue (net credit of revenue and revenue reversals) per month of posting. */
export async function recognizedByMonth(
  tx: Tx,
  tenantId: string,
  currency: string,
  from: Date | null,
  to: Date | null,
  timeZone = 'UTC',
): Promise<{ month: string; recognized: number }[]> {
  // Months are calendar months in the reporting entity's zone, as its periods and returns are (DESIGN §18).
  const rows = await sql<{ month: string; recognized: number }>`
    SELECT to_char(e.posted_at AT TIME ZONE ${timeZone}, 'YYYY-MM') AS month, SUM(l.credit - l.debit) AS recognized
    FROM journal_lines l JOIN journal_entries e ON e.tenant_id = l.tenant_id AND e.id = l.entry_id
    WHERE l.tenant_id = ${tenantId} AND e.currency = ${currency} AND l.account_code IN (4000, 4900)
      ${from ? sql`AND e.posted_at >= ${from}` : sql``} ${to ? sql`AND e.posted_at < ${to}` : sql``}
    GROUP BY 1 ORDER BY 1`.execute(tx);
  return rows.rows.map((r) => ({ month: r.month, recognized: Number(r.recognized) }));
}

/** Deferred revenue not yet recognized (credit balance of account 2400) in one currency. */
export async function deferredBalance(tx: Tx, tenantId: string, currency: string): Promise<number> {
  const rows = await sql<{ balance: number | null }>`
    SELECT SUM(l.credit - l.debit) AS balance
    FROM journal_lines l JOIN journal_entries e ON e.tenant_id = l.tenant_id AND e.id = l.entry_id
    WHERE l.tenant_id = ${tenantId} AND e.currency = ${currency} AND l.account_code = 2400`.execute(tx);
  return Number(rows.rows[0]?.balance ?? 0);
}
