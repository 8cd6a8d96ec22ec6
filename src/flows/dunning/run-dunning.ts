import type { Kysely } from 'kysely';
import type { Ctx } from '../../platform/context.js';
import type { DB } from '../../platform/db/schema.js';
import type { EventPayload } from '../../platform/events/events.js';
import type { JobEnv } from '../../platform/jobs/jobs.js';
import { enqueueMail, isDeliverableAddress, isMailConfigured } from '../../platform/mail/index.js';
import { formatMoney } from '../../modules/documents/index.js';
import {
  campaignSteps,
  claimDueExecutions,
  deferExecutionStep,
  endExecution,
  invoicesAndCustomers,
  overdueInvoicesWithoutDunning,
  paymentRetrier,
  raisePaymentWall,
  recordAction,
  renderDunningMail,
  startExecution,
  stopExecutionOfInvoice,
  stopExecutionsOfInvoices,
  type DunnedCustomer,
  type DunnedInvoice,
  type ExecutionRow,
  type StepRow,
} from '../../modules/dunning/index.js';
import { markInvoiceUncollectible } from '../../modules/invoices/index.js';
import { getTenant } from '../../modules/tenants/index.js';
import { cancelSubscription } from '../subscriptions/cancel-subscription.js';
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
      if (typeof object.customer_id === 'string') await startExecution(ctx, { id: object.id, customer_id: object.customer_id }, 'payment_failed');
      return;
    case 'invoice.paid':
      await stopExecutionOfInvoice(ctx, object.id, 'recovered');
      return;
    case 'invoice.voided':
    case 'invoice.marked_uncollectible':
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
  if (paid.length > 0) await stopExecutionsOfInvoices(ctx, paid, 'recovered');
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

type StepResult = { outcome: 'succeeded' | 'failed' | 'skipped'; detail: string };

/** What the steps of one tenant's part of a batch read, loaded once for the batch. */
type BatchContext = {
  campaigns: Map<string, Awaited<ReturnType<typeof campaignSteps>>>;
  invoices: Map<string, DunnedInvoice>;
  customers: Map<string, DunnedCustomer>;
  tenantName: string;
};

async function loadBatchContext(ctx: Ctx, executions: ExecutionRow[]): Promise<BatchContext> {
  const campaignIds = [...new Set(executions.map((e) => e.campaign_id))];
  const [campaigns, related, tenant] = await Promise.all([
    Promise.all(campaignIds.map(async (id) => [id, await campaignSteps(ctx, id)] as const)),
    invoicesAndCustomers(
      ctx.tx,
      ctx.tenantId,
      executions.map((e) => e.invoice_id),
      executions.map((e) => e.customer_id),
    ),
    getTenant(ctx),
  ]);
  return {
    campaigns: new Map(campaigns),
    invoices: new Map(related.invoices.map((i) => [i.id, i])),
    customers: new Map(related.customers.map((c) => [c.id, c])),
    tenantName: tenant.name,
  };
}

async function sendDunningEmail(ctx: Ctx, env: Pick<JobEnv, 'config'>, execution: ExecutionRow, step: StepRow, batch: BatchContext): Promise<StepResult> {
  if (!isMailConfigured(env.config)) return { outcome: 'skipped', detail: 'no SMTP server is configured' };
  const invoice = batch.invoices.get(execution.invoice_id)!;
  const customer = batch.customers.get(execution.customer_id);
  if (!customer || !isDeliverableAddress(customer.email)) return { outcome: 'skipped', detail: 'the customer has no e-mail address' };
  const mail = renderDunningMail(step, {
    customer: { name: customer.name ?? customer.email, email: customer.email },
    invoice: {
      number: invoice.number ?? '',
      amount_due: formatMoney(invoice.amount_due, invoice.currency),
      due_date: invoice.due_date ? invoice.due_date.toISOString().slice(0, 10) : null,
    },
    tenant: { name: batch.tenantName },
    pay_url: null,
  });
  await enqueueMail(ctx.tx, ctx.now, {
    tenantId: ctx.tenantId,
    to: customer.email,
    subject: mail.subject,
    text: mail.text,
    html: mail.html,
    fromName: batch.tenantName,
  });
  return { outcome: 'succeeded', detail: `e-mailed ${customer.email}` };
}

async function runStep(ctx: Ctx, env: Pick<JobEnv, 'config'>, execution: ExecutionRow, step: StepRow, batch: BatchContext): Promise<StepResult> {
  switch (step.channel) {
    case 'email':
      return sendDunningEmail(ctx, env, execution, step, batch);
    case 'sms':
      return { outcome: 'skipped', detail: 'no SMS provider is configured' };
    case 'in_app':
      return { outcome: 'succeeded', detail: 'shown to the customer in the portal' };
    case 'retry_payment': {
      const retry = paymentRetrier();
      if (!retry) return { outcome: 'skipped', detail: 'automatic payment retries are not available' };
      return retry(ctx, execution.invoice_id);
    }
  }
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

/**
 * One due execution, locked by the runner: its payment-wall grace, then its next step (edits to
 * the campaign apply to steps not yet run). The common case — a step that is not the last — waits
 * on nothing: the action and the move are deferred writes.
 */
async function advanceDunningExecution(ctx: Ctx, env: Pick<JobEnv, 'config'>, execution: ExecutionRow, batch: BatchContext): Promise<void> {
  let current = execution;
  if (current.wall_at && current.wall_at <= ctx.now && !current.payment_wall_active) {
    await recordAction(ctx, current, null, 'payment_wall', 'succeeded', 'grace period ended');
    current = await raisePaymentWall(ctx, current);
  }
  if (!current.next_step_at || current.next_step_at > ctx.now) return;
  const { campaign, steps } = batch.campaigns.get(current.campaign_id)!;
  const invoice = batch.invoices.get(current.invoice_id)!;
  const step = steps[current.steps_done];
  if (!campaign || !step || invoice.status !== 'open') {
    await endExecution(ctx, current, invoice.status === 'open' ? 'exhausted' : 'canceled');
    return;
  }
  const result = await runStep(ctx, env, current, step, batch);
  await recordAction(ctx, current, step, step.channel, result.outcome, result.detail);
  if (step.is_payment_wall) current = await raisePaymentWall(ctx, current);
  const next = steps[current.steps_done + 1];
  if (next) {
    const at = Math.max(ctx.now.getTime(), current.started_at.getTime() + next.delay_hours * 3_600_000);
    await deferExecutionStep(ctx.tx, ctx.tenantId, current.id, { steps_done: current.steps_done + 1, next_step_at: new Date(at), updated_at: ctx.now });
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
export async function runDueDunningSteps(env: Pick<JobEnv, 'db' | 'clock' | 'config'>, batch = 100, maxBatches = 10_000): Promise<number> {
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
      }
      return due.length;
    });
    steps += ran;
    if (ran === 0) return steps;
  }
  return steps;
}
