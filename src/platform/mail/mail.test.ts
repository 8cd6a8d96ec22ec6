import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestKosh, type Tenant, type TestKosh } from '../../../test/support/harness.js';
import { startMailSink, type MailSink } from '../../../test/support/mail-sink.js';
import { isKoshError } from '../errors.js';
import {
  MAIL_MAX_ATTEMPTS,
  MAX_INLINE_ATTACHMENT_BYTES,
  enqueueMail,
  isDeliverableAddress,
  onMailSent,
  parseMailFrom,
  registerAttachmentRenderer,
  type MailDelivery,
  type MailSpec,
} from './index.js';

let sink: MailSink;
let t: TestKosh;
let tenant: Tenant;
let hookCalls: { tenantId: string; params: Record<string, unknown>; delivery: MailDelivery }[] = [];
let failHookOnce = false;

beforeAll(async () => {
  sink = await startMailSink();
  t = await startTestKosh({ env: { SMTP_URL: sink.url, MAIL_FROM: 'Kosh Billing <mail@kosh.test>' } });
  // Registered on this app, as a module's init registers on its app's scope.
  registerAttachmentRenderer(t.kosh.deps.scope, 'test.note', async (ctx, params) => ({
    filename: `note-${String(params.n)}.txt`,
    contentType: 'text/plain',
    content: Buffer.from(`note ${String(params.n)} for tenant ${ctx.tenantId}`),
  }));
  onMailSent(t.kosh.deps.scope, 'test.record', async (ctx, params, delivery) => {
    hookCalls.push({ tenantId: ctx.tenantId, params, delivery });
    if (failHookOnce) {
      failHookOnce = false;
      throw new Error('hook store unavailable');
    }
  });
  tenant = await t.registerTenant();
});
afterAll(async () => {
  await t?.close();
  await sink?.close();
});
beforeEach(() => {
  hookCalls = [];
  failHookOnce = false;
});

const spec = (overrides: Partial<MailSpec> = {}): MailSpec => ({
  tenantId: tenant.tenantId,
  to: 'someone@example.in',
  subject: 'Hello',
  text: 'Plain text body',
  ...overrides,
});

function enqueue(db: TestKosh['kosh']['deps']['db'], now: Date, mail: MailSpec) {
  return db.transaction().execute((tx) => enqueueMail(tx, now, mail, t.kosh.deps.scope));
}

async function lastMailJob(db: TestKosh['kosh']['deps']['db']) {
  return db.selectFrom('jobs').selectAll().where('kind', '=', 'mail.send').orderBy('created_at', 'desc').orderBy('id', 'desc').executeTakeFirstOrThrow();
}

describe('mail', () => {
  describe('enqueueMail and the mail.send job', () => {
    it('delivers text, HTML, an inline attachment and one rendered at send time, under the business name at our address', async () => {
      const before = sink.messages.length;
      await enqueue(
        t.kosh.deps.db,
        t.clock.now(),
        spec({
          to: 'buyer@example.in',
          subject: 'Your receipt — April',
          html: '<p>Hello <b>there</b></p>',
          fromName: 'Acme Ltd',
          replyTo: 'accounts@acme.test',
          attachments: [
            { filename: 'terms.txt', contentType: 'text/plain', content: Buffer.from('terms apply') },
            { render: 'test.note', params: { n: 7 } },
          ],
        }),
      );
      // Nothing leaves before the worker runs.
      expect(sink.messages.length).toBe(before);
      await t.kosh.worker.drain();
      expect(sink.messages.length).toBe(before + 1);
      const mail = sink.messages[before]!;
      const job = await lastMailJob(t.kosh.deps.db);
      expect(mail.envelope).toEqual({ from: 'mail@kosh.test', to: ['buyer@example.in'] });
      expect(mail.headers.from).toBe('Acme Ltd <mail@kosh.test>');
      expect(mail.headers['reply-to']).toBe('accounts@acme.test');
      expect(mail.headers['message-id']).toBe(`<${job.id}@kosh.test>`);
      expect(mail.subject).toBe('Your receipt — April');
      expect(mail.text).toBe('Plain text body');
      expect(mail.html).toBe('<p>Hello <b>there</b></p>');
      expect(mail.attachments.map((a) => [a.filename, a.contentType, a.content.toString('utf8')])).toEqual([
        ['terms.txt', 'text/plain', 'terms apply'],
        ['note-7.txt', 'text/plain', `note 7 for tenant ${tenant.tenantId}`],
      ]);
      expect(job).toMatchObject({ state: 'done', attempts: 1, max_attempts: MAIL_MAX_ATTEMPTS });
      // The rendered document is not kept in the jobs table, only its recipe.
      expect(JSON.stringify(job.payload)).not.toContain('note 7 for tenant');
    });

    it('delivers a batch over the pooled connections once each, recording every delivery and "done" together', async () => {
      const before = sink.messages.length;
      const to = Array.from({ length: 30 }, (_, i) => `batch${i}@example.in`);
      await t.kosh.deps.db.transaction().execute(async (tx) => {
        for (const address of to) await enqueueMail(tx, t.clock.now(), spec({ to: address, subject: `Batch ${address}` }));
      });
      await t.kosh.worker.drain();
      const received = sink.messages.slice(before);
      expect(received.map((m) => m.envelope.to[0]).sort()).toEqual([...to].sort());
      const jobs = await t.kosh.deps.db.selectFrom('jobs').selectAll().where('kind', '=', 'mail.send').where('state', '!=', 'done').execute();
      expect(jobs).toEqual([]);
      for (const mail of received) {
        const job = await t.kosh.deps.db
          .selectFrom('jobs')
          .selectAll()
          .where('id', '=', /<([^@]+)@/.exec(mail.headers['message-id']!)![1]!)
          .executeTakeFirstOrThrow();
        expect(job).toMatchObject({ state: 'done', attempts: 1, locked_until: null, last_error: null });
        expect((job.payload as { delivery?: MailDelivery }).delivery).toMatchObject({ to: mail.envelope.to[0], message_id: mail.headers['message-id'] });
      }
    });

    it('sends nothing when the enqueueing transaction rolls back', async () => {
      const jobsBefore = await t.kosh.deps.db.selectFrom('jobs').select('id').where('kind', '=', 'mail.send').execute();
      await expect(
        t.kosh.deps.db.transaction().execute(async (tx) => {
          await enqueueMail(tx, t.clock.now(), spec({ subject: 'never' }));
          throw new Error('the business action failed');
        }),
      ).rejects.toThrow('the business action failed');
      const before = sink.messages.length;
      await t.kosh.worker.drain();
      expect(sink.messages.length).toBe(before);
      expect(await t.kosh.deps.db.selectFrom('jobs').select('id').where('kind', '=', 'mail.send').execute()).toHaveLength(jobsBefore.length);
    });

    it.each([
      ['a malformed recipient', { to: 'not-an-address' }, 'to'],
      ['two recipients', { to: 'a@example.in, b@example.in' }, 'to'],
      ['a subject that would inject headers', { subject: 'Hi\r\nBcc: all@example.in' }, 'subject'],
      ['an empty subject', { subject: '  ' }, 'subject'],
      ['a malformed reply-to', { replyTo: 'nobody' }, 'reply_to'],
      ['a sender name that would inject headers', { fromName: 'Acme\nBcc: x@example.in' }, 'from_name'],
    ])('refuses %s with a validation error', async (_label, overrides, field) => {
      const error = await enqueue(t.kosh.deps.db, t.clock.now(), spec(overrides)).catch((e: unknown) => e);
      expect(isKoshError(error) && error.kind === 'validation_failed' && error.details?.[0]?.field).toBe(field);
    });

    it('treats an unknown renderer or hook, or an oversized inline attachment, as a bug', async () => {
      const now = t.clock.now();
      await expect(enqueue(t.kosh.deps.db, now, spec({ attachments: [{ render: 'nope', params: {} }] }))).rejects.toThrow(
        "no attachment renderer registered as 'nope'",
      );
      await expect(enqueue(t.kosh.deps.db, now, spec({ onSent: { hook: 'nope', params: {} } }))).rejects.toThrow("no mail-sent hook registered as 'nope'");
      const big = { filename: 'big.bin', contentType: 'application/octet-stream', content: Buffer.alloc(MAX_INLINE_ATTACHMENT_BYTES + 1) };
      await expect(enqueue(t.kosh.deps.db, now, spec({ attachments: [big] }))).rejects.toThrow(/register a renderer instead/);
    });
  });

  describe('the sent hook', () => {
    it('runs once, after the server accepted the message, and neither it nor the send repeats when the job runs again', async () => {
      const before = sink.messages.length;
      await enqueue(t.kosh.deps.db, t.clock.now(), spec({ to: 'once@example.in', onSent: { hook: 'test.record', params: { ref: 'r1' } } }));
      await t.kosh.worker.drain();
      expect(sink.messages.length).toBe(before + 1);
      expect(hookCalls).toHaveLength(1);
      const job = await lastMailJob(t.kosh.deps.db);
      expect(hookCalls[0]).toMatchObject({
        tenantId: tenant.tenantId,
        params: { ref: 'r1' },
        delivery: { to: 'once@example.in', message_id: `<${job.id}@kosh.test>` },
      });

      // A worker that died after the work but before recording "done" leaves the job to run again.
      await t.kosh.deps.db.updateTable('jobs').set({ state: 'pending', run_at: t.clock.now() }).where('id', '=', job.id).execute();
      await t.kosh.worker.drain();
      expect(sink.messages.length).toBe(before + 1);
      expect(hookCalls).toHaveLength(1);
      expect(await lastMailJob(t.kosh.deps.db)).toMatchObject({ id: job.id, state: 'done', attempts: 2 });
    });

    it('is retried alone when it fails after delivery: the mail is not sent twice', async () => {
      failHookOnce = true;
      const before = sink.messages.length;
      await enqueue(t.kosh.deps.db, t.clock.now(), spec({ to: 'hook@example.in', onSent: { hook: 'test.record', params: {} } }));
      await t.kosh.worker.drain();
      let job = await lastMailJob(t.kosh.deps.db);
      expect(job.state).toBe('pending');
      expect(job.last_error).toBe("the mail was delivered but its 'test.record' hook failed: hook store unavailable");
      expect(sink.messages.length).toBe(before + 1);

      t.clock.advance(60_000);
      await t.kosh.worker.drain();
      job = await lastMailJob(t.kosh.deps.db);
      expect(job).toMatchObject({ state: 'done', attempts: 2, last_error: null });
      expect(sink.messages.length).toBe(before + 1);
      expect(hookCalls).toHaveLength(2);
    });
  });

  describe('without an e-mail provider', () => {
    it('keeps the mail queued and retrying, with the reason recorded', async () => {
      const plain = await startTestKosh();
      try {
        const other = await plain.registerTenant();
        await enqueue(plain.kosh.deps.db, plain.clock.now(), spec({ tenantId: other.tenantId }));
        await plain.kosh.worker.drain();
        const job = await lastMailJob(plain.kosh.deps.db);
        expect(job).toMatchObject({ state: 'pending', attempts: 1, last_error: 'no e-mail provider configured (SMTP_URL is not set)' });
        expect(new Date(job.run_at).getTime() - plain.clock.now().getTime()).toBe(60_000);
      } finally {
        await plain.close();
      }
    });
  });

  describe('parseMailFrom', () => {
    it.each([
      ['Kosh Billing <billing@kosh.test>', { name: 'Kosh Billing', address: 'billing@kosh.test' }],
      ['"Acme, Inc." <ar@acme.test>', { name: 'Acme, Inc.', address: 'ar@acme.test' }],
      ['<bare@kosh.test>', { name: '', address: 'bare@kosh.test' }],
      ['  plain@kosh.test ', { name: '', address: 'plain@kosh.test' }],
    ])('reads %j', (input, expected) => {
      expect(parseMailFrom(input)).toEqual(expected);
    });

    it.each(['Kosh Billing', 'two@a.test three@b.test', ''])('refuses %j', (input) => {
      expect(() => parseMailFrom(input)).toThrow(/MAIL_FROM/);
    });
  });

  describe('isDeliverableAddress', () => {
    it.each([
      ['a@b.co', true],
      ['first.last+tag@mail.example.in', true],
      ['', false],
      ['no-at-sign', false],
      ['a@b', false],
      ['a@b.co\r\nBcc: x@y.z', false],
      ['a@b.co, c@d.co', false],
      [`${'x'.repeat(250)}@b.co`, false],
    ])('%j → %s', (input, expected) => {
      expect(isDeliverableAddress(input)).toBe(expected);
    });
  });
});
