import { expect } from 'vitest';
import type { MailSink } from './mail-sink.js';
import type { ApiResponse, Tenant, TestKosh } from './harness.js';

/** An operator's dashboard session: the cookie header and the CSRF token writes send. */
export type Session = { cookie: string; csrf: string; userId: string };

export const OPERATOR_PASSWORD = 'correct horse battery';

export function sessionOf(res: ApiResponse): Session {
  const cookies = ([] as string[]).concat(res.headers['set-cookie'] ?? []);
  const value = (name: string) =>
    cookies
      .find((c) => c.startsWith(`${name}=`))!
      .split(';')[0]!
      .split('=')
      .slice(1)
      .join('=');
  return { cookie: `kosh_session=${value('kosh_session')}; kosh_csrf=${value('kosh_csrf')}`, csrf: value('kosh_csrf'), userId: res.body.data.user.id };
}

/** A call with the session cookie; writes carry the CSRF header. */
export function asOperator(t: TestKosh, s: Session, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, body?: unknown): Promise<ApiResponse> {
  return t.api(method, url, body, { cookie: s.cookie, ...(method !== 'GET' ? { 'x-csrf-token': s.csrf } : {}) });
}

/** The token of the newest e-mailed link to `to` (the worker is drained first: mail leaves through the outbox). */
export async function lastLink(t: TestKosh, sink: MailSink, to: string, path: string): Promise<string> {
  await t.kosh.worker.drain();
  const mail = [...sink.messages].reverse().find((m) => m.envelope.to.includes(to));
  expect(mail, `no mail to ${to}`).toBeDefined();
  const match = new RegExp(`${path}\\?token=(\\S+)`).exec(mail!.text ?? '');
  expect(match, mail!.text).not.toBeNull();
  return decodeURIComponent(match![1]!);
}

/** Invites `email` as `role` with the tenant's key, accepts by the e-mailed link, and answers the new operator's session. */
export async function newOperator(t: TestKosh, sink: MailSink, tenant: Tenant, email: string, role: string): Promise<Session> {
  const invited = await tenant.api('POST', '/v1/users/invitations', { email, role });
  expect(invited.status, invited.text).toBe(201);
  const token = await lastLink(t, sink, email, '/dashboard/accept-invitation');
  const accepted = await t.api('POST', '/v1/auth/invitations/accept', { token, name: `${role} person`, password: OPERATOR_PASSWORD });
  expect(accepted.status, accepted.text).toBe(201);
  return sessionOf(accepted);
}

/** Calls the API with a bearer key. */
export function withKey(t: TestKosh, key: string, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, body?: unknown): Promise<ApiResponse> {
  return t.api(method, url, body, { authorization: `Bearer ${key}` });
}

/**
 * Calls the API as a second actor of the tenant (a new finance key): under four eyes (decision
 * 0221) a credit note waiting for approval is approved by someone other than who asked for it.
 */
export async function secondActor(tenant: Tenant): Promise<Tenant['api']> {
  const created = await tenant.api('POST', '/v1/developer/keys', { name: 'second pair of eyes', role: 'finance' });
  expect(created.status, created.text).toBe(201);
  const key: string = created.body.data.key;
  return (method, url, body, headers = {}) => tenant.testKosh.api(method, url, body, { authorization: `Bearer ${key}`, ...headers });
}
