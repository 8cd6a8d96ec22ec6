import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMailSink, type MailSink } from '../support/mail-sink.js';
import { startTestKosh, type TestKosh } from '../support/harness.js';
import { OPERATOR_PASSWORD } from '../support/operators.js';

/**
 * Password reset requests (DESIGN §21, decision 0223): the answer, and the work behind it, are
 * the same whether or not the address is an operator's; an operator gets at most 5 links an hour.
 */
let sink: MailSink;
let t: TestKosh;

beforeAll(async () => {
  sink = await startMailSink();
  t = await startTestKosh({ env: { SMTP_URL: sink.url, KOSH_PUBLIC_URL: 'https://billing.example.in', KOSH_RATE_LIMIT_PORTAL_LOGIN: '1000' } });
  const res = await t.api('POST', '/auth/register', {
    name: 'Acme Cloud',
    email: 'hello@acme.test',
    owner: { email: 'owner@acme.test', name: 'Owner', password: OPERATOR_PASSWORD },
  });
  expect(res.status, res.text).toBe(201);
});
afterAll(async () => {
  await t?.close();
  await sink?.close();
});

const requestReset = (email: string) => t.api('POST', '/v1/auth/password-reset', { email });
const mailsTo = (email: string) => sink.messages.filter((m) => m.envelope.to.includes(email)).length;
const queuedResets = async () =>
  Number(
    (
      await t.database.db
        .selectFrom('jobs')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('kind', '=', 'operators.password_reset')
        .executeTakeFirstOrThrow()
    ).n,
  );

describe('password reset request', () => {
  it('answers an operator and a stranger alike, and does the same work for both: one queued job', async () => {
    const before = await queuedResets();
    const known = await requestReset('owner@acme.test');
    const afterKnown = await queuedResets();
    const unknown = await requestReset('nobody@acme.test');
    const afterUnknown = await queuedResets();
    expect([known.status, unknown.status]).toEqual([202, 202]);
    expect(unknown.text).toBe(known.text);
    expect([afterKnown - before, afterUnknown - afterKnown]).toEqual([1, 1]);

    await t.kosh.worker.drain();
    expect(mailsTo('owner@acme.test')).toBe(1);
    expect(mailsTo('nobody@acme.test')).toBe(0);
  });

  it('sends an operator at most 5 links an hour, however often it is asked, and more after the hour', async () => {
    const sent = mailsTo('owner@acme.test'); // the link of the test above, in this hour
    for (let i = 0; i < 12; i++) expect((await requestReset('owner@acme.test')).status).toBe(202);
    await t.kosh.worker.drain();
    expect(mailsTo('owner@acme.test')).toBe(5);
    expect(mailsTo('owner@acme.test') - sent).toBe(4);

    t.clock.advance(61 * 60_000);
    await requestReset('owner@acme.test');
    await t.kosh.worker.drain();
    expect(mailsTo('owner@acme.test')).toBe(6);
  });
});
