import type { Page } from '../../platform/http/envelope.js';
import type { Ctx, ReadCtx } from '../../platform/context.js';
import type { LockFlag, Tx } from '../../platform/db/schema.js';
import { errors } from '../../platform/errors.js';
import { emitEvent } from '../../platform/events/events.js';
import { newId } from '../../platform/ids.js';
import { enqueueJob } from '../../platform/jobs/jobs.js';
import { toIso, toIsoOrNull } from '../../platform/time.js';
import { findCustomer } from '../customers/index.js';
import {
  actionsOfExecutions,
  actionTotals,
  activeExecutionOfInvoice,
  activeExecutionsOfInvoices,
  activeExecutionsOfCampaign,
  activityOfCampaigns,
  campaignHasExecutions,
  clearDefault,
  deleteCampaignRow,
  deleteStepRow,
  findCampaign,
  findDefaultCampaign,
  findStep,
  insertAction,
  insertCampaign,
  insertExecution,
  insertStep,
  listCampaignRows,
  listExecutionRows,
  settleActions,
  markLastActionRecovering,
  nextStepOrder,
  overdueCollections,
  stepsOfCampaigns,
  updateCampaignRow,
  updateStepRow,
  wallOfCustomer,
  liftExhaustedWalls,
  addRetryOutcomes,
  retryArmStats,
  takeUnlearnedRetries,
  type CampaignRow,
  type ExecutionRow,
  type StepRow,
} from './dunning.repository.js';
import { assertStepTemplates } from './templates.js';
import { parseContextKey, posteriors, RETRY_ARMS } from './bandit.js';
import type { CreateCampaignBody, CreateStepBody, UpdateCampaignBody, UpdateStepBody } from './dunning.schemas.js';
import type { ActionOutcome, DunningTrigger, ExecutionStatus } from './dunning.tables.js';
import { endingEvent, transitionExecution } from './dunning.states.js';

const HOUR_MS = 3_600_000;

/** The job that runs due dunning steps (every minute, and at once when an execution starts with a step due). */
export const DUNNING_STEPS_JOB = 'dunning.run_steps';

function toStep(row: StepRow) {
  return {
    id: row.id,
    campaign_id: row.campaign_id,
    step_order: row.step_order,
    delay_hours: row.delay_hours,
    channel: row.channel,
    template_name: row.template_name,
    subject: row.subject,
    body: row.body,
    is_payment_wall: row.is_payment_wall,
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}

async function renderCampaigns(ctx: ReadCtx, rows: CampaignRow[]) {
  const ids = rows.map((r) => r.id);
  const [steps, activity] = await Promise.all([stepsOfCampaigns(ctx.tx, ctx.tenantId, ids), activityOfCampaigns(ctx.tx, ctx.tenantId, ids)]);
  return rows.map((row) => ({
    id: row.id,
    tenant_id: row.tenant_id,
    name: row.name,
    description: row.description,
    is_active: row.is_active,
    trigger_event: row.trigger_event,
    is_default: row.is_default,
    payment_wall_enabled: row.payment_wall_enabled,
    payment_wall_grace_days: row.payment_wall_grace_days,
    exhausted_action: row.exhausted_action,
    active_subscriptions: activity.get(row.id)?.subscriptions ?? 0,
    active_executions: activity.get(row.id)?.executions ?? 0,
    steps: steps.filter((s) => s.campaign_id === row.id).map(toStep),
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  }));
}

export type Campaign = Awaited<ReturnType<typeof renderCampaigns>>[number];

async function campaignOrNotFound<C extends ReadCtx>(ctx: C, id: string, forUpdate?: LockFlag<C['tx']>): Promise<CampaignRow> {
  const row = await findCampaign<C['tx']>(ctx.tx, ctx.tenantId, id, forUpdate);
  if (!row) throw errors.notFound('dunning campaign');
  return row;
}

export async function createCampaign(ctx: Ctx, input: CreateCampaignBody): Promise<Campaign> {
  // Making a campaign the default unsets the old one (one default per tenant).
  if (input.is_default) await clearDefault(ctx.tx, ctx.tenantId, ctx.now);
  const row = await insertCampaign(ctx.tx, { tenant_id: ctx.tenantId, id: newId(), ...input, created_at: ctx.now, updated_at: ctx.now });
  return (await renderCampaigns(ctx, [row]))[0]!;
}

/**
 * A new tenant's campaign (docs/decisions/0090): e-mail at once, retry after a day, e-mail at
 * three days, retry at five, and at seven days a last e-mail that raises the payment wall.
 */
export async function createDefaultCampaign(ctx: Ctx): Promise<Campaign> {
  const campaign = await createCampaign(ctx, {
    name: 'Default recovery',
    description: 'E-mail at once, retry after 1 day, e-mail at 3 days, retry at 5 days, payment wall at 7 days.',
    is_active: true,
    trigger_event: 'payment_failed',
    is_default: true,
    payment_wall_enabled: false,
    payment_wall_grace_days: 3,
    exhausted_action: 'mark_unpaid',
  });
  const steps: CreateStepBody[] = [
    { delay_hours: 0, channel: 'email', template_name: 'dunning_reminder', subject: '', body: '', is_payment_wall: false },
    { delay_hours: 24, channel: 'retry_payment', template_name: '', subject: '', body: '', is_payment_wall: false },
    { delay_hours: 72, channel: 'email', template_name: 'dunning_reminder', subject: '', body: '', is_payment_wall: false },
    { delay_hours: 120, channel: 'retry_payment', template_name: '', subject: '', body: '', is_payment_wall: false },
    { delay_hours: 168, channel: 'email', template_name: 'dunning_final_notice', subject: '', body: '', is_payment_wall: true },
  ];
  for (const step of steps) await addStep(ctx, campaign.id, step);
  return getCampaign(ctx, campaign.id);
}

export async function listCampaigns(ctx: ReadCtx): Promise<Campaign[]> {
  return renderCampaigns(ctx, await listCampaignRows(ctx.tx, ctx.tenantId));
}

export async function getCampaign(ctx: ReadCtx, id: string): Promise<Campaign> {
  return (await renderCampaigns(ctx, [await campaignOrNotFound(ctx, id)]))[0]!;
}

export async function updateCampaign(ctx: Ctx, id: string, patch: UpdateCampaignBody): Promise<Campaign> {
  await campaignOrNotFound(ctx, id, true);
  if (patch.is_default) await clearDefault(ctx.tx, ctx.tenantId, ctx.now);
  const row = await updateCampaignRow(ctx.tx, ctx.tenantId, id, { ...patch, updated_at: ctx.now });
  return (await renderCampaigns(ctx, [row!]))[0]!;
}

/** Deleting a campaign that is dunning invoices needs `cancel_executions`, which ends them first. */
export async function deleteCampaign(ctx: Ctx, id: string, cancelExecutions: boolean): Promise<Campaign> {
  const campaign = await getCampaign(ctx, id);
  const active = await activeExecutionsOfCampaign(ctx.tx, ctx.tenantId, id);
  if (active.length > 0 && !cancelExecutions) {
    throw errors.conflict(
      `the campaign is dunning ${active.length} invoice(s); pass ?cancel_executions=true to end them and delete it`,
      'campaign_has_active_executions',
    );
  }
  for (const execution of active) await endExecution(ctx, execution, 'canceled');
  // Ended executions keep their history: a campaign with any is kept, deactivated, not deleted.
  if (await campaignHasExecutions(ctx.tx, ctx.tenantId, id))
    await updateCampaignRow(ctx.tx, ctx.tenantId, id, { is_active: false, is_default: false, updated_at: ctx.now });
  else await deleteCampaignRow(ctx.tx, ctx.tenantId, id);
  return { ...campaign, is_active: false, is_default: false, active_executions: 0, active_subscriptions: 0 };
}

export async function addStep(ctx: Ctx, campaignId: string, input: CreateStepBody) {
  assertStepTemplates(input);
  await campaignOrNotFound(ctx, campaignId, true);
  const order = await nextStepOrder(ctx.tx, ctx.tenantId, campaignId);
  return toStep(
    await insertStep(ctx.tx, {
      tenant_id: ctx.tenantId,
      id: newId(),
      campaign_id: campaignId,
      step_order: order,
      ...input,
      created_at: ctx.now,
      updated_at: ctx.now,
    }),
  );
}

async function stepOrNotFound(ctx: Ctx, campaignId: string, stepId: string): Promise<StepRow> {
  await campaignOrNotFound(ctx, campaignId, true);
  const step = await findStep(ctx.tx, ctx.tenantId, campaignId, stepId);
  if (!step) throw errors.notFound('dunning step');
  return step;
}

export async function updateStep(ctx: Ctx, campaignId: string, stepId: string, patch: UpdateStepBody) {
  assertStepTemplates(patch);
  await stepOrNotFound(ctx, campaignId, stepId);
  return toStep(await updateStepRow(ctx.tx, ctx.tenantId, stepId, { ...patch, updated_at: ctx.now }));
}

export async function deleteStep(ctx: Ctx, campaignId: string, stepId: string) {
  const step = await stepOrNotFound(ctx, campaignId, stepId);
  await deleteStepRow(ctx.tx, ctx.tenantId, stepId);
  return toStep(step);
}

/* ── executions ─────────────────────────────────────────────────────────────────────────── */

async function renderExecutions(ctx: ReadCtx, rows: ExecutionRow[]) {
  const actions = await actionsOfExecutions(
    ctx.tx,
    ctx.tenantId,
    rows.map((r) => r.id),
  );
  return rows.map((row) => ({
    id: row.id,
    campaign_id: row.campaign_id,
    invoice_id: row.invoice_id,
    customer_id: row.customer_id,
    trigger_event: row.trigger_event,
    status: row.status,
    steps_done: row.steps_done,
    next_step_at: toIsoOrNull(row.next_step_at),
    next_step_reason: row.next_step_reason,
    payment_wall_active: row.payment_wall_active,
    started_at: toIso(row.started_at),
    ended_at: toIsoOrNull(row.ended_at),
    actions: actions
      .filter((a) => a.execution_id === row.id)
      .map((a) => ({ step_id: a.step_id, channel: a.channel, executed_at: toIso(a.executed_at), outcome: a.outcome, detail: a.detail })),
  }));
}

export async function listExecutions(ctx: ReadCtx, filter: { invoice_id?: string; status?: ExecutionStatus }, page: Page) {
  const { rows, total } = await listExecutionRows(ctx.tx, ctx.tenantId, filter, page);
  return { executions: await renderExecutions(ctx, rows), total };
}

/**
 * Starts dunning an unpaid invoice with the tenant's default campaign when its trigger_event is
 * the one that happened, in the caller's transaction (the one that emitted
 * `invoice.payment_failed`, or the overdue scan's). A second start while one runs is a no-op; a
 * tenant without an active default campaign with steps for that trigger is not dunned.
 */
export async function startExecution(ctx: Ctx, invoice: { id: string; customer_id: string }, trigger: DunningTrigger): Promise<ExecutionRow | null> {
  const campaign = await findDefaultCampaign(ctx.tx, ctx.tenantId);
  // A campaign dunns what its trigger_event names: failed automatic charges, or overdue invoices.
  if (!campaign || campaign.trigger_event !== trigger) return null;
  const steps = await stepsOfCampaigns(ctx.tx, ctx.tenantId, [campaign.id]);
  if (steps.length === 0) return null;
  const row = await insertExecution(ctx.tx, {
    tenant_id: ctx.tenantId,
    id: newId(),
    campaign_id: campaign.id,
    invoice_id: invoice.id,
    customer_id: invoice.customer_id,
    trigger_event: trigger,
    status: 'active',
    steps_done: 0,
    next_step_at: new Date(ctx.now.getTime() + steps[0]!.delay_hours * HOUR_MS),
    wall_at: campaign.payment_wall_enabled ? new Date(ctx.now.getTime() + campaign.payment_wall_grace_days * 24 * HOUR_MS) : null,
    payment_wall_active: false,
    payment_wall_since: null,
    started_at: ctx.now,
    ended_at: null,
    created_at: ctx.now,
    updated_at: ctx.now,
  });
  // A first step due now runs within seconds, not at the next minute's sweep: one job per tenant and second.
  if (row && steps[0]!.delay_hours === 0) {
    await enqueueJob(ctx.tx, ctx.now, {
      kind: DUNNING_STEPS_JOB,
      tenantId: ctx.tenantId,
      uniqueKey: `${DUNNING_STEPS_JOB}:${ctx.tenantId}:${Math.floor(ctx.now.getTime() / 1000)}`,
      maxAttempts: 3,
    });
  }
  return row ?? null;
}

export async function recordAction(
  ctx: Ctx,
  execution: ExecutionRow,
  step: StepRow | null,
  channel: string,
  outcome: ActionOutcome,
  detail: string,
): Promise<string> {
  const id = newId();
  await insertAction(ctx.tx, {
    tenant_id: ctx.tenantId,
    id,
    execution_id: execution.id,
    step_id: step?.id ?? null,
    channel,
    executed_at: ctx.now,
    outcome,
    detail,
    led_to_recovery: false,
  });
  return id;
}

/** A channel that finishes later (an SMS handed to the provider by a job) records how it ended. */
export async function settleAction(tx: Tx, tenantId: string, actionId: string, outcome: ActionOutcome, detail: string): Promise<void> {
  await settleActions(tx, tenantId, [{ id: actionId, outcome, detail }]);
}

export async function raisePaymentWall(ctx: Ctx, execution: ExecutionRow): Promise<ExecutionRow> {
  if (execution.payment_wall_active) return execution;
  const row =
    (await transitionExecution(ctx.tx, ctx.tenantId, execution.id, 'raise_wall', {
      payment_wall_active: true,
      payment_wall_since: ctx.now,
      updated_at: ctx.now,
    })) ?? execution;
  await emitEvent(ctx, 'dunning.payment_wall_activated', {
    id: row.id,
    customer_id: row.customer_id,
    invoice_id: row.invoice_id,
    blocked_since: toIso(ctx.now),
  });
  return row;
}

/**
 * Ends an execution (guarded: only an active one), lifting its payment wall when it had one —
 * except when the campaign gave up (`exhausted`): the invoice is still unpaid, so the wall stays
 * until it is paid, voided or credited to zero (DESIGN §12; liftWallOfInvoice).
 */
export async function endExecution(ctx: Ctx, execution: ExecutionRow, status: Exclude<ExecutionStatus, 'active'>): Promise<ExecutionRow> {
  const keepsWall = status === 'exhausted' && execution.payment_wall_active;
  const row = await transitionExecution(ctx.tx, ctx.tenantId, execution.id, endingEvent[status], {
    steps_done: execution.steps_done,
    next_step_at: null,
    ended_at: ctx.now,
    payment_wall_active: keepsWall,
    updated_at: ctx.now,
  });
  if (!row) return execution;
  if (status === 'recovered') await markLastActionRecovering(ctx.tx, ctx.tenantId, execution.id);
  if (execution.payment_wall_active && !keepsWall) {
    await emitEvent(ctx, 'dunning.payment_wall_lifted', { id: row.id, customer_id: row.customer_id, invoice_id: row.invoice_id, reason: status });
  }
  return row;
}

/** Stops the invoice's running execution (paid → recovered; voided or credited away → canceled). */
export async function stopExecutionOfInvoice(ctx: Ctx, invoiceId: string, status: 'recovered' | 'canceled'): Promise<ExecutionRow | null> {
  const execution = await activeExecutionOfInvoice(ctx.tx, ctx.tenantId, invoiceId, true);
  if (!execution) return null;
  return endExecution(ctx, execution, status);
}

/**
 * The invoice was paid (or credited to zero) or voided after its campaign gave up: the wall its
 * exhausted execution left standing comes down.
 */
export async function liftWallOfInvoices(ctx: Ctx, invoiceIds: string[], reason: 'recovered' | 'canceled'): Promise<void> {
  for (const row of await liftExhaustedWalls(ctx.tx, ctx.tenantId, invoiceIds, ctx.now)) {
    await emitEvent(ctx, 'dunning.payment_wall_lifted', { id: row.id, customer_id: row.customer_id, invoice_id: row.invoice_id, reason });
  }
}

/** stopExecutionOfInvoice for many invoices (a batch of payments): one read, then only the executions found are ended. */
export async function stopExecutionsOfInvoices(ctx: Ctx, invoiceIds: string[], status: 'recovered' | 'canceled'): Promise<ExecutionRow[]> {
  const ended: ExecutionRow[] = [];
  for (const execution of await activeExecutionsOfInvoices(ctx.tx, ctx.tenantId, invoiceIds, true)) ended.push(await endExecution(ctx, execution, status));
  return ended;
}

export async function campaignSteps(ctx: Ctx, campaignId: string): Promise<{ campaign: CampaignRow | undefined; steps: StepRow[] }> {
  const [campaign, steps] = await Promise.all([findCampaign(ctx.tx, ctx.tenantId, campaignId), stepsOfCampaigns(ctx.tx, ctx.tenantId, [campaignId])]);
  return { campaign, steps };
}

/* ── dunning weights (docs/decisions/0310) ───────────────────────────────────────────────── */

/**
 * What a bandit retry of these invoices led to: the invoice paid (success) or another failed
 * charge (failure). Learned once per retry, in the transaction of the event that tells it.
 */
export async function learnRetryOutcome(ctx: Ctx, invoiceIds: string[], success: boolean): Promise<void> {
  const retries = await takeUnlearnedRetries(ctx.tx, ctx.tenantId, invoiceIds);
  if (retries.length > 0)
    await addRetryOutcomes(
      ctx.tx,
      ctx.tenantId,
      retries.map((r) => ({ ...r, success })),
      ctx.now,
    );
}

/** The tenant's dunning weights as the bandit reads them. */
export async function retryArmStatsOf(ctx: Ctx) {
  return (await retryArmStats(ctx.tx, ctx.tenantId)).map((r) => ({ context: r.context, arm: r.arm, successes: r.successes, failures: r.failures }));
}

/**
 * `GET /v1/analytics/dunning/weights`: per context the expected reward (posterior mean chance of
 * recovery) of every retry action, as the next retry in that context would weigh them.
 */
export async function dunningWeights(ctx: ReadCtx) {
  const rows = await retryArmStats(ctx.tx, ctx.tenantId);
  const stats = rows.map((r) => ({ context: r.context, arm: r.arm, successes: r.successes, failures: r.failures }));
  const keys = [...new Set(rows.map((r) => r.context))];
  return {
    algorithm: 'thompson_sampling' as const,
    actions: [...RETRY_ARMS],
    contexts: keys.map((key) => {
      const arms = posteriors(stats, key);
      const best = arms.reduce((a, b) => (b.expected_reward > a.expected_reward ? b : a));
      const updated = rows.filter((r) => r.context === key).reduce((a, r) => (r.updated_at > a ? r.updated_at : a), new Date(0));
      return {
        key,
        context: parseContextKey(key),
        best_action: best.arm,
        updated_at: toIso(updated),
        weights: arms.map((a) => ({
          action: a.arm,
          attempts: a.successes + a.failures,
          successes: a.successes,
          failures: a.failures,
          expected_reward: Math.round(a.expected_reward * 10_000) / 10_000,
          alpha: Math.round(a.alpha * 10_000) / 10_000,
          beta: Math.round(a.beta * 10_000) / 10_000,
        })),
      };
    }),
  };
}

/* ── reads: access, overview, collections ───────────────────────────────────────────────── */

export async function customerAccess(ctx: ReadCtx, customerId: string) {
  if (!(await findCustomer(ctx.tx, ctx.tenantId, customerId))) throw errors.notFound('customer');
  const walls = await wallOfCustomer(ctx.tx, ctx.tenantId, customerId);
  return {
    blocked: walls.length > 0,
    reason: walls.length > 0 ? 'payment_wall' : null,
    invoice_ids: walls.map((w) => w.invoice_id),
    blocked_since: toIsoOrNull(walls[0]?.payment_wall_since ?? null),
  };
}

function parseDay(value: string | undefined, field: string, fallback: Date): Date {
  if (value === undefined) return fallback;
  const m = /^(\d{4})-(\d{2})-(\d{2})(T.*)?$/.exec(value);
  const date = m ? new Date(m[4] ? value : `${value}T00:00:00Z`) : new Date(NaN);
  if (
    !m ||
    Number.isNaN(date.getTime()) ||
    (!m[4] && date.toISOString().slice(0, 10) !== value) ||
    date.getUTCFullYear() < 1970 ||
    date.getUTCFullYear() > 9999
  ) {
    throw errors.invalidField(field, 'must be an ISO 8601 date (YYYY-MM-DD) or date-time');
  }
  return date;
}

function ratio(numerator: number, denominator: number): number {
  return denominator === 0 ? 0 : Math.round((numerator / denominator) * 10_000) / 10_000;
}

/**
 * SPEC 4.14 in both shapes (docs/decisions/0090): every dunning action is an attempt; an attempt
 * succeeded when it was the last one before the customer paid (the execution recovered).
 */
export async function dunningOverview(ctx: ReadCtx, query: { start_date?: string; end_date?: string }) {
  const today = new Date(`${ctx.now.toISOString().slice(0, 10)}T00:00:00Z`);
  const start = parseDay(query.start_date, 'start_date', new Date(today.getTime() - 30 * 24 * HOUR_MS));
  const endDay = parseDay(query.end_date, 'end_date', today);
  // A bare end date includes that whole day.
  const end =
    query.end_date && !query.end_date.includes('T')
      ? new Date(endDay.getTime() + 24 * HOUR_MS)
      : query.end_date
        ? endDay
        : new Date(today.getTime() + 24 * HOUR_MS);
  if (start.getTime() > end.getTime()) throw errors.invalidField('start_date', 'must not be after end_date');
  const rows = await actionTotals(ctx.tx, ctx.tenantId, start, end);
  const attempts = rows.reduce((sum, r) => sum + r.attempts, 0);
  const successes = rows.reduce((sum, r) => sum + r.successes, 0);
  return {
    total_retries: attempts,
    total_successes: successes,
    success_rate: ratio(successes, attempts),
    successful_retries: successes,
    recovery_rate: ratio(successes, attempts),
    period: { start: toIso(start), end: toIso(end) },
    by_action: rows.map((r) => ({
      action_id: r.step_id ?? r.channel,
      attempts: r.attempts,
      successes: r.successes,
      success_rate: ratio(r.successes, r.attempts),
    })),
  };
}

export async function listCollections(ctx: ReadCtx, page: Page) {
  const { rows, total } = await overdueCollections(ctx.tx, ctx.tenantId, ctx.now, page);
  return {
    items: rows.map((r) => ({
      invoice_id: r.id,
      number: r.number,
      customer_id: r.customer_id,
      currency: r.currency,
      amount_due: r.amount_due,
      due_date: toIsoOrNull(r.due_date),
      days_overdue: r.due_date ? Math.floor((ctx.now.getTime() - r.due_date.getTime()) / (24 * HOUR_MS)) : 0,
      dunning: r.dunning
        ? {
            execution_id: r.dunning.id,
            status: r.dunning.status,
            steps_done: r.dunning.steps_done ?? 0,
            next_step_at: r.dunning.next_step_at === null ? null : toIsoOrNull(new Date(r.dunning.next_step_at)),
            payment_wall_active: r.dunning.payment_wall_active ?? false,
          }
        : null,
    })),
    total,
  };
}

/**
 * Reads and writes of this module's own tables that flows and other modules call; the repository
 * itself is private to the module (index.ts exports operations and types only).
 */
export {
  claimDueExecutions,
  insertActions,
  lockAwaitingActions,
  settleActions,
  moveExecutionSteps,
  invoicesAndCustomers,
  overdueInvoicesWithoutDunning,
  overdueInvoicesInClockScope,
  dueExecutionsInClockScope,
} from './dunning.repository.js';

export { nextDunningInstant } from './dunning.repository.js';
