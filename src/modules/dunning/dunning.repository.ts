import { sql, type Insertable, type RawBuilder, type Selectable, type Updateable } from 'kysely';
import { testClockScope } from '../../platform/test-clock-scope.js';
import { deferWrite } from '../../platform/db/pipeline.js';
import { paginate, type ListResult } from '../../platform/db/paginate.js';
import type { LockFlag, Tx, WriteTx } from '../../platform/db/schema.js';
import type { Page } from '../../platform/http/envelope.js';
import type {
  ActionOutcome,
  DunningActionsTable,
  DunningCampaignsTable,
  DunningExecutionsTable,
  DunningStepsTable,
  ExecutionStatus,
} from './dunning.tables.js';
import { inMode, type Mode } from '../../platform/auth/tenant-mode.js';
import { executionTransitions } from './dunning.states.js';

export type CampaignRow = Selectable<DunningCampaignsTable>;
export type StepRow = Selectable<DunningStepsTable>;
export type ExecutionRow = Selectable<DunningExecutionsTable>;
export type ActionRow = Selectable<DunningActionsTable>;

export async function insertCampaign(tx: Tx, row: Insertable<DunningCampaignsTable>): Promise<CampaignRow> {
  return tx.insertInto('dunning_campaigns').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function findCampaign<T extends Tx>(tx: T, tenantId: string, id: string, forUpdate?: LockFlag<T>): Promise<CampaignRow | undefined> {
  let q = tx.selectFrom('dunning_campaigns').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id);
  if (forUpdate) q = q.forUpdate();
  return q.executeTakeFirst();
}

export async function listCampaignRows(tx: Tx, tenantId: string): Promise<CampaignRow[]> {
  return tx.selectFrom('dunning_campaigns').selectAll().where('tenant_id', '=', tenantId).orderBy('created_at').orderBy('id').execute();
}

export async function findDefaultCampaign(tx: Tx, tenantId: string): Promise<CampaignRow | undefined> {
  return tx
    .selectFrom('dunning_campaigns')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('is_default', '=', true)
    .where('is_active', '=', true)
    .executeTakeFirst();
}

/** Unsets the tenant's default (before another campaign takes the place). */
export async function clearDefault(tx: Tx, tenantId: string, now: Date): Promise<void> {
  await tx
    .updateTable('dunning_campaigns')
    .set({ is_default: false, updated_at: now })
    .where('tenant_id', '=', tenantId)
    .where('is_default', '=', true)
    .execute();
}

export async function updateCampaignRow(tx: Tx, tenantId: string, id: string, patch: Updateable<DunningCampaignsTable>): Promise<CampaignRow | undefined> {
  return tx.updateTable('dunning_campaigns').set(patch).where('tenant_id', '=', tenantId).where('id', '=', id).returningAll().executeTakeFirst();
}

export async function deleteCampaignRow(tx: Tx, tenantId: string, id: string): Promise<void> {
  await tx.deleteFrom('dunning_campaigns').where('tenant_id', '=', tenantId).where('id', '=', id).execute();
}

export async function stepsOfCampaigns(tx: Tx, tenantId: string, campaignIds: string[]): Promise<StepRow[]> {
  if (campaignIds.length === 0) return [];
  return tx
    .selectFrom('dunning_steps')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('campaign_id', 'in', campaignIds)
    .orderBy('campaign_id')
    .orderBy('step_order')
    .execute();
}

export async function nextStepOrder(tx: Tx, tenantId: string, campaignId: string): Promise<number> {
  const row = await tx
    .selectFrom('dunning_steps')
    .select((eb) => eb.fn.max<number | null>('step_order').as('max'))
    .where('tenant_id', '=', tenantId)
    .where('campaign_id', '=', campaignId)
    .executeTakeFirst();
  return (row?.max ?? 0) + 1;
}

export async function insertStep(tx: Tx, row: Insertable<DunningStepsTable>): Promise<StepRow> {
  return tx.insertInto('dunning_steps').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function findStep(tx: Tx, tenantId: string, campaignId: string, stepId: string): Promise<StepRow | undefined> {
  return tx
    .selectFrom('dunning_steps')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('campaign_id', '=', campaignId)
    .where('id', '=', stepId)
    .executeTakeFirst();
}

export async function updateStepRow(tx: Tx, tenantId: string, stepId: string, patch: Updateable<DunningStepsTable>): Promise<StepRow> {
  return tx.updateTable('dunning_steps').set(patch).where('tenant_id', '=', tenantId).where('id', '=', stepId).returningAll().executeTakeFirstOrThrow();
}

export async function deleteStepRow(tx: Tx, tenantId: string, stepId: string): Promise<void> {
  await tx.deleteFrom('dunning_steps').where('tenant_id', '=', tenantId).where('id', '=', stepId).execute();
}

/** Active executions per campaign, and the distinct subscriptions of their invoices. */
export async function activityOfCampaigns(
  tx: Tx,
  tenantId: string,
  campaignIds: string[],
): Promise<Map<string, { executions: number; subscriptions: number }>> {
  if (campaignIds.length === 0) return new Map();
  const rows = await tx
    .selectFrom('dunning_executions as e')
    .innerJoin('invoices as i', (j) => j.onRef('i.tenant_id', '=', 'e.tenant_id').onRef('i.id', '=', 'e.invoice_id'))
    .select((eb) => ['e.campaign_id', eb.fn.countAll<number>().as('executions'), eb.fn.count<number>('i.subscription_id').distinct().as('subscriptions')])
    .where('e.tenant_id', '=', tenantId)
    .where('e.campaign_id', 'in', campaignIds)
    .where('e.status', '=', 'active')
    .groupBy('e.campaign_id')
    .execute();
  return new Map(rows.map((r) => [r.campaign_id, { executions: Number(r.executions), subscriptions: Number(r.subscriptions) }]));
}

export async function campaignHasExecutions(tx: Tx, tenantId: string, campaignId: string): Promise<boolean> {
  const rows = await tx
    .selectFrom('dunning_executions')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where('campaign_id', '=', campaignId)
    .limit(1)
    .execute();
  return rows.length > 0;
}

export async function insertExecution(tx: Tx, row: Insertable<DunningExecutionsTable>): Promise<ExecutionRow | undefined> {
  // The partial unique index keeps one active execution per invoice: a second start is a no-op.
  return tx
    .insertInto('dunning_executions')
    .values(row)
    .onConflict((oc) => oc.columns(['tenant_id', 'invoice_id']).where('status', '=', 'active').doNothing())
    .returningAll()
    .executeTakeFirst();
}

export async function findExecution(tx: Tx, tenantId: string, id: string): Promise<ExecutionRow | undefined> {
  return tx.selectFrom('dunning_executions').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
}

export async function activeExecutionOfInvoice<T extends Tx>(
  tx: T,
  tenantId: string,
  invoiceId: string,
  forUpdate?: LockFlag<T>,
): Promise<ExecutionRow | undefined> {
  let q = tx.selectFrom('dunning_executions').selectAll().where('tenant_id', '=', tenantId).where('invoice_id', '=', invoiceId).where('status', '=', 'active');
  if (forUpdate) q = q.forUpdate();
  return q.executeTakeFirst();
}

export async function activeExecutionsOfCampaign(tx: WriteTx, tenantId: string, campaignId: string): Promise<ExecutionRow[]> {
  return tx
    .selectFrom('dunning_executions')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('campaign_id', '=', campaignId)
    .where('status', '=', 'active')
    .forUpdate()
    .execute();
}

export async function listExecutionRows(
  tx: Tx,
  tenantId: string,
  filter: { invoice_id?: string; status?: ExecutionStatus },
  page: Page,
): Promise<ListResult<ExecutionRow>> {
  let q = tx.selectFrom('dunning_executions').where('tenant_id', '=', tenantId);
  if (filter.invoice_id) q = q.where('invoice_id', '=', filter.invoice_id);
  if (filter.status) q = q.where('status', '=', filter.status);
  return paginate<ExecutionRow>(tx, q, { tenantId, table: 'dunning_executions', page, orderBy: 'started_at' });
}

export async function actionsOfExecutions(tx: Tx, tenantId: string, executionIds: string[]): Promise<ActionRow[]> {
  if (executionIds.length === 0) return [];
  return tx
    .selectFrom('dunning_actions')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('execution_id', 'in', executionIds)
    .orderBy('executed_at')
    .orderBy('id')
    .execute();
}

/** Nothing in a step reads its action back: the row travels with the next awaited statement. */
export async function insertAction(tx: WriteTx, row: Insertable<DunningActionsTable>): Promise<void> {
  await deferWrite(tx, tx.insertInto('dunning_actions').values(row));
}

/** A batch's actions in one statement. */
export async function insertActions(tx: WriteTx, rows: Insertable<DunningActionsTable>[]): Promise<void> {
  if (rows.length > 0) await deferWrite(tx, tx.insertInto('dunning_actions').values(rows));
}

/**
 * Locks those of `ids` still waiting on their follow-up job — outcome `succeeded` with a detail
 * that starts with `detailPrefix` (what the step wrote) — and returns their ids. A second run of
 * the job waits here for the first to commit, then finds them settled. `lock: false` only reads
 * (before a transaction, to skip work already done).
 */
export async function lockAwaitingActions<T extends Tx>(tx: T, tenantId: string, ids: string[], detailPrefix: string, lock: LockFlag<T>): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  let query = tx
    .selectFrom('dunning_actions')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where('id', 'in', ids)
    .where('outcome', '=', 'succeeded')
    .where('detail', 'like', `${detailPrefix.replace(/[\\%_]/g, '\\$&')}%`)
    .orderBy('id');
  if (lock) query = query.forUpdate();
  return new Set((await query.execute()).map((r) => r.id));
}

/** The outcomes of many follow-up jobs, in one UPDATE … FROM (VALUES …). */
export async function settleActions(tx: Tx, tenantId: string, settled: { id: string; outcome: ActionOutcome; detail: string }[]): Promise<void> {
  if (settled.length === 0) return;
  const values = sql.join(settled.map((a) => sql`(${a.id}::uuid, ${a.outcome}::text, ${a.detail}::text)`));
  await sql`UPDATE dunning_actions a SET outcome = v.outcome, detail = v.detail
              FROM (VALUES ${values}) AS v (id, outcome, detail)
             WHERE a.tenant_id = ${tenantId} AND a.id = v.id`.execute(tx);
}

export type StepMove = {
  id: string;
  steps_done: number;
  next_step_at: Date;
  next_step_reason: string;
  /** The bandit's arm and context for a next step that retries the charge (docs/decisions/0310). */
  next_retry_arm: string | null;
  next_retry_context: string | null;
};

/** A batch's executions moved to their next steps in one UPDATE … FROM (VALUES …) (active ones only). */
export async function moveExecutionSteps(tx: WriteTx, tenantId: string, moves: StepMove[], now: Date): Promise<void> {
  if (moves.length === 0) return;
  const values = sql.join(
    moves.map(
      (m) =>
        sql`(${m.id}::uuid, ${m.steps_done}::int, ${m.next_step_at}::timestamptz, ${m.next_step_reason}::text, ${m.next_retry_arm}::text, ${m.next_retry_context}::text)`,
    ),
  );
  await deferWrite(
    tx,
    sql`UPDATE dunning_executions e
           SET steps_done = v.steps_done, next_step_at = v.next_step_at, next_step_reason = v.next_step_reason,
               next_retry_arm = v.next_retry_arm, next_retry_context = v.next_retry_context, updated_at = ${now}
          FROM (VALUES ${values}) AS v (id, steps_done, next_step_at, next_step_reason, next_retry_arm, next_retry_context)
         WHERE e.tenant_id = ${tenantId} AND e.id = v.id AND e.status IN (${sql.join([...executionTransitions.step.from])})`,
  );
}

export type DunnedInvoice = {
  id: string;
  number: string | null;
  status: string;
  currency: string;
  amount_due: number;
  due_date: Date | null;
  subscription_id: string | null;
  /** The time zone of the invoice's legal entity: smart retry timing reads hours on its clock. */
  time_zone: string;
};
export type DunnedCustomer = { id: string; email: string; name: string | null; phone: string | null };

/** What the steps of a batch need to know of their invoices and customers, read at once. */
export async function invoicesAndCustomers(
  tx: Tx,
  tenantId: string,
  invoiceIds: string[],
  customerIds: string[],
): Promise<{ invoices: DunnedInvoice[]; customers: DunnedCustomer[] }> {
  const [invoices, customers] = await Promise.all([
    tx
      .selectFrom('invoices as i')
      .innerJoin('legal_entities as e', (join) => join.onRef('e.tenant_id', '=', 'i.tenant_id').onRef('e.id', '=', 'i.entity_id'))
      .select(['i.id', 'i.number', 'i.status', 'i.currency', 'i.amount_due', 'i.due_date', 'i.subscription_id', 'e.time_zone'])
      .where('i.tenant_id', '=', tenantId)
      .where('i.id', 'in', invoiceIds)
      .execute(),
    tx.selectFrom('customers').select(['id', 'email', 'name', 'phone']).where('tenant_id', '=', tenantId).where('id', 'in', customerIds).execute(),
  ]);
  return { invoices, customers };
}

export async function markLastActionRecovering(tx: Tx, tenantId: string, executionId: string): Promise<void> {
  await sql`
    UPDATE dunning_actions SET led_to_recovery = true
    WHERE tenant_id = ${tenantId} AND id = (
      SELECT id FROM dunning_actions WHERE tenant_id = ${tenantId} AND execution_id = ${executionId} ORDER BY executed_at DESC, id DESC LIMIT 1)`.execute(tx);
}

/** Executions with something due (a step, or the end of a payment-wall grace), locked for this runner. */
export async function claimDueExecutions(tx: Tx, mode: Mode | null, now: Date, limit: number): Promise<ExecutionRow[]> {
  const { rows } = await sql<ExecutionRow>`
    SELECT * FROM dunning_executions
    WHERE ${isExecutionDue(now)} AND ${inMode(mode)}
    ORDER BY next_step_at NULLS LAST
    LIMIT ${limit}
    FOR UPDATE SKIP LOCKED`.execute(tx);
  return rows;
}

/** An execution (a row of `dunning_executions`) with something due at `now`, in the test clock scope. */
function isExecutionDue(now: Date): RawBuilder<boolean> {
  return sql<boolean>`status = 'active' AND (next_step_at <= ${now} OR (wall_at <= ${now} AND NOT payment_wall_active))
      AND ${testClockScope('dunning_executions.tenant_id', 'dunning_executions.customer_id')}`;
}

/** Whether the step runner has an execution in the test clock scope to act on at `now`: an advance skips the runner while none has. */
export function dueExecutionsInClockScope(now: Date): RawBuilder<boolean> {
  return sql<boolean>`EXISTS (SELECT 1 FROM dunning_executions WHERE ${isExecutionDue(now)})`;
}

export type OverdueInvoice = { tenant_id: string; id: string; customer_id: string };

/** An open invoice (alias `i`) past its due date at `now`, never dunned, of a tenant whose default campaign dunns overdue invoices, in the test clock scope. */
function isOverdueUndunned(now: Date): RawBuilder<boolean> {
  return sql<boolean>`i.status = 'open' AND i.amount_due > 0 AND i.due_date < ${now}
      AND ${testClockScope('i.tenant_id', 'i.customer_id')}
      AND NOT EXISTS (SELECT 1 FROM dunning_executions e WHERE e.tenant_id = i.tenant_id AND e.invoice_id = i.id)
      AND EXISTS (SELECT 1 FROM dunning_campaigns c WHERE c.tenant_id = i.tenant_id AND c.is_default AND c.is_active AND c.trigger_event = 'invoice_overdue')`;
}

/** Whether the overdue scan has an invoice in the test clock scope to start dunning at `now`: an advance skips the scan while none has. */
export function overdueInvoicesInClockScope(now: Date): RawBuilder<boolean> {
  return sql<boolean>`EXISTS (SELECT 1 FROM invoices i WHERE ${isOverdueUndunned(now)})`;
}

/** Open invoices past their due date, never dunned, of tenants whose default campaign dunns overdue invoices (the overdue scan). */
export async function overdueInvoicesWithoutDunning(tx: Tx, mode: Mode | null, now: Date, limit: number): Promise<OverdueInvoice[]> {
  const { rows } = await sql<OverdueInvoice>`
    SELECT i.tenant_id, i.id, i.customer_id FROM invoices i
    WHERE ${isOverdueUndunned(now)} AND ${inMode(mode, 'i.tenant_id')}
    ORDER BY i.due_date LIMIT ${limit}`.execute(tx);
  return rows;
}

export async function wallOfCustomer(tx: Tx, tenantId: string, customerId: string): Promise<{ invoice_id: string; payment_wall_since: Date | null }[]> {
  return (
    tx
      .selectFrom('dunning_executions')
      .select(['invoice_id', 'payment_wall_since'])
      .where('tenant_id', '=', tenantId)
      .where('customer_id', '=', customerId)
      // An exhausted campaign's wall stands until the invoice is paid, voided or credited to zero.
      .where('status', 'in', ['active', 'exhausted'])
      .where('payment_wall_active', '=', true)
      .orderBy('payment_wall_since')
      .execute()
  );
}

/** Lowers the walls that exhausted executions of these invoices left standing; the rows lowered. */
export async function liftExhaustedWalls(tx: Tx, tenantId: string, invoiceIds: string[], now: Date): Promise<ExecutionRow[]> {
  if (invoiceIds.length === 0) return [];
  return tx
    .updateTable('dunning_executions')
    .set({ payment_wall_active: false, updated_at: now })
    .where('tenant_id', '=', tenantId)
    .where('invoice_id', 'in', invoiceIds)
    .where('status', 'in', executionTransitions.lower_wall.from)
    .where('payment_wall_active', '=', true)
    .returningAll()
    .execute();
}

/** The tenant's dunning weights: every context × arm it has outcomes for. */
export async function retryArmStats(
  tx: Tx,
  tenantId: string,
): Promise<{ context: string; arm: string; successes: number; failures: number; updated_at: Date }[]> {
  return tx
    .selectFrom('dunning_retry_arms')
    .select(['context', 'arm', 'successes', 'failures', 'updated_at'])
    .where('tenant_id', '=', tenantId)
    .orderBy('context')
    .orderBy('arm')
    .execute();
}

/**
 * The bandit retries of these invoices' executions whose outcome is not learned yet: all are
 * marked learned; the latest of each execution is returned (the one the outcome belongs to).
 */
export async function takeUnlearnedRetries(tx: WriteTx, tenantId: string, invoiceIds: string[]): Promise<{ context: string; arm: string }[]> {
  if (invoiceIds.length === 0) return [];
  const rows = await tx
    .selectFrom('dunning_actions as a')
    .innerJoin('dunning_executions as e', (j) => j.onRef('e.tenant_id', '=', 'a.tenant_id').onRef('e.id', '=', 'a.execution_id'))
    .select(['a.id', 'a.execution_id', 'a.retry_arm', 'a.retry_context', 'a.executed_at'])
    .where('a.tenant_id', '=', tenantId)
    .where('e.invoice_id', 'in', invoiceIds)
    .where('a.retry_arm', 'is not', null)
    .where('a.retry_learned', '=', false)
    .orderBy('a.executed_at', 'desc')
    .orderBy('a.id', 'desc')
    .forUpdate()
    .execute();
  if (rows.length === 0) return [];
  await tx
    .updateTable('dunning_actions')
    .set({ retry_learned: true })
    .where('tenant_id', '=', tenantId)
    .where(
      'id',
      'in',
      rows.map((r) => r.id),
    )
    .execute();
  const latest = new Map<string, { context: string; arm: string }>();
  for (const r of rows) if (!latest.has(r.execution_id)) latest.set(r.execution_id, { context: r.retry_context!, arm: r.retry_arm! });
  return [...latest.values()];
}

/** Adds outcomes to the tenant's dunning weights (one row per context × arm). */
export async function addRetryOutcomes(tx: Tx, tenantId: string, outcomes: { context: string; arm: string; success: boolean }[], now: Date): Promise<void> {
  for (const o of outcomes) {
    await tx
      .insertInto('dunning_retry_arms')
      .values({ tenant_id: tenantId, context: o.context, arm: o.arm, successes: o.success ? 1 : 0, failures: o.success ? 0 : 1, updated_at: now })
      .onConflict((oc) =>
        oc.columns(['tenant_id', 'context', 'arm']).doUpdateSet({
          successes: sql`dunning_retry_arms.successes + excluded.successes`,
          failures: sql`dunning_retry_arms.failures + excluded.failures`,
          updated_at: now,
        }),
      )
      .execute();
  }
}

export type OverviewRow = { step_id: string | null; channel: string; attempts: number; successes: number };

export async function actionTotals(tx: Tx, tenantId: string, from: Date, to: Date): Promise<OverviewRow[]> {
  const { rows } = await sql<OverviewRow>`
    SELECT step_id, channel, count(*)::int AS attempts, count(*) FILTER (WHERE led_to_recovery)::int AS successes
    FROM dunning_actions WHERE tenant_id = ${tenantId} AND executed_at >= ${from} AND executed_at < ${to}
    GROUP BY step_id, channel ORDER BY channel, step_id`.execute(tx);
  return rows;
}

export type CollectionRow = {
  id: string;
  number: string | null;
  customer_id: string;
  currency: string;
  amount_due: number;
  due_date: Date | null;
  /** The invoice's latest dunning execution, read with the page as JSON (timestamps as text). */
  dunning: { id: string; status: string; steps_done: number; next_step_at: string | null; payment_wall_active: boolean } | null;
};

/**
 * The collections queue: open invoices past due with something left to pay, oldest due first (id
 * breaking ties), each with its latest dunning execution, through paginate (decision 0035).
 */
export async function overdueCollections(tx: Tx, tenantId: string, now: Date, page: Page): Promise<ListResult<CollectionRow>> {
  const q = tx.selectFrom('invoices').where('tenant_id', '=', tenantId).where('status', '=', 'open').where('amount_due', '>', 0).where('due_date', '<', now);
  return paginate<CollectionRow>(tx, q, {
    tenantId,
    table: 'invoices',
    page,
    orderBy: 'due_date',
    ascending: true,
    columns: ['id', 'number', 'customer_id', 'currency', 'amount_due', 'due_date'],
    select: (query) =>
      query.select(
        sql<CollectionRow['dunning']>`(
          SELECT json_build_object('id', d.id, 'status', d.status, 'steps_done', d.steps_done, 'next_step_at', d.next_step_at, 'payment_wall_active', d.payment_wall_active)
          FROM dunning_executions d WHERE d.tenant_id = invoices.tenant_id AND d.invoice_id = invoices.id ORDER BY d.started_at DESC LIMIT 1
        )`.as('dunning'),
      ),
  });
}

/** activeExecutionOfInvoice for many invoices in one statement. */
export async function activeExecutionsOfInvoices<T extends Tx>(
  tx: T,
  tenantId: string,
  invoiceIds: string[],
  forUpdate?: LockFlag<T>,
): Promise<ExecutionRow[]> {
  if (invoiceIds.length === 0) return [];
  let q = tx
    .selectFrom('dunning_executions')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('invoice_id', 'in', invoiceIds)
    .where('status', '=', 'active')
    .orderBy('id');
  if (forUpdate) q = q.forUpdate();
  return q.execute();
}

/** The earliest step or payment wall due after `after` among the executions in the test clock scope (an advance steps to it). */
export async function nextDunningInstant(tx: Tx, after: Date): Promise<Date | null> {
  const { rows } = await sql<{ at: Date | null }>`
    SELECT min(least(CASE WHEN next_step_at > ${after} THEN next_step_at END, CASE WHEN NOT payment_wall_active AND wall_at > ${after} THEN wall_at END)) AS at
    FROM dunning_executions
    WHERE status = 'active' AND (next_step_at > ${after} OR (wall_at > ${after} AND NOT payment_wall_active))
      AND ${testClockScope('dunning_executions.tenant_id', 'dunning_executions.customer_id')}`.execute(tx);
  const at = rows[0]?.at;
  return at ? new Date(at) : null;
}
