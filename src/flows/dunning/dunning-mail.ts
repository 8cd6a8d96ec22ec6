import { sql } from 'kysely';
import type { Ctx } from '../../platform/context.js';
import type { Tx } from '../../platform/db/schema.js';
import type { Job, JobEnv } from '../../platform/jobs/jobs.js';
import { enqueueMail, isDeliverableAddress, isMailConfigured } from '../../platform/mail/index.js';
import { findCustomer } from '../../modules/customers/index.js';
import { formatMoney } from '../../modules/documents/index.js';
import { renderDunningMail, settleAction } from '../../modules/dunning/index.js';
import { getInvoiceRow } from '../../modules/invoices/index.js';
import { isTemplateName, renderTemplate, templateSource } from '../../modules/notifications/index.js';
import { getTenant } from '../../modules/tenants/index.js';
import { createCheckoutSession, prepareCheckout } from '../collections/checkout-invoice.js';

/**
 * A dunning e-mail step (docs/decisions/0185): the step runner records the action and queues this
 * job (one per execution and step, by unique key); the job asks the gateway for a hosted checkout
 * before its transaction, then — in one transaction — opens the checkout session, renders the
 * template with the pay link, queues the mail in the outbox and settles the action. The runner's
 * transaction never waits on a gateway.
 */
export const DUNNING_EMAIL_JOB = 'dunning.send_email';

export type DunningEmailPayload = {
  action_id: string;
  invoice_id: string;
  customer_id: string;
  /** The step's content when it ran (a later edit of the step does not change a queued mail). */
  template_name: string;
  subject: string;
  body: string;
  sent?: boolean;
};

export function dunningEmailJob(tenantId: string, executionId: string, stepId: string, payload: DunningEmailPayload) {
  return { kind: DUNNING_EMAIL_JOB, tenantId, payload, uniqueKey: `dunning-mail:${executionId}:${stepId}`, maxAttempts: 5 };
}

export async function sendDunningEmail(job: Job, env: Pick<JobEnv, 'db' | 'config' | 'secrets' | 'clock'>): Promise<void> {
  const payload = job.payload as DunningEmailPayload;
  const tenantId = job.tenant_id;
  if (!tenantId || payload.sent) return;
  const now = env.clock.now();
  const read: Ctx = { tx: env.db, tenantId, now };
  const invoice = await getInvoiceRow(read, payload.invoice_id).catch(() => undefined);
  if (!invoice || invoice.status !== 'open') {
    // Paid (or voided) between the step and this job: no reminder for a settled invoice.
    await settleAction(env.db, tenantId, payload.action_id, 'skipped', `invoice is ${invoice?.status ?? 'gone'}; no e-mail sent`);
    return;
  }
  if (!isMailConfigured(env.config)) {
    await settleAction(env.db, tenantId, payload.action_id, 'skipped', 'no SMTP server is configured');
    return;
  }
  // The gateway is asked outside the transaction; a gateway that cannot make a checkout leaves the mail without a link.
  const checkout = await prepareCheckout(read, env, payload.invoice_id).catch(() => null);
  await env.db.transaction().execute(async (tx) => {
    const ctx: Ctx = { tx, tenantId, now };
    const customer = await findCustomer(tx, tenantId, payload.customer_id);
    const to = customer?.email?.trim();
    if (!customer || !isDeliverableAddress(to)) {
      await settleAction(tx, tenantId, payload.action_id, 'skipped', 'the customer has no e-mail address');
      return;
    }
    const payUrl = checkout ? ((await createCheckoutSession(ctx, env, payload.invoice_id, checkout).catch(() => null))?.url ?? null) : null;
    const tenant = await getTenant(ctx);
    const vars = {
      customer: { name: customer.name || to, email: to },
      invoice: {
        number: invoice.number ?? '',
        amount_due: formatMoney(invoice.amount_due, invoice.currency),
        due_date: invoice.due_date ? invoice.due_date.toISOString().slice(0, 10) : null,
      },
      tenant: { name: tenant.name },
      pay_url: payUrl,
    };
    // A step with its own subject or body renders those; else the named template (the tenant's version or the default file).
    const mail =
      payload.subject || payload.body
        ? renderDunningMail(payload, vars)
        : renderTemplate(await templateSource(tx, tenantId, isTemplateName(payload.template_name) ? payload.template_name : 'dunning_reminder'), vars);
    await enqueueMail(tx, now, {
      tenantId,
      to,
      subject: mail.subject || tenant.name,
      text: mail.text,
      html: mail.html,
      fromName: tenant.name,
      replyTo: isDeliverableAddress(tenant.email) ? tenant.email : undefined,
    });
    await settleAction(
      tx,
      tenantId,
      payload.action_id,
      'succeeded',
      `e-mailed ${to}${payUrl ? ' with a pay link' : ' (no pay link: no checkout for this invoice)'}`,
    );
    await markJobSent(tx, job.id);
  });
}

/** In the transaction that sent: a rerun of the job (the worker died after commit) sends nothing. */
export async function markJobSent(tx: Tx, jobId: string): Promise<void> {
  await tx
    .updateTable('jobs')
    .set({ payload: sql`payload || '{"sent": true}'::jsonb` })
    .where('id', '=', jobId)
    .execute();
}
