import type { Ctx, ReadCtx } from '../../platform/context.js';
import type { Tx } from '../../platform/db/schema.js';
import { enqueueJobs, noteOnJob, type Job, type JobEnv, type JobSpec } from '../../platform/jobs/jobs.js';
import { isDeliverableAddress, isMailConfigured, mailJobSpec } from '../../platform/mail/index.js';
import { formatMoney } from '../../platform/money.js';
import { invoicesAndCustomers, lockAwaitingActions, renderDunningMail, settleActions, type DunnedCustomer } from '../../modules/dunning/index.js';
import { getInvoiceRows } from '../../modules/invoices/index.js';
import { isTemplateName, renderTemplate, templateSource, type TemplateName } from '../../modules/notifications/index.js';
import { getTenant } from '../../modules/tenants/index.js';
import { createCheckoutSessions, prepareCheckouts, type PreparedCheckout } from '../collections/checkout-invoice.js';

/**
 * Dunning e-mail steps, set-based (docs/decisions/0185, 0189): the step runner records each
 * step's action (`e-mail queued to …`) and queues ONE `dunning.send_email` job per runner batch,
 * carrying its e-mails. The job asks the gateways for hosted checkouts before any transaction
 * (bounded concurrency), then per chunk, in one transaction: re-reads and locks the invoices,
 * locks the actions still waiting (a rerun finds them settled: one mail per execution and step),
 * inserts the checkout sessions, renders the mails, queues them in the outbox and settles the
 * actions — each statement multi-row. The runner's transaction never waits on a gateway.
 */
export const DUNNING_EMAIL_JOB = 'dunning.send_email';

/** What the step writes on its action until the job settles it: the job only sends for actions still saying so. */
export const EMAIL_QUEUED = 'e-mail queued to ';

/** Mails per transaction of the job. */
export const DUNNING_EMAIL_CHUNK = 200;

export type DunningEmail = {
  action_id: string;
  invoice_id: string;
  customer_id: string;
  /** The step's content when it ran (a later edit of the step does not change a queued mail). */
  template_name: string;
  subject: string;
  body: string;
};

/** The job's payload: the e-mails of one runner batch (one tenant). A job queued before 0189 carries one e-mail's fields at the top level. */
export type DunningEmailPayload = { emails: DunningEmail[] } | (DunningEmail & { sent?: boolean });

export function dunningEmailJob(tenantId: string, emails: DunningEmail[]): JobSpec {
  return { kind: DUNNING_EMAIL_JOB, tenantId, payload: { emails }, maxAttempts: 5 };
}

type Settled = Parameters<typeof settleActions>[2][number];

/** What a job reads once for all its chunks: the tenant and the templates its steps name. */
type MailContext = {
  tenant: { name: string; email: string | null };
  templates: Map<TemplateName, Awaited<ReturnType<typeof templateSource>>>;
};

async function loadMailContext(read: ReadCtx, emails: DunningEmail[]): Promise<MailContext> {
  const names = new Set<TemplateName>();
  for (const e of emails) if (!e.subject && !e.body) names.add(isTemplateName(e.template_name) ? e.template_name : 'dunning_reminder');
  const [tenant, templates] = await Promise.all([
    getTenant(read),
    Promise.all([...names].map(async (name) => [name, await templateSource(read.tx, read.tenantId, name)] as const)),
  ]);
  return { tenant, templates: new Map(templates) };
}

function renderMail(email: DunningEmail, customer: DunnedCustomer, to: string, invoice: InvoiceFacts, payUrl: string | null, context: MailContext) {
  const vars = {
    customer: { name: customer.name || to, email: to },
    invoice: {
      number: invoice.number ?? '',
      amount_due: formatMoney(invoice.amount_due, invoice.currency),
      due_date: invoice.due_date ? invoice.due_date.toISOString().slice(0, 10) : null,
    },
    tenant: { name: context.tenant.name },
    pay_url: payUrl,
  };
  // A step with its own subject or body renders those; else the named template (the tenant's version or the default file).
  if (email.subject || email.body) return renderDunningMail(email, vars);
  return renderTemplate(context.templates.get(isTemplateName(email.template_name) ? email.template_name : 'dunning_reminder')!, vars);
}

type InvoiceFacts = { id: string; status: string; number: string | null; currency: string; amount_due: number; due_date: Date | null };

/**
 * Whether a dunning e-mail still has something to ask for: an open invoice, or one the campaign's
 * own end marked uncollectible (`exhausted_action: mark_unpaid`) — a campaign whose last step is
 * the final notice exhausts in the same run that queues that notice, and the notice must still go.
 */
export function stillOwed<I extends Pick<InvoiceFacts, 'status' | 'amount_due'>>(invoice: I | undefined): invoice is I {
  return !!invoice && (invoice.status === 'open' || invoice.status === 'uncollectible') && invoice.amount_due > 0;
}

/**
 * One chunk: checkouts first (outside the transaction), then one transaction. A checkout that
 * could not be made leaves that one mail without a link (the action says why); a mail that cannot
 * be queued (say, a step subject the outbox refuses) fails that one action; the others go on.
 */
async function sendChunk(
  env: Pick<JobEnv, 'db' | 'config' | 'secrets' | 'clock' | 'scope'>,
  read: ReadCtx,
  emails: DunningEmail[],
  context: MailContext,
): Promise<void> {
  const { tenantId, now } = read;
  // A rerun reads and asks nothing for the mails an earlier run sent (the transaction below checks again, under lock).
  const stillWaiting = await lockAwaitingActions(
    env.db,
    tenantId,
    emails.map((e) => e.action_id),
    EMAIL_QUEUED,
    false,
  );
  if (stillWaiting.size === 0) return;
  const { invoices, customers } = await invoicesAndCustomers(
    env.db,
    tenantId,
    emails.map((e) => e.invoice_id),
    emails.map((e) => e.customer_id),
  );
  const invoiceOf = new Map(invoices.map((i) => [i.id, i]));
  const customerOf = new Map(customers.map((c) => [c.id, c]));
  // Only the e-mails that would go out now ask a gateway.
  const wanted = emails.filter(
    (e) => stillWaiting.has(e.action_id) && stillOwed(invoiceOf.get(e.invoice_id)) && isDeliverableAddress(customerOf.get(e.customer_id)?.email?.trim()),
  );
  const checkouts = new Map<string, PreparedCheckout | Error>();
  const asked = await prepareCheckouts(
    read,
    env,
    wanted.map((e) => ({ invoice: invoiceOf.get(e.invoice_id)!, customer: customerOf.get(e.customer_id)! })),
  );
  for (const e of wanted) checkouts.set(e.action_id, asked.get(e.invoice_id)!);
  // One job never holds two steps of one execution (a runner batch advances an execution once); were it so, the second mail would go without a link.
  const usedCheckouts = new Set<string>();

  await env.db.transaction().execute(async (tx) => {
    const ctx: Ctx = { tx, tenantId, now };
    // Invoices first (ordered), then actions: the order a payment takes (invoice, then the dunning rows).
    const locked = new Map((await getInvoiceRows(ctx, [...new Set(emails.map((e) => e.invoice_id))], true)).map((i) => [i.id, i]));
    const awaiting = await lockAwaitingActions(
      tx,
      tenantId,
      emails.map((e) => e.action_id),
      EMAIL_QUEUED,
      true,
    );
    const settled: Settled[] = [];
    const sending: { email: DunningEmail; customer: DunnedCustomer; to: string; invoice: InvoiceFacts; checkout: PreparedCheckout | null; note: string }[] = [];
    for (const email of emails) {
      if (!awaiting.has(email.action_id)) continue; // settled by an earlier run of this job
      const invoice = locked.get(email.invoice_id);
      if (!stillOwed(invoice)) {
        // Paid (or voided) between the step and this job: no reminder for a settled invoice.
        settled.push({ id: email.action_id, outcome: 'skipped', detail: `invoice is ${locked.get(email.invoice_id)?.status ?? 'gone'}; no e-mail sent` });
        continue;
      }
      const customer = customerOf.get(email.customer_id);
      const to = customer?.email?.trim();
      if (!customer || !isDeliverableAddress(to)) {
        settled.push({ id: email.action_id, outcome: 'skipped', detail: 'the customer has no e-mail address' });
        continue;
      }
      const prepared = checkouts.get(email.action_id);
      const usable = prepared && !(prepared instanceof Error) && !usedCheckouts.has(prepared.id) ? prepared : null;
      if (usable) usedCheckouts.add(usable.id);
      const note = prepared instanceof Error ? `no pay link: ${prepared.message}` : 'no pay link: no checkout for this invoice';
      sending.push({ email, customer, to, invoice, checkout: usable, note });
    }
    const sessions = await createCheckoutSessions(
      ctx,
      env,
      sending.filter((s) => s.checkout).map((s) => ({ invoice: s.invoice, prepared: s.checkout! })),
    );
    const sessionUrl = new Map([...sessions.values()].map((s) => [s.id, s.url]));
    const mails: JobSpec[] = [];
    for (const { email, customer, to, invoice, checkout, note } of sending) {
      const payUrl = checkout ? (sessionUrl.get(checkout.id) ?? null) : null;
      try {
        const mail = renderMail(email, customer, to, invoice, payUrl, context);
        mails.push(
          mailJobSpec({
            tenantId,
            to,
            subject: mail.subject || context.tenant.name,
            text: mail.text,
            html: mail.html,
            fromName: context.tenant.name,
            replyTo: isDeliverableAddress(context.tenant.email) ? context.tenant.email : undefined,
          }),
        );
        settled.push({ id: email.action_id, outcome: 'succeeded', detail: `e-mailed ${to}${payUrl ? ' with a pay link' : ` (${note})`}` });
        // eslint-disable-next-line no-restricted-syntax -- renderMail is pure (a template error), no statement ran
      } catch (error) {
        settled.push({ id: email.action_id, outcome: 'failed', detail: `the e-mail could not be queued: ${(error as Error).message}` });
      }
    }
    await enqueueJobs(tx, now, mails);
    await settleActions(tx, tenantId, settled);
  });
}

export async function sendDunningEmails(job: Job, env: Pick<JobEnv, 'db' | 'config' | 'secrets' | 'clock' | 'scope'>): Promise<void> {
  const payload = job.payload as DunningEmailPayload;
  const tenantId = job.tenant_id;
  if (!tenantId || ('sent' in payload && payload.sent)) return;
  const emails = 'emails' in payload ? payload.emails : [payload];
  const read: ReadCtx = { tx: env.db, tenantId, now: env.clock.now() };
  if (!isMailConfigured(env.config)) {
    await env.db.transaction().execute(async (tx) => {
      const awaiting = await lockAwaitingActions(
        tx,
        tenantId,
        emails.map((e) => e.action_id),
        EMAIL_QUEUED,
        true,
      );
      await settleActions(
        tx,
        tenantId,
        [...awaiting].map((id) => ({ id, outcome: 'skipped', detail: 'no SMTP server is configured' })),
      );
    });
    return;
  }
  const context = await loadMailContext(read, emails);
  for (let i = 0; i < emails.length; i += DUNNING_EMAIL_CHUNK) await sendChunk(env, read, emails.slice(i, i + DUNNING_EMAIL_CHUNK), context);
}

/** In the transaction that sent: a rerun of the job (the worker died after commit) sends nothing. */
export async function markJobSent(tx: Tx, jobId: string): Promise<void> {
  await noteOnJob(tx, jobId, { sent: true });
}
