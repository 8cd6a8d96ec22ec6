import type { Ctx, ReadCtx } from '../../platform/context.js';
import type { EventListener, EventPayload } from '../../platform/events/events.js';
import { enqueueJobs, type Job, type JobEnv } from '../../platform/jobs/jobs.js';
import { enqueueMail, isDeliverableAddress, isMailConfigured, type MailAttachmentSpec } from '../../platform/mail/index.js';
import { findCustomer } from '../../modules/customers/index.js';
import { INVOICE_PDF_ATTACHMENT } from '../../modules/documents/index.js';
import { formatMoney } from '../../platform/money.js';
import { isKoshError } from '../../platform/errors.js';
import { findEventRow } from '../../modules/events/index.js';
import { getInvoiceRow } from '../../modules/invoices/index.js';
import {
  NOTIFICATIONS,
  getNotificationSettings,
  notificationExists,
  recordNotification,
  renderTemplate,
  templateSource,
  type NotificationKind,
  type TemplateName,
} from '../../modules/notifications/index.js';
import { findPlan } from '../../modules/plans/index.js';
import { trialsEndingBetween } from '../../modules/subscriptions/index.js';
import { getTenant } from '../../modules/tenants/index.js';
import { createCheckoutSession, prepareCheckout } from '../collections/checkout-invoice.js';

/**
 * Customer notifications (docs/decisions/0130): the business transaction only queues a job (the
 * listener below, in the emitting transaction); the job renders the tenant's template and queues
 * the mail through the outbox in its own transaction, with a row in `notifications` whose unique
 * key (notification, event id) makes a rerun send nothing.
 */
export const NOTIFY_JOB = 'notifications.send';
export const TRIAL_SCAN_JOB = 'notifications.scan_trials';
export const TRIAL_NOTICE_MS = 3 * 24 * 3_600_000;

const BY_EVENT: Record<string, NotificationKind> = {
  'invoice.finalized': 'invoice_finalized',
  'payment.recorded': 'payment_receipt',
  'invoice.payment_failed': 'payment_failed',
  'credit_note.issued': 'credit_note_issued',
};

async function queueFor(ctx: Ctx, events: EventPayload[]): Promise<void> {
  const relevant = events.filter((e) => BY_EVENT[e.type] !== undefined);
  if (relevant.length === 0) return;
  const settings = await getNotificationSettings(ctx);
  const jobs = relevant
    .filter((e) => settings[BY_EVENT[e.type]!])
    .map((e) => ({
      kind: NOTIFY_JOB,
      tenantId: ctx.tenantId,
      payload: { notification: BY_EVENT[e.type]!, event_id: e.id },
      uniqueKey: `notify:${BY_EVENT[e.type]!}:${e.id}`,
    }));
  await enqueueJobs(ctx.tx, ctx.now, jobs);
}

/** Runs in the emitting transaction: one job per enabled notification, nothing rendered or sent here. */
export const queueCustomerNotifications: EventListener = Object.assign((ctx: Ctx, event: EventPayload) => queueFor(ctx, [event]), {
  batch: (ctx: Ctx, events: EventPayload[]) => queueFor(ctx, events),
});

const day = (iso: unknown) => (typeof iso === 'string' ? iso.slice(0, 10) : null);
const money = (amount: unknown, currency: unknown) => formatMoney(Number(amount ?? 0), String(currency ?? 'INR'));

type Prepared = {
  notification: NotificationKind;
  dedupeKey: string;
  customerId: string | null;
  invoiceIdForPayLink: string | null;
  data: Record<string, unknown>;
  attachments: MailAttachmentSpec[];
};

/** What the mail says, from the event's snapshot of the object (what the API returned then). */
async function prepareFromEvent(read: ReadCtx, notification: NotificationKind, eventId: string): Promise<Prepared | null> {
  const event = await findEventRow(read.tx, read.tenantId, eventId);
  if (!event) return null;
  const object = (event.payload as EventPayload).data.object as Record<string, unknown>;
  const base = { notification, dedupeKey: eventId, customerId: typeof object.customer_id === 'string' ? object.customer_id : null };
  switch (notification) {
    case 'invoice_finalized':
      return {
        ...base,
        invoiceIdForPayLink: null,
        data: {
          invoice: {
            number: object.number,
            total: money(object.total, object.currency),
            amount_due: money(object.amount_due, object.currency),
            issued_on: day(object.issued_at),
            due_date: day(object.due_date),
            is_paid: object.status === 'paid',
          },
        },
        attachments: [{ render: INVOICE_PDF_ATTACHMENT, params: { invoice_id: object.id } }],
      };
    case 'payment_receipt': {
      const invoice = typeof object.invoice_id === 'string' ? await getInvoiceRow(read, object.invoice_id).catch(() => undefined) : undefined;
      return {
        ...base,
        invoiceIdForPayLink: null,
        data: {
          payment: { id: object.id, amount: money(object.amount, object.currency), paid_on: day(object.recorded_at), method: object.payment_type },
          invoice: invoice ? { number: invoice.number } : {},
        },
        attachments: [],
      };
    }
    case 'payment_failed': {
      const error = object.last_payment_error as { code?: string; message?: string } | null | undefined;
      return {
        ...base,
        invoiceIdForPayLink: String(object.id),
        data: {
          invoice: { number: object.number, amount_due: money(object.amount_due, object.currency), due_date: day(object.due_date) },
          failure: { code: error?.code ?? null, message: error?.message ?? null },
          pay_url: null,
        },
        attachments: [],
      };
    }
    case 'credit_note_issued': {
      const invoice = typeof object.invoice_id === 'string' ? await getInvoiceRow(read, object.invoice_id).catch(() => undefined) : undefined;
      return {
        ...base,
        invoiceIdForPayLink: null,
        data: {
          credit_note: { number: object.number, total: money(object.total, object.currency), reason: object.reason },
          invoice: invoice ? { number: invoice.number } : {},
        },
        attachments: [],
      };
    }
    case 'trial_ending':
      return null;
  }
}

/**
 * Makes one notification, once: skipped (and recorded so) when SMTP is not configured or the
 * customer has no address. A payment-failed mail carries a hosted checkout link, asked of the
 * gateway before the transaction (as the checkout route does).
 */
export async function deliverNotification(
  env: Pick<JobEnv, 'db' | 'config' | 'secrets' | 'clock' | 'scope'>,
  tenantId: string,
  prepared: Prepared,
): Promise<'queued' | 'skipped' | 'duplicate'> {
  const now = env.clock.now();
  const read: ReadCtx = { tx: env.db, tenantId, now };
  if (await notificationExists(env.db, tenantId, prepared.notification, prepared.dedupeKey)) return 'duplicate';
  let checkout: Awaited<ReturnType<typeof prepareCheckout>> | null = null;
  if (prepared.invoiceIdForPayLink && isMailConfigured(env.config)) {
    checkout = await prepareCheckout(read, env, prepared.invoiceIdForPayLink).catch(() => null);
  }
  return env.db.transaction().execute(async (tx) => {
    const ctx: Ctx = { tx, tenantId, now };
    const customer = prepared.customerId ? await findCustomer(tx, tenantId, prepared.customerId) : undefined;
    const to = customer?.email?.trim();
    const skip = !isMailConfigured(env.config) ? 'no SMTP server is configured' : !isDeliverableAddress(to) ? 'the customer has no e-mail address' : null;
    const recorded = await recordNotification(ctx, {
      notification: prepared.notification,
      dedupe_key: prepared.dedupeKey,
      customer_id: prepared.customerId,
      channel: 'email',
      status: skip ? 'skipped' : 'queued',
      recipient: skip ? null : to!,
      detail: skip ?? `e-mailed ${to}`,
    });
    if (!recorded) return 'duplicate';
    if (skip) return 'skipped';
    const tenant = await getTenant(ctx);
    let payUrl: string | null = null;
    if (checkout && prepared.invoiceIdForPayLink) {
      // A refusal (no gateway for the currency, the invoice no longer payable) sends the mail without
      // a link; a database error is not swallowed inside the transaction (the job retries).
      const session = await createCheckoutSession(ctx, env, prepared.invoiceIdForPayLink, checkout).catch((error: unknown) => {
        if (isKoshError(error)) return null;
        throw error;
      });
      payUrl = session?.url ?? null;
    }
    const data = {
      ...prepared.data,
      ...(prepared.invoiceIdForPayLink ? { pay_url: payUrl } : {}),
      tenant: { name: tenant.name },
      customer: { name: customer!.name || to, email: to },
    };
    const mail = renderTemplate(await templateSource(tx, tenantId, prepared.notification as TemplateName), data);
    await enqueueMail(
      tx,
      now,
      {
        tenantId,
        to: to!,
        subject: mail.subject || tenant.name,
        text: mail.text,
        html: mail.html,
        fromName: tenant.name,
        replyTo: isDeliverableAddress(tenant.email) ? tenant.email : undefined,
        attachments: prepared.attachments,
      },
      env.scope,
    );
    return 'queued';
  });
}

export async function notificationJob(job: Job, env: JobEnv): Promise<void> {
  const payload = job.payload as { notification?: string; event_id?: string };
  const notification = payload.notification as NotificationKind;
  if (!job.tenant_id || !NOTIFICATIONS.includes(notification) || typeof payload.event_id !== 'string') return;
  const prepared = await prepareFromEvent({ tx: env.db, tenantId: job.tenant_id, now: env.clock.now() }, notification, payload.event_id);
  if (prepared) await deliverNotification(env, job.tenant_id, prepared);
}

/**
 * Trial-ending notices: every trialing subscription whose trial ends within 3 days gets one notice
 * per trial end (a moved trial end is a new notice), from tenants that turned it on.
 */
export async function scanEndingTrials(env: Pick<JobEnv, 'db' | 'config' | 'secrets' | 'clock' | 'scope'>, batch = 500): Promise<number> {
  const now = env.clock.now();
  let sent = 0;
  let after: { trial_end: Date; tenant_id: string; id: string } | undefined;
  const enabled = new Map<string, boolean>();
  for (;;) {
    const rows = await trialsEndingBetween(env.db, now, new Date(now.getTime() + TRIAL_NOTICE_MS), batch, after);
    for (const row of rows) {
      if (!enabled.has(row.tenant_id)) enabled.set(row.tenant_id, (await getNotificationSettings({ tx: env.db, tenantId: row.tenant_id })).trial_ending);
      if (!enabled.get(row.tenant_id)) continue;
      const plan = await findPlan(env.db, row.tenant_id, row.plan_id);
      const outcome = await deliverNotification(env, row.tenant_id, {
        notification: 'trial_ending',
        dedupeKey: `${row.id}:${row.trial_end!.toISOString()}`,
        customerId: row.customer_id,
        invoiceIdForPayLink: null,
        data: { subscription: { id: row.id, plan_name: plan?.name ?? '', trial_ends_on: row.trial_end!.toISOString().slice(0, 10) } },
        attachments: [],
      });
      if (outcome === 'queued') sent += 1;
    }
    if (rows.length < batch) return sent;
    const last = rows[rows.length - 1]!;
    after = { trial_end: last.trial_end!, tenant_id: last.tenant_id, id: last.id };
  }
}
