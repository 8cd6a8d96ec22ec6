import type { Ctx, ReadCtx } from '../../platform/context.js';
import { noteOnJob, type Job, type JobEnv, type JobSpec } from '../../platform/jobs/jobs.js';
import { invoicesAndCustomers, settleAction, type DunnedCustomer, type DunnedInvoice } from '../../modules/dunning/index.js';
import { getInvoiceRows } from '../../modules/invoices/index.js';
import { renderTemplate, smsSenderOf } from '../../modules/notifications/index.js';
import { createCheckoutSessions, prepareCheckouts } from '../collections/checkout-invoice.js';
import { markJobSent, stillOwed } from './dunning-mail.js';

/**
 * Dunning SMS (docs/decisions/0187, 0198): the step queues one job per message; the job makes the
 * message's pay link (a hosted checkout, asked of the gateway outside any transaction), renders the
 * step's text with it, and calls the provider. The link is made once: it is written into the job's
 * payload in the transaction that inserts the checkout session, so a retry after a transient
 * provider failure sends the same link and makes no second checkout.
 */
export const DUNNING_SMS_JOB = 'dunning.send_sms';

export const DEFAULT_SMS =
  '{{tenant.name}}: invoice {{invoice.number}} for {{invoice.amount_due}} is unpaid. Please pay it at your earliest convenience.{{#if pay_url}} Pay: {{pay_url}}{{/if}}';
/** SMS bodies are cut to what fits in ten segments. */
const MAX_SMS_CHARS = 1_530;
/** Transient provider failures are retried with the queue's backoff (1 s, 2 s, 4 s, 8 s). */
const SMS_MAX_ATTEMPTS = 5;

type SmsVariables = Record<string, unknown>;

export type DunningSms = {
  action_id: string;
  to: string;
  invoice_id: string;
  customer_id: string;
  /** The step's text when it ran (a later edit of the step does not change a queued message). */
  template: string;
  variables: SmsVariables;
};

/** The payload: the message, then `pay_url` once the job made the link (null: none could be made), `sent` once the provider accepted it. A job queued before 0198 carries the rendered `body` instead. */
type DunningSmsPayload =
  (DunningSms & { pay_url?: string | null; pay_note?: string; sent?: boolean }) | { action_id: string; to: string; body: string; sent?: boolean };

export function dunningSmsJob(tenantId: string, sms: DunningSms): JobSpec {
  return { kind: DUNNING_SMS_JOB, tenantId, payload: sms, maxAttempts: SMS_MAX_ATTEMPTS };
}

type SmsEnv = Pick<JobEnv, 'db' | 'secrets' | 'config' | 'clock' | 'scope'>;

/**
 * The pay link of one message, made once: null when no checkout could be made (the note says
 * why), or `owed: false` when the invoice was settled meanwhile. Written into the job's payload
 * with the session.
 */
async function payLinkOnce(
  job: Job,
  read: ReadCtx,
  env: SmsEnv,
  invoice: DunnedInvoice,
  customer: DunnedCustomer,
): Promise<{ url: string | null; note: string; owed: boolean }> {
  const prepared = (await prepareCheckouts(read, env, [{ invoice, customer }])).get(invoice.id);
  return env.db.transaction().execute(async (tx) => {
    const ctx: Ctx = { ...read, tx };
    const [locked] = await getInvoiceRows(ctx, [invoice.id], true);
    if (!stillOwed(locked)) return { url: null, note: '', owed: false };
    let url: string | null = null;
    let note = prepared instanceof Error ? `no pay link: ${prepared.message}` : 'no pay link: no checkout for this invoice';
    if (prepared && !(prepared instanceof Error)) {
      url = (await createCheckoutSessions(ctx, env, [{ invoice: locked, prepared }])).get(locked.id)?.url ?? null;
      if (url) note = 'with a pay link';
    }
    await noteOnJob(tx, job.id, { pay_url: url, pay_note: note });
    return { url, note, owed: true };
  });
}

/**
 * The SMS job: one provider call; the action records what the provider said. A transient failure
 * (unreachable, timeout, 5xx, 429) is retried by the job queue with backoff — the action says so
 * meanwhile — until the job's last attempt, which records it failed; a refusal (other 4xx) is
 * recorded failed at once with the provider's message. A rerun after success sends nothing, and an
 * invoice paid since the step gets no reminder.
 */
export async function sendDunningSms(job: Job, env: SmsEnv): Promise<void> {
  const payload = job.payload as DunningSmsPayload;
  const tenantId = job.tenant_id;
  if (!tenantId || payload.sent) return;
  const sender = await smsSenderOf(env.db, tenantId, env.secrets);
  if (!sender) {
    await settleAction(env.db, tenantId, payload.action_id, 'skipped', 'no SMS provider is configured');
    return;
  }
  let body: string;
  let linkNote = '';
  if ('body' in payload) {
    body = payload.body;
  } else {
    const read: ReadCtx = { tx: env.db, tenantId, now: env.clock.now() };
    const { invoices, customers } = await invoicesAndCustomers(env.db, tenantId, [payload.invoice_id], [payload.customer_id]);
    const invoice = invoices[0];
    let url = payload.pay_url;
    let note = payload.pay_note ?? '';
    let owed = stillOwed(invoice) && customers[0] !== undefined;
    // Made once: a retry (the provider failed the first time) sends the link the first attempt made.
    if (owed && url === undefined) ({ url, note, owed } = await payLinkOnce(job, read, env, invoice!, customers[0]!));
    if (!owed) {
      await settleAction(env.db, tenantId, payload.action_id, 'skipped', 'the invoice is no longer owed; no SMS sent');
      return;
    }
    linkNote = ` ${url ? 'with a pay link' : `(${note})`}`;
    try {
      body = renderTemplate({ subject: '', html: '', text: payload.template }, { ...payload.variables, pay_url: url })
        .text.replace(/\s+/g, ' ')
        .trim()
        .slice(0, MAX_SMS_CHARS);
    } catch (error) {
      await settleAction(env.db, tenantId, payload.action_id, 'failed', `the SMS could not be rendered: ${(error as Error).message}`);
      return;
    }
  }
  const baseUrl = sender.providerName === 'msg91' ? env.config.msg91ApiBase : env.config.twilioApiBase;
  const result = await sender.provider.send({ baseUrl, credentials: sender.credentials, sender: sender.sender }, { to: payload.to, body });
  if (!result.ok && result.retryable && job.attempts < job.max_attempts) {
    await settleAction(
      env.db,
      tenantId,
      payload.action_id,
      'succeeded',
      `SMS to ${payload.to} not yet accepted (attempt ${job.attempts} of ${job.max_attempts}, retrying): ${result.error}`,
    );
    throw new Error(result.error);
  }
  await env.db.transaction().execute(async (tx) => {
    await settleAction(
      tx,
      tenantId,
      payload.action_id,
      result.ok ? 'succeeded' : 'failed',
      result.ok ? `SMS ${result.id} accepted by ${sender.providerName} for ${payload.to} (${result.status})${linkNote}` : result.error,
    );
    await markJobSent(tx, job.id);
  });
}
