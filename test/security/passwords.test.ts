import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { passwordProblem } from '../../src/modules/operators/password-policy.js';
import { startMailSink, type MailSink } from '../support/mail-sink.js';
import { startTestKosh, type TestKosh } from '../support/harness.js';
import { lastLink, OPERATOR_PASSWORD } from '../support/operators.js';

/**
 * Operator passwords and sign-in guessing (DESIGN §21, decision 0222): at least 12 characters, not
 * common, not a repeated run, not the operator's own name or e-mail; failed sign-ins are also
 * counted per e-mail across every client address.
 */
let sink: MailSink;
let t: TestKosh;

beforeAll(async () => {
  sink = await startMailSink();
  t = await startTestKosh({
    env: {
      SMTP_URL: sink.url,
      KOSH_PUBLIC_URL: 'https://billing.example.in',
      KOSH_RATE_LIMIT_PORTAL_LOGIN: '1000',
      KOSH_RATE_LIMIT_SIGN_IN_FAILURES: '10',
      KOSH_RATE_LIMIT_SIGN_IN_FAILURES_PER_EMAIL: '3',
    },
  });
});
afterAll(async () => {
  await t?.close();
  await sink?.close();
});

const owner = (email: string, name: string, password: string) => t.api('POST', '/auth/register', { name: 'Weak Co', email, owner: { email, name, password } });

describe('operator passwords', () => {
  it.each([
    ['aaaaaaaaaa', 'at least 12 characters'],
    ['password12', 'at least 12 characters'],
    ['qwertyuiop12', 'most common passwords'],
    ['password1234!', 'most common passwords'],
    ['iloveyou2026', 'most common passwords'],
    ['aaaaaaaaaaaaaaaa', 'repeated'],
    ['abcabcabcabcabc', 'repeated'],
    ['Asha Rao 2026!', 'your name or e-mail address'],
    ['asharao@weak.test', 'your name or e-mail address'],
  ])('refuses %j at registration with 400 and a plain message', async (password, says) => {
    const res = await owner('asharao@weak.test', 'Asha Rao', password);
    expect(res.status, res.text).toBe(400);
    expect(res.body.error.code).toBe('validation_failed');
    expect(res.body.error.message).toContain(says);
    expect(res.body.error.details).toEqual([expect.objectContaining({ field: expect.stringMatching(/password$/) })]);
    expect(res.text).not.toContain(password);
  });

  it('refuses a weak password when an invitation is accepted and when a password is reset', async () => {
    const reg = await owner('owner@fine.test', 'Owner', OPERATOR_PASSWORD);
    expect(reg.status, reg.text).toBe(201);
    const key: string = reg.body.data.api_key.key;
    await t.api('POST', '/v1/users/invitations', { email: 'meera.iyer@fine.test', role: 'finance' }, { authorization: `Bearer ${key}` });
    const token = await lastLink(t, sink, 'meera.iyer@fine.test', '/dashboard/accept-invitation');
    const weak = await t.api('POST', '/v1/auth/invitations/accept', { token, name: 'Meera Iyer', password: 'MeeraIyer123' });
    expect(weak.status, weak.text).toBe(400);
    expect(weak.body.error.message).toContain('your name or e-mail address');
    // The refusal spent nothing: the same link still works with a good password.
    const accepted = await t.api('POST', '/v1/auth/invitations/accept', { token, name: 'Meera Iyer', password: OPERATOR_PASSWORD });
    expect(accepted.status, accepted.text).toBe(201);

    expect((await t.api('POST', '/v1/auth/password-reset', { email: 'meera.iyer@fine.test' })).status).toBe(202);
    const reset = await lastLink(t, sink, 'meera.iyer@fine.test', '/dashboard/reset-password');
    const repeated = await t.api('POST', '/v1/auth/password-reset/confirm', { token: reset, password: 'zzzzzzzzzzzzzz' });
    expect(repeated.status, repeated.text).toBe(400);
    expect((await t.api('POST', '/v1/auth/password-reset/confirm', { token: reset, password: 'a brand new passphrase' })).status).toBe(204);
  });

  it('takes a long passphrase, and refuses an e-mail address however it is written', () => {
    expect(passwordProblem('correct horse battery', { email: 'a@b.test', name: 'Asha' })).toBeNull();
    expect(passwordProblem('ASHA@b.test!!', { email: 'asha@b.test', name: 'Someone' })).toContain('e-mail');
  });
});

describe('sign-in failures', () => {
  it('are limited per e-mail across every client address', async () => {
    expect((await owner('target@many.test', 'Target', OPERATOR_PASSWORD)).status).toBe(201);
    const signIn = (password: string, remoteAddress: string) =>
      t.call({
        method: 'POST',
        url: '/v1/auth/sign-in',
        remoteAddress,
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify({ email: 'target@many.test', password }),
      });
    for (const address of ['198.51.100.1', '198.51.100.2', '198.51.100.3']) {
      expect((await signIn('wrong guess number one', address)).status).toBe(401);
    }
    const fromElsewhere = await signIn(OPERATOR_PASSWORD, '203.0.113.9');
    expect(fromElsewhere.status, fromElsewhere.text).toBe(429);
    expect(fromElsewhere.body.error.code).toBe('rate_limited');
    expect(Number(fromElsewhere.headers['retry-after'])).toBeGreaterThan(0);
  });
});
