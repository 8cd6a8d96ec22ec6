import { sql, type Transaction } from 'kysely';
import { z } from 'zod';
import { scopeKey, type AppScope } from '../app-scope.js';
import type { Ctx, ReadCtx } from '../context.js';
import type { DB, Tx } from '../db/schema.js';
import { errors } from '../errors.js';
import { enqueueJob, JOB_RECORDED_DONE, lockJobPayload, noteOnJob, RetryJobAt, type Job, type JobEnv, type JobHandlers, type JobSpec } from '../jobs/jobs.js';
import { toIso } from '../time.js';
import { Coalescer } from '../coalesce.js';
import { createSmtpMailer, isMailConfigured, parseMailFrom, type Mailer } from './mailer.js';

/**
 * The mail outbox. A business action calls `enqueueMail` inside its transaction; the worker's
 * `mail.send` job talks to the SMTP server afterwards, never the request. Attachments that are
 * documents (an invoice PDF) are not stored in the job: the job names a renderer its app registered
 * at start-up and the document is made when the mail is sent.
 */
export const MAIL_JOB = 'mail.send';

/** Retries after 1 min, 5 min, 30 min, 2 h and 6 h: an afternoon's SMTP outage delays mail but loses none. */
export const MAIL_RETRY_DELAYS_MS = [60_000, 300_000, 1_800_000, 7_200_000, 21_600_000] as const;
export const MAIL_MAX_ATTEMPTS = MAIL_RETRY_DELAYS_MS.length + 1;

/** Inline attachments live in the jobs table; anything bigger must be rendered at send time. */
export const MAX_INLINE_ATTACHMENT_BYTES = 64 * 1024;

export type RenderedAttachment = { filename: string; contentType: string; content: Buffer };

export type MailAttachmentSpec =
  /** Small and already in hand (stored base64 in the job). */
  | RenderedAttachment
  /** Made when the mail is sent by the renderer registered under `render`. */
  | { render: string; params: Record<string, unknown> };

export type MailSpec = {
  /** The tenant the mail is sent for; renderers and hooks read its records. */
  tenantId: string | null;
  to: string;
  subject: string;
  text: string;
  html?: string;
  /** Display name of the sender (the business), in place of MAIL_FROM's; the address stays ours. */
  fromName?: string;
  replyTo?: string;
  attachments?: MailAttachmentSpec[];
  /** Runs once, in its own transaction, after the SMTP server accepted the message. */
  onSent?: { hook: string; params: Record<string, unknown> };
};

export type MailDelivery = { message_id: string; to: string; response: string; delivered_at: string };

/** Reads the tenant's records (ctx.tx is the pool, not a transaction) and returns the file. */
export type AttachmentRenderer = (ctx: ReadCtx, params: Record<string, unknown>) => Promise<RenderedAttachment>;
/** Records the delivery (emit an event, stamp a record) inside `ctx.tx`. */
export type MailSentHook = (ctx: Ctx, params: Record<string, unknown>, delivery: MailDelivery) => Promise<void>;

/** The app's attachment renderers and mail-sent hooks by name, registered at start-up (decision 0590). */
const renderersKey = scopeKey('mail.attachment_renderers', () => new Map<string, AttachmentRenderer>());
const sentHooksKey = scopeKey('mail.sent_hooks', () => new Map<string, MailSentHook>());

/** Called from a module's `init` with `deps.scope`. Names are the app's, so prefix them with the module (`invoice.pdf`). */
export function registerAttachmentRenderer(scope: AppScope, name: string, renderer: AttachmentRenderer): void {
  scope.get(renderersKey).set(name, renderer);
}

export function onMailSent(scope: AppScope, name: string, hook: MailSentHook): void {
  scope.get(sentHooksKey).set(name, hook);
}

const EMAIL = /^[^\s@<>()",;:\\[\]]+@[^\s@<>()",;:\\[\]]+\.[^\s@<>()",;:\\[\]]+$/;
const HEADER_SAFE = /^[^\r\n]*$/;

/** A plausible single recipient address (the API validates e-mails already; this guards the header). */
export function isDeliverableAddress(value: string | null | undefined): value is string {
  return typeof value === 'string' && value.length <= 254 && EMAIL.test(value);
}

/**
 * Queues one e-mail in the caller's transaction: it exists exactly when the business change does.
 * Bad input is a 400 for whoever passed it through; an unknown renderer or hook is a bug. A mail
 * that names a renderer or a sent hook is queued with its app's `scope`, which holds them.
 */
export async function enqueueMail(tx: Tx, now: Date, spec: MailSpec, scope?: AppScope): Promise<void> {
  await enqueueJob(tx, now, mailJobSpec(spec, scope));
}

function assertRegistered(scope: AppScope | undefined, what: string, registered: (scope: AppScope) => boolean): void {
  if (!scope || !registered(scope)) throw new Error(`no ${what} registered${scope ? '' : " (queued without the app's scope)"}`);
}

/** The job enqueueMail queues, checked the same way: a batch queues many in one statement (enqueueJobs). */
export function mailJobSpec(spec: MailSpec, scope?: AppScope): JobSpec {
  if (!isDeliverableAddress(spec.to)) throw errors.invalidField('to', 'must be one e-mail address');
  if (spec.replyTo !== undefined && !isDeliverableAddress(spec.replyTo)) throw errors.invalidField('reply_to', 'must be one e-mail address');
  if (!spec.subject.trim() || spec.subject.length > 500 || !HEADER_SAFE.test(spec.subject)) {
    throw errors.invalidField('subject', 'must be 1 to 500 characters on one line');
  }
  if (spec.fromName !== undefined && (spec.fromName.length > 200 || !HEADER_SAFE.test(spec.fromName))) {
    throw errors.invalidField('from_name', 'must be at most 200 characters on one line');
  }
  let inlineBytes = 0;
  const attachments: MailPayload['attachments'] = (spec.attachments ?? []).map((a) => {
    if ('render' in a) {
      assertRegistered(scope, `attachment renderer registered as '${a.render}'`, (s) => s.get(renderersKey).has(a.render));
      return { render: a.render, params: a.params };
    }
    inlineBytes += a.content.length;
    return { filename: a.filename, content_type: a.contentType, content_base64: a.content.toString('base64') };
  });
  if (inlineBytes > MAX_INLINE_ATTACHMENT_BYTES) {
    throw new Error(`inline attachments total ${inlineBytes} bytes; above ${MAX_INLINE_ATTACHMENT_BYTES} register a renderer instead`);
  }
  const onSent = spec.onSent;
  if (onSent) assertRegistered(scope, `mail-sent hook registered as '${onSent.hook}'`, (s) => s.get(sentHooksKey).has(onSent.hook));
  const payload: MailPayload = {
    to: spec.to,
    subject: spec.subject,
    text: spec.text,
    html: spec.html ?? null,
    from_name: spec.fromName ?? null,
    reply_to: spec.replyTo ?? null,
    attachments,
    on_sent: spec.onSent ?? null,
  };
  return { kind: MAIL_JOB, tenantId: spec.tenantId, payload, maxAttempts: MAIL_MAX_ATTEMPTS };
}

const params = z.record(z.string(), z.unknown());
const payloadSchema = z.object({
  to: z.string(),
  subject: z.string(),
  text: z.string(),
  html: z.string().nullable(),
  from_name: z.string().nullable(),
  reply_to: z.string().nullable(),
  attachments: z.array(
    z.union([z.object({ filename: z.string(), content_type: z.string(), content_base64: z.string() }), z.object({ render: z.string(), params })]),
  ),
  on_sent: z.object({ hook: z.string(), params }).nullable(),
  /** Written once the SMTP server accepted the message: a retry then never sends it again. */
  delivery: z.object({ message_id: z.string(), to: z.string(), response: z.string(), delivered_at: z.string() }).optional(),
  /** Written in the hook's own transaction: the hook runs exactly once. */
  on_sent_done: z.boolean().optional(),
});
type MailPayload = z.infer<typeof payloadSchema>;

function retryAfter(job: Job, env: JobEnv, message: string): RetryJobAt {
  const delay = MAIL_RETRY_DELAYS_MS[Math.max(0, Math.min(job.attempts, MAIL_RETRY_DELAYS_MS.length) - 1)]!;
  return new RetryJobAt(new Date(env.clock.now().getTime() + delay), message);
}

function ctxFor(job: Job, env: JobEnv): ReadCtx;
function ctxFor(job: Job, env: JobEnv, tx: Transaction<DB>): Ctx;
function ctxFor(job: Job, env: JobEnv, tx?: Transaction<DB>): ReadCtx {
  if (!job.tenant_id) throw new Error('this mail needs a tenant (it has a renderer or a sent hook) but its job has none');
  return { tx: tx ?? env.db, tenantId: job.tenant_id, now: env.clock.now() };
}

async function renderAttachments(job: Job, env: JobEnv, mail: MailPayload): Promise<RenderedAttachment[]> {
  const out: RenderedAttachment[] = [];
  for (const a of mail.attachments) {
    if ('content_base64' in a) {
      out.push({ filename: a.filename, contentType: a.content_type, content: Buffer.from(a.content_base64, 'base64') });
      continue;
    }
    const renderer = env.scope.get(renderersKey).get(a.render);
    if (!renderer) throw new Error(`no attachment renderer registered as '${a.render}'`);
    out.push(await renderer(ctxFor(job, env), a.params));
  }
  return out;
}

/**
 * Sends the message (first run, or a retry after a failure before the server accepted it), then
 * runs the sent hook. The two steps are recorded separately in the job, so a retry after the
 * send never sends again and the hook never runs twice. Between the server's "250 accepted" and
 * the recording UPDATE a crash can still repeat the send (at-least-once); the Message-ID is the
 * same on every attempt so mail systems can drop the copy.
 */
async function deliverMail(
  job: Job,
  env: JobEnv,
  mailer: Mailer | undefined,
  record: RecordDelivery,
  sender: (mailFrom: string) => Sender,
): Promise<void | typeof JOB_RECORDED_DONE> {
  const mail = payloadSchema.parse(job.payload);
  let delivery = mail.delivery;
  if (!delivery) {
    if (!mailer) throw retryAfter(job, env, 'no e-mail provider configured (SMTP_URL is not set)');
    let attachments: RenderedAttachment[];
    try {
      attachments = await renderAttachments(job, env, mail);
    } catch (error) {
      throw retryAfter(job, env, `rendering an attachment failed: ${messageOf(error)}`);
    }
    let receipt;
    try {
      const from = sender(env.config.mailFrom);
      receipt = await mailer.send({
        from: { name: mail.from_name ?? from.name, address: from.address },
        to: mail.to,
        replyTo: mail.reply_to ?? undefined,
        subject: mail.subject,
        text: mail.text,
        html: mail.html ?? undefined,
        messageId: `<${job.id}@${from.domain}>`,
        attachments,
      });
    } catch (error) {
      throw retryAfter(job, env, `SMTP delivery to ${mail.to} failed: ${messageOf(error)}`);
    }
    delivery = { message_id: receipt.messageId, to: mail.to, response: receipt.response, delivered_at: toIso(env.clock.now()) };
    // Without a sent hook the job is finished: its delivery and "done" are one write.
    const finished = !mail.on_sent;
    await record(env, { id: job.id, delivery, done: finished });
    env.logger.info({ jobId: job.id, tenantId: job.tenant_id, messageId: delivery.message_id }, 'mail accepted by the SMTP server');
    if (finished) return JOB_RECORDED_DONE;
  }
  if (mail.on_sent && !mail.on_sent_done) {
    const hook = env.scope.get(sentHooksKey).get(mail.on_sent.hook);
    if (!hook) throw retryAfter(job, env, `no mail-sent hook registered as '${mail.on_sent.hook}'`);
    const onSent = mail.on_sent;
    const accepted = delivery;
    try {
      await env.db.transaction().execute(async (tx) => {
        if (((await lockJobPayload(tx, job.id)) as MailPayload | undefined)?.on_sent_done) return;
        await hook(ctxFor(job, env, tx), onSent.params, accepted);
        await noteOnJob(tx, job.id, { on_sent_done: true });
      });
    } catch (error) {
      throw retryAfter(job, env, `the mail was delivered but its '${onSent.hook}' hook failed: ${messageOf(error)}`);
    }
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

type Sender = { mailFrom: string; name: string; address: string; domain: string };

/** MAIL_FROM parsed once per outbox, not per message. */
function senderCache(): (mailFrom: string) => Sender {
  let last: Sender | undefined;
  return (mailFrom) => {
    if (last?.mailFrom !== mailFrom) {
      const from = parseMailFrom(mailFrom);
      last = { mailFrom, ...from, domain: from.address.split('@')[1]! };
    }
    return last;
  };
}

type Accepted = { id: string; delivery: MailDelivery; done: boolean };
type RecordDelivery = (env: JobEnv, accepted: Accepted) => Promise<void>;

/**
 * How long accepted deliveries gather before they are recorded together. Messages come back from
 * the SMTP server one at a time, so without a window every one was its own UPDATE and commit.
 */
const RECORD_WINDOW_MS = 10;

/** The mail.send handler and what it holds open between messages (the SMTP connection pool). */
export type MailOutbox = { handlers: JobHandlers; close(): void };

/**
 * Made once by the composition root. The worker runs up to its concurrency of mail jobs at once;
 * they share one pooled SMTP transport (mailer.ts), and the deliveries that the server accepted in
 * the same turn of the event loop are recorded in one UPDATE (the worker then marks the jobs done
 * in one more). A crash between the server's "250" and that UPDATE repeats the send, as before.
 */
export function createMailOutbox(): MailOutbox {
  let mailer: { url: string; mailer: Mailer } | undefined;
  const sender = senderCache();
  let recorder: { db: JobEnv['db']; batch: Coalescer<Accepted, void> } | undefined;
  const record: RecordDelivery = (env, accepted) => {
    if (recorder?.db !== env.db) {
      const { db, clock } = env;
      const batch = new Coalescer<Accepted, void>(
        async (rows) => {
          // The same columns the worker sets when it marks a job done, for the finished ones.
          await sql`
            UPDATE jobs SET payload = jobs.payload || jsonb_build_object('delivery', d.delivery),
                   state = CASE WHEN d.done THEN 'done' ELSE jobs.state END,
                   locked_until = CASE WHEN d.done THEN NULL ELSE jobs.locked_until END,
                   last_error = CASE WHEN d.done THEN NULL ELSE jobs.last_error END,
                   updated_at = ${clock.now()}
            FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS d(id uuid, delivery jsonb, done boolean)
            WHERE jobs.id = d.id`.execute(db);
          return rows.map(() => undefined);
        },
        { maxBatch: 500, windowMs: RECORD_WINDOW_MS },
      );
      recorder = { db, batch };
    }
    return recorder.batch.call(accepted);
  };
  const mailerFor = (config: JobEnv['config']): Mailer | undefined => {
    if (!isMailConfigured(config)) return undefined;
    const current = mailer;
    if (current && current.url === config.smtpUrl) return current.mailer;
    current?.mailer.close();
    const fresh = { url: config.smtpUrl!, mailer: createSmtpMailer(config.smtpUrl!) };
    mailer = fresh;
    return fresh.mailer;
  };
  return {
    handlers: { [MAIL_JOB]: (job, env) => deliverMail(job, env, mailerFor(env.config), record, sender) },
    close() {
      mailer?.mailer.close();
      mailer = undefined;
    },
  };
}
