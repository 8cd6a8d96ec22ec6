import type { Kysely } from 'kysely';
import type { Ctx } from '../platform/context.js';
import type { DB } from '../platform/db/schema.js';
import type { EventPayload } from '../platform/events/events.js';
import type { JobEnv } from '../platform/jobs/jobs.js';
import { enqueueMail, isDeliverableAddress, isMailConfigured } from '../platform/mail/index.js';
import { findCustomer } from '../modules/customers/index.js';
import { formatMoney } from '../modules/documents/index.js';
import {
  advanceExecution,
  campaignSteps,
  claimDueExecutions,
  endExecution,
  overdueInvoicesWithoutDunning,
  paymentRetrier,
  raisePaymentWall,
  recordAction,
  renderDunningMail,
  startExecution,
  stopExecutionOfInvoice,
  type ExecutionRow,
  type StepRow,
} from '../modules/dunning/index.js';
import { getInvoiceRow, markInvoiceUncollectible } from '../modules/invoices/index.js';
import { getTenant } from '../modules/tenants/index.js';
import { cancelSubscription } from './cancel-subscription.js';

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

/** Starts dunning every overdue open invoice that was never dunned (trigger `invoice_overdue`). */
export async function scanOverdueInvoices(db: Kysely<DB>, now: Date, batch = 500): Promise<number> {
  let started = 0;
  for (;;) {
    const invoices = await overdueInvoicesWithoutDunning(db, now, batch);
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

async function sendDunningEmail(ctx: Ctx, env: Pick<JobEnv, 'config'>, execution: ExecutionRow, step: StepRow): Promise<StepResult> {
  if (!isMailConfigured(env.config)) return { outcome: 'skipped', detail: 'no SMTP server is configured' };
  const [invoice, customer, tenant] = await Promise.all([getInvoiceRow(ctx, execution.invoice_id), findCustomer(ctx.tx, ctx.tenantId, execution.customer_id), getTenant(ctx)]);
  if (!customer || !isDeliverableAddress(customer.email)) return { outcome: 'skipped', detail: 'the customer has no e-mail address' };
  const mail = renderDunningMail(step, {
    customer: { name: customer.name ?? customer.email, email: customer.email },
    invoice: { number: invoice.number ?? '', amount_due: formatMoney(invoice.amount_due, invoice.currency), due_date: invoice.due_date ? invoice.due_date.toISOString().slice(0, 10) : null },
    tenant: { name: tenant.name },
    pay_url: null,
  });
  await enqueueMail(ctx.tx, ctx.now, { tenantId: ctx.tenantId, to: customer.email, subject: mail.subject, text: mail.text, html: mail.html, fromName: tenant.name });
  return { outcome: 'succeeded', detail: `e-mailed ${customer.email}` };
}

async function runStep(ctx: Ctx, env: Pick<JobEnv, 'config'>, execution: ExecutionRow, step: StepRow): Promise<StepResult> {
  switch (step.channel) {
    case 'email':
      return sendDunningEmail(ctx, env, execution, step);
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
async function applyExhaustedAction(ctx: Ctx, execution: ExecutionRow, action: 'cancel' | 'mark_unpaid' | 'nothing'): Promise<void> {
  if (action === 'nothing') return;
  const invoice = await getInvoiceRow(ctx, execution.invoice_id);
  if (invoice.status !== 'open') return;
  if (action === 'mark_unpaid') {
    // Uncollectible: the billing run's delinquency pass then moves the subscription to `unpaid`.
    await markInvoiceUncollectible(ctx, invoice.id);
  } else if (invoice.subscription_id) {
    await cancelSubscription(ctx, invoice.subscription_id, { at_period_end: false, prorate: false });
  }
}

/** One due execution: its payment-wall grace, then its next step (edits to the campaign apply to steps not yet run). */
export async function advanceDunningExecution(ctx: Ctx, env: Pick<JobEnv, 'config'>, execution: ExecutionRow): Promise<ExecutionRow> {
  let current = execution;
  if (current.wall_at && current.wall_at <= ctx.now && !current.payment_wall_active) {
    await recordAction(ctx, current, null, 'payment_wall', 'succeeded', 'grace period ended');
    current = await raisePaymentWall(ctx, current);
  }
  if (!current.next_step_at || current.next_step_at > ctx.now) return current;
  const { campaign, steps } = await campaignSteps(ctx, current.campaign_id);
  const step = steps[current.steps_done];
  if (!campaign || !step) return endExecution(ctx, current, 'exhausted');
  const result = await runStep(ctx, env, current, step);
  await recordAction(ctx, current, step, step.channel, result.outcome, result.detail);
  if (step.is_payment_wall) current = await raisePaymentWall(ctx, current);
  const next = await advanceExecution(ctx, current, steps);
  if (next.status === 'exhausted') await applyExhaustedAction(ctx, next, campaign.exhausted_action);
  return next;
}

/** The job: every execution with something due, in batches, each batch one transaction per tenant row. */
export async function runDueDunningSteps(env: Pick<JobEnv, 'db' | 'clock' | 'config'>, batch = 100): Promise<number> {
  const now = env.clock.now();
  let steps = 0;
  for (;;) {
    const ran = await env.db.transaction().execute(async (tx) => {
      const due = await claimDueExecutions(tx, now, batch);
      for (const execution of due) await advanceDunningExecution({ tx, tenantId: execution.tenant_id, now }, env, execution);
      return due.length;
    });
    steps += ran;
    if (ran < batch) return steps;
  }
}
