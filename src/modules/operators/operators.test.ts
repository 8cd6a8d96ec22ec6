import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as OTPAuth from 'otpauth';
import { startMailSink, type MailSink } from '../../../test/support/mail-sink.js';
import { startTestKosh, type ApiResponse, type Tenant, type TestKosh } from '../../../test/support/harness.js';
import { typedApi, type TypedApi } from '../../../test/support/typed-api.js';

/**
 * Operators over HTTP with real SMTP (DESIGN §17): invite → accept → sign in → TOTP → recovery
 * code → password reset → old sessions dead; the generic refusal and its rate limit; 410 links;
 * tenant isolation of sessions.
 */
let sink: MailSink;
let t: TestKosh;
let acme: Tenant;
/** The API without a key (sign-in, invitations, password reset), typed. */
let anon: TypedApi;

type Session = { cookie: string; csrf: string };

function sessionOf(res: ApiResponse): Session {
  const cookies = ([] as string[]).concat(res.headers['set-cookie'] ?? []);
  const session = cookies.find((c) => c.startsWith('kosh_session='))!;
  const csrf = cookies.find((c) => c.startsWith('kosh_csrf='))!;
  expect(session).toMatch(/HttpOnly/);
  expect(session).toMatch(/SameSite=Lax/);
  expect(csrf).not.toMatch(/HttpOnly/);
  const value = (c: string) => c.split(';')[0]!.split('=').slice(1).join('=');
  return { cookie: `kosh_session=${value(session)}; kosh_csrf=${value(csrf)}`, csrf: value(csrf) };
}

/** A call with the session cookie; writes send the CSRF header unless `csrf: false`. */
function as(
  s: Session,
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
  url: string,
  body?: unknown,
  options: { csrf?: boolean; headers?: Record<string, string> } = {},
) {
  const headers: Record<string, string> = {
    cookie: s.cookie,
    ...(method !== 'GET' && options.csrf !== false ? { 'x-csrf-token': s.csrf } : {}),
    ...options.headers,
  };
  return t.api(method, url, body, headers);
}

/** The typed client with the session cookie; writes send the CSRF header. */
function signedIn(s: Session): TypedApi {
  return typedApi((method, url, body, headers = {}) => as(s, method, url, body, { headers }));
}

async function lastLink(to: string, path: string): Promise<string> {
  await t.kosh.worker.drain();
  const mail = [...sink.messages].reverse().find((m) => m.envelope.to.includes(to));
  expect(mail, `no mail to ${to}`).toBeDefined();
  const match = new RegExp(`https://billing\\.example\\.in${path}\\?token=(\\S+)`).exec(mail!.text ?? '');
  expect(match, mail!.text).not.toBeNull();
  return decodeURIComponent(match![1]!);
}

type Role = 'viewer' | 'support' | 'finance' | 'admin' | 'owner';

async function invite(tenant: Tenant, email: string, role: Role): Promise<string> {
  const res = await tenant.http.POST('/v1/users/invitations', { body: { email, role } });
  expect(res.status, res.text).toBe(201);
  expect(res.body.data).toMatchObject({ email, role, status: 'pending' });
  // With SMTP the link goes by e-mail only, never in the answer.
  expect(res.body.data.accept_url).toBeUndefined();
  return lastLink(email, '/dashboard/accept-invitation');
}

async function operator(tenant: Tenant, email: string, role: Role): Promise<Session> {
  const token = await invite(tenant, email, role);
  const res = await anon.POST('/v1/auth/invitations/accept', { body: { token, name: `${role} person`, password: 'correct horse battery' } });
  expect(res.status, res.text).toBe(201);
  return sessionOf(res);
}

type SignIn = { email: string; password: string; totp_code?: string; recovery_code?: string; tenant_id?: string };
const signIn = (body: SignIn, headers: Record<string, string> = {}) => anon.POST('/v1/auth/sign-in', { body, headers });

beforeAll(async () => {
  sink = await startMailSink();
  t = await startTestKosh({
    env: { SMTP_URL: sink.url, KOSH_PUBLIC_URL: 'https://billing.example.in', KOSH_RATE_LIMIT_SIGN_IN_FAILURES: '6', KOSH_RATE_LIMIT_PORTAL_LOGIN: '1000' },
  });
  acme = await t.registerTenant({ name: 'Acme Cloud' });
  anon = typedApi(t.api);
});
afterAll(async () => {
  await t?.close();
  await sink?.close();
});

describe('operators', () => {
  it('invite → accept → sign in → TOTP → recovery code once → password reset → old sessions dead', async () => {
    const token = await invite(acme, 'asha@acme.test', 'finance');
    const accepted = await anon.POST('/v1/auth/invitations/accept', { body: { token, name: 'Asha', password: 'correct horse battery' } });
    expect(accepted.status, accepted.text).toBe(201);
    expect(accepted.body.data.user).toMatchObject({ email: 'asha@acme.test', role: 'finance', totp_enabled: false });
    expect(accepted.body.data.tenant).toMatchObject({ id: acme.tenantId, name: 'Acme Cloud' });
    // The link is single use.
    const again = await anon.POST('/v1/auth/invitations/accept', { body: { token, name: 'Asha', password: 'correct horse battery' } });
    expect(again.status).toBe(410);
    expect(again.error!.reason).toBe('invitation_expired');

    const first = sessionOf(accepted);
    const me = await signedIn(first).GET('/v1/auth/me');
    expect(me.status, me.text).toBe(200);
    expect(me.body.data.user).toMatchObject({ email: 'asha@acme.test', role: 'finance' });
    expect(me.body.data.csrf_token).toBe(first.csrf);

    // Password sign-in (a wrong one first: the generic refusal every wrong factor shares).
    const noPassword = await signIn({ email: 'asha@acme.test', password: 'not the password' });
    expect(noPassword.error!.reason).toBe('invalid_credentials');
    const signed = await signIn({ email: 'ASHA@acme.test', password: 'correct horse battery' });
    expect(signed.status, signed.text).toBe(200);
    const s = sessionOf(signed);

    // TOTP: setup, enable with a code, then sign-in needs it.
    const setup = await signedIn(s).POST('/v1/auth/totp/setup');
    expect(setup.status, setup.text).toBe(200);
    expect(setup.body.data.otpauth_url).toMatch(/^otpauth:\/\/totp\//);
    expect(setup.body.data.qr_svg).toMatch(/^<svg/);
    const totp = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(setup.body.data.secret) });
    const code = () => totp.generate({ timestamp: t.clock.now().getTime() });
    /** A code of the next 30 s step: each step's code is accepted once. */
    const nextCode = () => {
      t.clock.advance(30_000);
      return code();
    };
    const wrongEnable = await signedIn(s).POST('/v1/auth/totp/enable', { body: { code: code() === '000000' ? '111111' : '000000' } });
    expect(wrongEnable.status).toBe(401);
    const enabled = await signedIn(s).POST('/v1/auth/totp/enable', { body: { code: code() } });
    expect(enabled.status, enabled.text).toBe(200);
    const recovery: string[] = enabled.body.data.recovery_codes;
    expect(recovery).toHaveLength(10);
    expect(new Set(recovery).size).toBe(10);

    const noCode = await signIn({ email: 'asha@acme.test', password: 'correct horse battery' });
    expect(noCode.status).toBe(401);
    expect(noCode.error!.reason).toBe('totp_required');
    expect(noCode.headers['set-cookie']).toBeUndefined();
    const wrongCode = await signIn({ email: 'asha@acme.test', password: 'correct horse battery', totp_code: code() === '123456' ? '654321' : '123456' });
    expect(wrongCode.status).toBe(401);
    expect(wrongCode.error).toMatchObject({ reason: 'invalid_credentials', message: noPassword.error!.message });
    const used = nextCode();
    const withCode = await signIn({ email: 'asha@acme.test', password: 'correct horse battery', totp_code: used });
    expect(withCode.status, withCode.text).toBe(200);
    const replayed = await signIn({ email: 'asha@acme.test', password: 'correct horse battery', totp_code: used });
    expect(replayed.status).toBe(401);
    expect(replayed.error!.reason).toBe('invalid_credentials');
    expect(withCode.body.data.user.totp_enabled).toBe(true);

    const byRecovery = await signIn({ email: 'asha@acme.test', password: 'correct horse battery', recovery_code: recovery[3] });
    expect(byRecovery.status, byRecovery.text).toBe(200);
    const reused = await signIn({ email: 'asha@acme.test', password: 'correct horse battery', recovery_code: recovery[3] });
    expect(reused.status).toBe(401);
    expect(reused.error!.reason).toBe('invalid_credentials');

    // Password reset by e-mailed link: every session ends, the old password stops working.
    const live = sessionOf(withCode);
    const asked = await anon.POST('/v1/auth/password-reset', { body: { email: 'asha@acme.test' } });
    expect(asked.status).toBe(202);
    const unknown = await anon.POST('/v1/auth/password-reset', { body: { email: 'nobody@acme.test' } });
    expect(unknown.status).toBe(202);
    expect(unknown.body).toEqual(asked.body);
    const resetToken = await lastLink('asha@acme.test', '/dashboard/reset-password');
    const reset = await anon.POST('/v1/auth/password-reset/confirm', { body: { token: resetToken, password: 'a brand new passphrase' } });
    expect(reset.status, reset.text).toBe(204);
    for (const old of [first, s, live]) expect((await signedIn(old).GET('/v1/auth/me')).status).toBe(401);
    const reusedReset = await anon.POST('/v1/auth/password-reset/confirm', { body: { token: resetToken, password: 'another passphrase!' } });
    expect(reusedReset.status).toBe(410);
    expect(reusedReset.error!.reason).toBe('reset_token_expired');
    expect((await signIn({ email: 'asha@acme.test', password: 'correct horse battery', totp_code: code() })).status).toBe(401);
    const fresh = await signIn({ email: 'asha@acme.test', password: 'a brand new passphrase', totp_code: nextCode() });
    expect(fresh.status, fresh.text).toBe(200);

    // Sign-out ends this session; sign-out everywhere ends the others.
    const one = sessionOf(fresh);
    const two = sessionOf(await signIn({ email: 'asha@acme.test', password: 'a brand new passphrase', totp_code: nextCode() }));
    expect((await signedIn(one).POST('/v1/auth/sign-out')).status).toBe(204);
    expect((await signedIn(one).GET('/v1/auth/me')).status).toBe(401);
    expect((await signedIn(two).GET('/v1/auth/me')).status).toBe(200);
    const three = sessionOf(await signIn({ email: 'asha@acme.test', password: 'a brand new passphrase', totp_code: nextCode() }));
    expect((await signedIn(two).POST('/v1/auth/sign-out-everywhere')).status).toBe(204);
    expect((await signedIn(three).GET('/v1/auth/me')).status).toBe(401);
  });

  it('answers a wrong e-mail, password or TOTP code with one message, then 429', async () => {
    await operator(acme, 'ravi@acme.test', 'viewer');
    const wrongPassword = await signIn({ email: 'ravi@acme.test', password: 'not the password' });
    const wrongEmail = await signIn({ email: 'nobody@acme.test', password: 'correct horse battery' });
    expect(wrongPassword.status).toBe(401);
    expect(wrongEmail.status).toBe(401);
    expect(wrongPassword.error!.reason).toBe('invalid_credentials');
    expect(wrongEmail.error!.message).toBe(wrongPassword.error!.message);
    // KOSH_RATE_LIMIT_SIGN_IN_FAILURES=6 per e-mail and address: one failure above, five more, then refused.
    for (let i = 0; i < 5; i++) expect((await signIn({ email: 'ravi@acme.test', password: `wrong ${i}` })).status).toBe(401);
    const limited = await signIn({ email: 'ravi@acme.test', password: 'correct horse battery' });
    expect(limited.status).toBe(429);
    expect(limited.headers['retry-after']).toBeDefined();
  });

  it('answers an expired invitation with 410', async () => {
    const token = await invite(acme, 'late@acme.test', 'support');
    t.clock.advance(7 * 24 * 3600 * 1000 + 1000);
    const res = await anon.POST('/v1/auth/invitations/accept', { body: { token, name: 'Late', password: 'correct horse battery' } });
    expect(res.status).toBe(410);
    expect(res.error).toMatchObject({ code: 'not_found', reason: 'invitation_expired' });
    const list = await acme.http.GET('/v1/users/invitations');
    expect(list.body.data.find((i: { email: string }) => i.email === 'late@acme.test')!.status).toBe('expired');
    // Newest first, paged like every list.
    const latest = await acme.http.GET('/v1/users/invitations', { query: { limit: 1 } });
    expect(latest.body.data.map((i: { email: string }) => i.email)).toEqual(['late@acme.test']);
    expect(latest.body).toMatchObject({ has_more: list.body.data.length > 1, total_count: list.body.data.length });
    const after = await acme.http.GET('/v1/users/invitations', { query: { limit: 1000, starting_after: latest.body.data[0]!.id } });
    expect(after.body.data.map((i: { id: string }) => i.id)).toEqual(list.body.data.slice(1).map((i: { id: string }) => i.id));
  });

  it('answers an expired reset link with 410', async () => {
    await operator(acme, 'reset-late@acme.test', 'viewer');
    await anon.POST('/v1/auth/password-reset', { body: { email: 'reset-late@acme.test' } });
    const token = await lastLink('reset-late@acme.test', '/dashboard/reset-password');
    t.clock.advance(3600 * 1000 + 1000);
    const res = await anon.POST('/v1/auth/password-reset/confirm', { body: { token, password: 'a brand new passphrase' } });
    expect(res.status).toBe(410);
    expect(res.error!.reason).toBe('reset_token_expired');
  });

  it('requires the CSRF header on cookie writes and refuses cross-site requests', async () => {
    const s = await operator(acme, 'csrf@acme.test', 'support');
    const body = { name: 'Kiran', email: 'kiran@example.in' };
    const missing = await as(s, 'POST', '/v1/customers', body, { csrf: false });
    expect(missing.status).toBe(403);
    expect(missing.body.error.reason).toBe('csrf_token_invalid');
    const wrong = await as(s, 'POST', '/v1/customers', body, { csrf: false, headers: { 'x-csrf-token': 'nope' } });
    expect(wrong.body.error.reason).toBe('csrf_token_invalid');
    const crossSite = await as(s, 'POST', '/v1/customers', body, { headers: { 'sec-fetch-site': 'cross-site' } });
    expect(crossSite.status).toBe(403);
    expect(crossSite.body.error.reason).toBe('cross_site_request');
    const ok = await signedIn(s).POST('/v1/customers', { body });
    expect(ok.status, ok.text).toBe(201);
  });

  it('enforces roles on the server: viewer cannot write, support cannot touch money, finance can', async () => {
    const viewer = await operator(acme, 'viewer@acme.test', 'viewer');
    const support = await operator(acme, 'support@acme.test', 'support');
    const finance = await operator(acme, 'finance@acme.test', 'finance');
    const plan = { name: 'Pro', code: `pro-${Date.now()}`, interval_unit: 'month' as const, amount: 49_900, currency: 'INR' };
    const refused = await signedIn(viewer).POST('/v1/plans', { body: plan });
    expect(refused.status).toBe(403);
    expect(refused.error).toMatchObject({ code: 'unauthorized', reason: 'role_forbidden' });
    expect(refused.error!.message).toMatch(/finance/);
    expect(refused.error!.request_id).toBeDefined();
    expect((await signedIn(viewer).GET('/v1/plans')).status).toBe(200);

    const customer = await signedIn(support).POST('/v1/customers', { body: { name: 'Meera', email: 'meera@example.in' } });
    expect(customer.status, customer.text).toBe(201);
    const invoice = await acme.http.POST('/v1/invoices', {
      body: {
        customer_id: customer.body.data.id,
        currency: 'INR',
        lines: [{ description: 'Work', unit_amount: 10_000 }],
      },
    });
    expect(invoice.status, invoice.text).toBe(201);
    const supportVoid = await signedIn(support).POST('/v1/invoices/{id}/void', { path: { id: invoice.body.data.id } });
    expect(supportVoid.status).toBe(403);
    expect(supportVoid.error!.reason).toBe('role_forbidden');
    const financeVoid = await signedIn(finance).POST('/v1/invoices/{id}/void', { path: { id: invoice.body.data.id } });
    expect(financeVoid.status, financeVoid.text).toBe(200);
    // Team management is admin+.
    expect((await signedIn(finance).POST('/v1/users/invitations', { body: { email: 'x@acme.test', role: 'viewer' } })).status).toBe(403);
  });

  it('protects the last owner and lets only owners make owners', async () => {
    const tenant = await t.registerTenant({ name: 'Solo', owner: { email: 'solo@owner.test', password: 'correct horse battery', name: 'Solo' } });
    const users = await tenant.http.GET('/v1/users');
    expect(users.body.data).toHaveLength(1);
    expect(users.body).toMatchObject({ object: 'list', has_more: false, total_count: 1 });
    expect((await tenant.http.GET('/v1/users', { query: { starting_after: users.body.data[0]!.id } })).body).toMatchObject({ data: [], has_more: false });
    const ownerId = users.body.data[0]!.id;
    expect(users.body.data[0]!.role).toBe('owner');
    const demote = await tenant.http.PATCH('/v1/users/{id}', { path: { id: ownerId }, body: { role: 'admin' } });
    expect(demote.status).toBe(409);
    expect(demote.error!.reason).toBe('last_owner');
    expect((await tenant.http.DELETE('/v1/users/{id}', { path: { id: ownerId } })).status).toBe(409);

    const admin = await operator(tenant, 'admin@solo.test', 'admin');
    const adminMakesOwner = await signedIn(admin).POST('/v1/users/invitations', { body: { email: 'o2@solo.test', role: 'owner' } });
    expect(adminMakesOwner.status).toBe(403);
    const owner = sessionOf(await signIn({ email: 'solo@owner.test', password: 'correct horse battery' }));
    const second = await signedIn(owner).POST('/v1/users/invitations', { body: { email: 'o2@solo.test', role: 'owner' } });
    expect(second.status, second.text).toBe(201);
    expect((await signedIn(admin).PATCH('/v1/users/{id}', { path: { id: ownerId }, body: { name: 'Renamed' } })).status).toBe(200);
    expect((await signedIn(admin).DELETE('/v1/users/{id}', { path: { id: ownerId } })).status).toBe(403);
  });

  it('signs an operator of several tenants in to the one named, else the most recently used', async () => {
    const beta = await t.registerTenant({ name: 'Beta Ltd' });
    await operator(acme, 'multi@both.test', 'viewer');
    t.clock.advance(1000);
    await operator(beta, 'multi@both.test', 'finance');
    const latest = await signIn({ email: 'multi@both.test', password: 'correct horse battery' });
    expect(latest.body.data.tenant.id).toBe(beta.tenantId);
    t.clock.advance(1000);
    const named = await signIn({ email: 'multi@both.test', password: 'correct horse battery', tenant_id: acme.tenantId });
    expect(named.body.data).toMatchObject({ tenant: { id: acme.tenantId }, user: { role: 'viewer' } });
    t.clock.advance(1000);
    expect((await signIn({ email: 'multi@both.test', password: 'correct horse battery' })).body.data.tenant.id).toBe(acme.tenantId);
  });

  it('never shows tenant B to a session of tenant A', async () => {
    const other = await t.registerTenant({ name: 'Other Co' });
    const otherCustomer = await other.http.POST('/v1/customers', { body: { name: 'Secret', email: 'secret@other.test' } });
    const s = await operator(acme, 'iso@acme.test', 'admin');
    const read = await signedIn(s).GET('/v1/customers/{id}', { path: { id: otherCustomer.body.data.id } });
    expect(read.status).toBe(404);
    const list = await signedIn(s).GET('/v1/customers', { query: { limit: 1000 } });
    expect(list.body.data.map((c: { id: string }) => c.id)).not.toContain(otherCustomer.body.data.id);
    // tenant_id of another tenant at sign-in finds no operator there.
    const wrongTenant = await signIn({ email: 'iso@acme.test', password: 'correct horse battery', tenant_id: other.tenantId });
    expect(wrongTenant.status).toBe(401);
    // A session cookie whose tenant part is rewritten names no session.
    const forged = s.cookie.replace(acme.tenantId, other.tenantId);
    expect((await t.api('GET', '/v1/customers', undefined, { cookie: forged })).status).toBe(401);
  });
});
