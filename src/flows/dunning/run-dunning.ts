import type { Kysely } from 'kysely';
import type { Ctx } from '../../platform/context.js';
import type { DB } from '../../platform/db/schema.js';
import type { EventPayload } from '../../platform/events/events.js';
import type { JobEnv } from '../../platform/jobs/jobs.js';
import { enqueueJobs, type JobSpec } from '../../platform/jobs/jobs.js';
import { newId } from '../../platform/ids.js';
import { isDeliverableAddress, isMailConfigured } from '../../platform/mail/index.js';
import { defaultPaymentMethodsOf, lastFailureCodes, successfulChargesSince } from '../../modules/collections/index.js';
import { formatMoney } from '../../platform/money.js';
import {
  SMART_RETRY_HISTORY_DAYS,
  armTime,
  chooseArm,
  contextKey,
  learnRetryOutcome,
  retryArmStatsOf,
  retryContext,
  seedOf,
  seededRandom,
  type ArmStats,
  campaignSteps,
  chooseRetryTime,
  claimDueExecutions,
  endExecution,
  insertActions,
  invoicesAndCustomers,
  liftWallOfInvoices,
  moveExecutionSteps,
  overdueInvoicesWithoutDunning,
  paymentRetrier,
  raisePaymentWall,
  recordAction,
  type StepMove,
  startExecution,
  stopExecutionOfInvoice,
  stopExecutionsOfInvoices,
  type DunnedCustomer,
  type DunnedInvoice,
  type ExecutionRow,
  type RetryHistorySample,
  type StepRow,
} from '../../modules/dunning/index.js';
import { isSmsNumber } from '../../modules/notifications/index.js';
import { markInvoiceUncollectible } from '../../modules/invoices/index.js';
import { getTenant } from '../../modules/tenants/index.js';
import { cancelSubscription } from '../subscriptions/cancel-subscription.js';
import { EMAIL_QUEUED, dunningEmailJob, type DunningEmail } from './dunning-mail.js';
import { DEFAULT_SMS, dunningSmsJob } from './dunning-sms.js';
import type { Mode } from '../../platform/auth/tenant-mode.js';

/**
 * Dunning across modules (DESIGN §12, docs/decisions/0090): executions start in the transaction
 * that emitted `invoice.payment_failed` (or from the overdue scan), stop in the transaction that
 * paid, voided or wrote off the invoice — whatever path did it — and advance by a job.
 */
export async function dunningOnInvoiceEvent(ctx: Ctx, event: EventPayload): Promise<void> {
  const object = event.data.object as { id?: unknown; customer_id?: unknown };
  if (typeof object.id !== 'string') return;
  switch (event.type) {
    case 'invoice.payment_failed':
      // A bandit retry that was followed by another failed charge: a failure of its arm (decision 0310).
      await learnRetryOutcome(ctx, [object.id], false);
      if (typeof object.customer_id === 'string') await startExecution(ctx, { id: object.id, customer_id: object.customer_id }, 'payment_failed');
      return;
    case 'invoice.paid':
      await learnRetryOutcome(ctx, [object.id], true);
      await stopExecutionOfInvoice(ctx, object.id, 'recovered');
      await liftWallOfInvoices(ctx, [object.id], 'recovered');
      return;
    case 'invoice.voided':
      await stopExecutionOfInvoice(ctx, object.id, 'canceled');
      await liftWallOfInvoices(ctx, [object.id], 'canceled');
      return;
    case 'invoice.marked_uncollectible':
      // Written off is still unpaid: an exhausted campaign's wall stays (its own mark_unpaid lands here).
      await stopExecutionOfInvoice(ctx, object.id, 'canceled');
      return;
  }
}

/**
 * The same for one emitEvents batch: a batch of payments (the automatic-charging job) stops the
 * dunning of all its paid invoices with one read. A batch with any other dunning event is taken
 * one event at a time, in order.
 */
dunningOnInvoiceEvent.batch = async (ctx: Ctx, events: EventPayload[]): Promise<void> => {
  const acts = events.filter((e) => ['invoice.payment_failed', 'invoice.paid', 'invoice.voided', 'invoice.marked_uncollectible'].includes(e.type));
  if (acts.some((e) => e.type !== 'invoice.paid')) {
    for (const event of acts) await dunningOnInvoiceEvent(ctx, event);
    return;
  }
  const paid = acts.map((e) => (e.data.object as { id?: unknown }).id).filter((id): id is string => typeof id === 'string');
  if (paid.length > 0) {
    await learnRetryOutcome(ctx, paid, true);
    await stopExecutionsOfInvoices(ctx, paid, 'recovered');
    await liftWallOfInvoices(ctx, paid, 'recovered');
  }
};

/** Starts dunning every overdue open invoice that was never dunned (trigger `invoice_overdue`). */
export async function scanOverdueInvoices(db: Kysely<DB>, mode: Mode | null, now: Date, batch = 500): Promise<number> {
  let started = 0;
  for (;;) {
    const invoices = await overdueInvoicesWithoutDunning(db, mode, now, batch);
    if (invoices.length === 0) return started;
    let progressed = 0;
    for (const invoice of invoices) {
      const row = await db.transaction().execute((tx) => startExecution({ tx, tenantId: invoice.tenant_id, now }, invoice, 'invoice_overdue'));
      if (row) progressed += 1;
    }
    started += progressed;
    // Tenants without a dunning campaign leave their invoices undunned: stop rather than spin.
    if (progressed === 0 || invoices.length < batch) return started;
  }
}

/**
 * A step's outcome; `followUp` is the job (given the action's id) that does the side effect after
 * commit; `mail` is the step's e-mail, which joins the batch's one e-mail job (docs/decisions/0189).
 */
type StepResult = {
  outcome: 'succeeded' | 'failed' | 'skipped';
  detail: string;
  followUp?: (actionId: string) => JobSpec;
  mail?: Omit<DunningEmail, 'action_id'>;
};

/** What the steps of one tenant's part of a batch read, loaded once for the batch. */
type BatchContext = {
  campaigns: Map<string, Awaited<ReturnType<typeof campaignSteps>>>;
  invoices: Map<string, DunnedInvoice>;
  customers: Map<string, DunnedCustomer>;
  tenantName: string;
  smsConfigured: boolean;
  /** Read when a retry is first scheduled in the batch. */
  retryHistory?: RetryHistorySample[];
  failureCodes?: Map<string, string>;
  /** The tenant's dunning weights and its customers' default payment method types (decision 0310). */
  armStats?: ArmStats[];
  methodTypes?: Map<string, string>;
  /** The batch's writes, made set-based when the batch ends (flushBatch). */
  pending: { actions: Parameters<typeof insertActions>[1]; jobs: JobSpec[]; moves: StepMove[]; mails: DunningEmail[] };
};

async function flushBatch(ctx: Ctx, batch: BatchContext): Promise<void> {
  await insertActions(ctx.tx, batch.pending.actions);
  const mails = batch.pending.mails.length > 0 ? [dunningEmailJob(ctx.tenantId, batch.pending.mails)] : [];
  await enqueueJobs(ctx.tx, ctx.now, [...batch.pending.jobs, ...mails]);
  await moveExecutionSteps(ctx.tx, ctx.tenantId, batch.pending.moves, ctx.now);
}

async function loadBatchContext(ctx: Ctx, executions: ExecutionRow[]): Promise<BatchContext> {
  const campaignIds = [...new Set(executions.map((e) => e.campaign_id))];
  const [campaigns, related, tenant, sms] = await Promise.all([
    Promise.all(campaignIds.map(async (id) => [id, await campaignSteps(ctx, id)] as const)),
    invoicesAndCustomers(
      ctx.tx,
      ctx.tenantId,
      executions.map((e) => e.invoice_id),
      executions.map((e) => e.customer_id),
    ),
    getTenant(ctx),
    ctx.tx.selectFrom('sms_connections').select('id').where('tenant_id', '=', ctx.tenantId).executeTakeFirst(),
  ]);
  return {
    campaigns: new Map(campaigns),
    invoices: new Map(related.invoices.map((i) => [i.id, i])),
    customers: new Map(related.customers.map((c) => [c.id, c])),
    tenantName: tenant.name,
    smsConfigured: sms !== undefined,
    pending: { actions: [], jobs: [], moves: [], mails: [] },
  };
}

/** An `email` step joins its batch's e-mail job, which makes the pay links and sends (dunning-mail.ts): nothing is rendered or asked of a gateway here. */
function queueDunningEmail(env: Pick<JobEnv, 'config'>, execution: ExecutionRow, step: StepRow, batch: BatchContext): StepResult {
  if (!isMailConfigured(env.config)) return { outcome: 'skipped', detail: 'no SMTP server is configured' };
  const customer = batch.customers.get(execution.customer_id);
  if (!customer || !isDeliverableAddress(customer.email)) return { outcome: 'skipped', detail: 'the customer has no e-mail address' };
  return {
    outcome: 'succeeded',
    detail: `${EMAIL_QUEUED}${customer.email}`,
    mail: {
      invoice_id: execution.invoice_id,
      customer_id: execution.customer_id,
      template_name: step.template_name,
      subject: step.subject,
      body: step.body,
    },
  };
}

/**
 * An `sms` step queues the message (the provider is called by the job, never inside the step's
 * transaction); the job makes the pay link, renders and sends, and settles the action with the
 * provider's answer (dunning-sms.ts).
 */
function queueDunningSms(ctx: Ctx, execution: ExecutionRow, step: StepRow, batch: BatchContext): StepResult {
  if (!batch.smsConfigured) return { outcome: 'skipped', detail: 'no SMS provider is configured' };
  const customer = batch.customers.get(execution.customer_id);
  if (!customer || !isSmsNumber(customer.phone)) return { outcome: 'skipped', detail: 'the customer has no mobile number in E.164 form' };
  const to = customer.phone;
  return {
    outcome: 'succeeded',
    detail: `SMS queued to ${to}`,
    followUp: (actionId) =>
      dunningSmsJob(ctx.tenantId, {
        action_id: actionId,
        to,
        invoice_id: execution.invoice_id,
        customer_id: execution.customer_id,
        template: step.body || DEFAULT_SMS,
        variables: variablesOf(execution, customer, batch),
      }),
  };
}

function variablesOf(execution: ExecutionRow, customer: DunnedCustomer, batch: BatchContext) {
  const invoice = batch.invoices.get(execution.invoice_id)!;
  return {
    customer: { name: customer.name ?? customer.email, email: customer.email },
    invoice: {
      number: invoice.number ?? '',
      amount_due: formatMoney(invoice.amount_due, invoice.currency),
      due_date: invoice.due_date ? invoice.due_date.toISOString().slice(0, 10) : null,
    },
    tenant: { name: batch.tenantName },
  };
}

async function runStep(ctx: Ctx, env: Pick<JobEnv, 'config' | 'scope'>, execution: ExecutionRow, step: StepRow, batch: BatchContext): Promise<StepResult> {
  switch (step.channel) {
    case 'email':
      return queueDunningEmail(env, execution, step, batch);
    case 'sms':
      return queueDunningSms(ctx, execution, step, batch);
    case 'in_app':
      return { outcome: 'succeeded', detail: 'shown to the customer in the portal' };
    case 'retry_payment': {
      const retry = paymentRetrier(env.scope);
      if (!retry) return { outcome: 'skipped', detail: 'automatic payment retries are not available' };
      return retry(ctx, execution.invoice_id);
    }
  }
}

type RetryChoice = { at: Date; reason: string; arm: string; context: string };

/**
 * When the next retry runs (docs/decisions/0310): Thompson sampling over the retry actions in the
 * invoice's context (failure code × amount band × payment method type), from the tenant's dunning
 * weights; one action is the hour history chose (docs/decisions/0131). The draw is seeded by the
 * execution and step, so a re-run of the batch chooses the same. The tenant's history, weights
 * and method types are read once per batch.
 */
async function retryTiming(ctx: Ctx, execution: ExecutionRow, base: Date, stepsDone: number, batch: BatchContext): Promise<RetryChoice> {
  if (!batch.retryHistory) {
    const since = new Date(ctx.now.getTime() - SMART_RETRY_HISTORY_DAYS * 24 * 3_600_000);
    const [history, codes, stats, methods] = await Promise.all([
      successfulChargesSince(ctx.tx, ctx.tenantId, since),
      lastFailureCodes(ctx.tx, ctx.tenantId, [...batch.invoices.keys()]),
      retryArmStatsOf(ctx),
      defaultPaymentMethodsOf(ctx.tx, ctx.tenantId, [...batch.customers.keys()]),
    ]);
    batch.retryHistory = history;
    batch.failureCodes = codes;
    batch.armStats = stats;
    batch.methodTypes = new Map(methods.map((m) => [m.customer_id, m.type]));
  }
  const invoice = batch.invoices.get(execution.invoice_id)!;
  // Hours and weekdays on the clock of the invoice's legal entity (docs/decisions/0131).
  const timeZone = invoice.time_zone ?? 'UTC';
  const failureCode = batch.failureCodes!.get(execution.invoice_id) ?? null;
  const learned = chooseRetryTime(base, failureCode, batch.retryHistory, timeZone);
  const context = retryContext(failureCode, invoice.amount_due, invoice.currency, batch.methodTypes!.get(execution.customer_id) ?? null);
  const key = contextKey(context);
  const choice = chooseArm(batch.armStats!, key, seededRandom(seedOf(`${execution.id}:${stepsDone}`)));
  const at = armTime(choice.arm, base, learned.at, timeZone);
  const chosen = choice.posteriors.find((p) => p.arm === choice.arm)!;
  const tried = `${chosen.successes} of ${chosen.successes + chosen.failures} such retries in ${key} recovered the invoice`;
  // Before the tenant's first outcome: decision 0131's time and words.
  if (choice.coldStart) return { at, reason: learned.reason, arm: choice.arm, context: key };
  const why = `retry ${choice.arm} at ${at.toISOString()}: Thompson sampling drew ${choice.draws[choice.arm].toFixed(3)} for it, the highest (${tried}; expected ${chosen.expected_reward.toFixed(3)})`;
  return { at, reason: choice.arm === 'learned_hour' ? `${why}; ${learned.reason}` : why, arm: choice.arm, context: key };
}

/** After the last step: what the campaign says happens to the invoice's subscription. */
async function applyExhaustedAction(ctx: Ctx, invoice: DunnedInvoice, action: 'cancel' | 'mark_unpaid' | 'nothing'): Promise<void> {
  if (action === 'nothing' || invoice.status !== 'open') return;
  if (action === 'mark_unpaid') {
    // Uncollectible: the billing run's delinquency pass then moves the subscription to `unpaid`.
    await markInvoiceUncollectible(ctx, invoice.id);
  } else if (invoice.subscription_id) {
    await cancelSubscription(ctx, invoice.subscription_id, { at_period_end: false, prorate: false });
  }
}

/** A payment-wall grace that has ended raises the wall (recorded as an action). */
async function endGraceIfDue(ctx: Ctx, execution: ExecutionRow): Promise<ExecutionRow> {
  if (!execution.wall_at || execution.wall_at > ctx.now || execution.payment_wall_active) return execution;
  await recordAction(ctx, execution, null, 'payment_wall', 'succeeded', 'grace period ended');
  return raisePaymentWall(ctx, execution);
}

/** The step's action, with its follow-up job and mail, deferred to the batch's writes. */
function recordStepOutcome(ctx: Ctx, execution: ExecutionRow, step: StepRow, result: StepResult, batch: BatchContext): void {
  // A retry whose time the bandit chose says why, and carries its arm until its outcome is learned.
  const retry = step.channel === 'retry_payment';
  const detail = retry && execution.next_step_reason ? `${result.detail} (${execution.next_step_reason})` : result.detail;
  const learns = retry && result.outcome === 'succeeded' && execution.next_retry_arm !== null;
  const actionId = newId();
  batch.pending.actions.push({
    tenant_id: ctx.tenantId,
    id: actionId,
    execution_id: execution.id,
    step_id: step.id,
    channel: step.channel,
    executed_at: ctx.now,
    outcome: result.outcome,
    detail,
    led_to_recovery: false,
    retry_arm: learns ? execution.next_retry_arm : null,
    retry_context: learns ? execution.next_retry_context : null,
    retry_learned: false,
  });
  if (result.followUp) batch.pending.jobs.push(result.followUp(actionId));
  if (result.mail) batch.pending.mails.push({ ...result.mail, action_id: actionId });
}

/** Moves the execution on to `next`, at its delay after the start (a retry at the time the bandit chose); deferred to the batch's writes. */
async function scheduleNextStep(ctx: Ctx, execution: ExecutionRow, next: StepRow, batch: BatchContext): Promise<void> {
  const scheduled = new Date(Math.max(ctx.now.getTime(), execution.started_at.getTime() + next.delay_hours * 3_600_000));
  const choice = next.channel === 'retry_payment' ? await retryTiming(ctx, execution, scheduled, execution.steps_done + 1, batch) : null;
  // Moved with the rest of the batch in one UPDATE (flushBatch); the runner holds the row.
  batch.pending.moves.push({
    id: execution.id,
    steps_done: execution.steps_done + 1,
    next_step_at: choice?.at ?? scheduled,
    next_step_reason: choice?.reason ?? '',
    next_retry_arm: choice?.arm ?? null,
    next_retry_context: choice?.context ?? null,
  });
}

/**
 * One due execution, locked by the runner: its payment-wall grace, then its next step (edits to
 * the campaign apply to steps not yet run). The common case — a step that is not the last — waits
 * on nothing: the action and the move are deferred writes.
 */
async function advanceDunningExecution(ctx: Ctx, env: Pick<JobEnv, 'config' | 'scope'>, execution: ExecutionRow, batch: BatchContext): Promise<void> {
  let current = await endGraceIfDue(ctx, execution);
  if (!current.next_step_at || current.next_step_at > ctx.now) return;
  const { campaign, steps } = batch.campaigns.get(current.campaign_id)!;
  const invoice = batch.invoices.get(current.invoice_id)!;
  const step = steps[current.steps_done];
  if (!campaign || !step || invoice.status !== 'open') {
    await endExecution(ctx, current, invoice.status === 'open' ? 'exhausted' : 'canceled');
    return;
  }
  const result = await runStep(ctx, env, current, step, batch);
  recordStepOutcome(ctx, current, step, result, batch);
  if (step.is_payment_wall) current = await raisePaymentWall(ctx, current);
  const next = steps[current.steps_done + 1];
  if (next) {
    await scheduleNextStep(ctx, current, next, batch);
    return;
  }
  await endExecution(ctx, { ...current, steps_done: current.steps_done + 1 }, 'exhausted');
  await applyExhaustedAction(ctx, invoice, campaign.exhausted_action);
}

/**
 * The job: every execution with something due, in batches of `batch` per transaction, until none
 * is due — an execution whose later steps are overdue too (the runner was down) catches up step
 * by step in the same run. Bounded, so a bug can never spin a worker forever.
 */
export async function runDueDunningSteps(env: Pick<JobEnv, 'db' | 'clock' | 'config' | 'scope'>, batch = 100, maxBatches = 10_000): Promise<number> {
  const now = env.clock.now();
  let steps = 0;
  for (let round = 0; round < maxBatches; round += 1) {
    const ran = await env.db.transaction().execute(async (tx) => {
      const due = await claimDueExecutions(tx, env.config.mode, now, batch);
      const byTenant = new Map<string, ExecutionRow[]>();
      for (const execution of due) byTenant.set(execution.tenant_id, [...(byTenant.get(execution.tenant_id) ?? []), execution]);
      for (const [tenantId, executions] of byTenant) {
        const ctx = { tx, tenantId, now };
        const context = await loadBatchContext(ctx, executions);
        for (const execution of executions) await advanceDunningExecution(ctx, env, execution, context);
        await flushBatch(ctx, context);
      }
      return due.length;
    });
    steps += ran;
    if (ran === 0) return steps;
  }
  return steps;
}
