import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { InjectOptions } from 'fastify';
import { startTestKosh, type ApiResponse, type Tenant, type TestKosh } from '../support/harness.js';
import { awayFromWindowEnds } from '../support/rate-limits.js';

/**
 * Rate limits (429 with Retry-After, RateLimit-* and the envelope), the portal's e-mail cap and
 * login answer, and the portal's cross-site protection without a required CSRF token.
 */

const ADMIN_TOKEN = 'z'.repeat(40);

function expectRateLimited(res: ApiResponse) {
  expect(res.status, res.text).toBe(429);
  expect(res.body.error).toMatchObject({ code: 'rate_limited', message: expect.any(String) });
  expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
  expect(res.headers['ratelimit-limit']).toBeDefined();
  expect(res.headers['ratelimit-remaining']).toBe('0');
  expect(Number(res.headers['ratelimit-reset'])).toBeGreaterThan(0);
}

const from = (ip: string) => ({ remoteAddress: ip });

describe('rate limits', () => {
  let t: TestKosh;
  let tenant: Tenant;
  beforeAll(async () => {
    t = await startTestKosh({
      env: {
        KOSH_RATE_LIMIT_KEY_PER_MINUTE: '5',
        KOSH_RATE_LIMIT_IP_PER_MINUTE: '8',
        KOSH_RATE_LIMIT_ADMIN_FAILURES: '3',
        KOSH_RATE_LIMIT_PORTAL_LOGIN: '4',
        KOSH_RATE_LIMIT_GIFT_CODE_FAILURES: '3',
        KOSH_REGISTRATION: 'admin',
        KOSH_ADMIN_TOKEN: ADMIN_TOKEN,
      },
    });
    tenant = await t.registerTenant({}, { authorization: `Bearer ${ADMIN_TOKEN}` });
  });
  afterAll(() => t?.close());
  beforeEach(() => awayFromWindowEnds());

  const call = (ip: string, opts: InjectOptions) => t.call({ ...opts, ...from(ip) });

  it('limits /v1 per key, with RateLimit-* headers on every answer', async () => {
    const answers = [];
    for (let i = 0; i < 6; i++)
      answers.push(await call('10.0.0.1', { method: 'GET', url: '/v1/customers', headers: { authorization: `Bearer ${tenant.key}` } }));
    expect(answers.slice(0, 5).map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect(answers[0]!.headers['ratelimit-limit']).toBe('5');
    expect(answers[0]!.headers['ratelimit-remaining']).toBe('4');
    expectRateLimited(answers[5]!);
    // The same key from another address is still the same key.
    expectRateLimited(await call('10.0.0.2', { method: 'GET', url: '/v1/customers', headers: { authorization: `Bearer ${tenant.key}` } }));
  });

  it('limits /v1 per address, keys or not', async () => {
    const answers = [];
    for (let i = 0; i < 9; i++) answers.push(await call('10.0.0.3', { method: 'GET', url: '/v1/customers' }));
    expect(answers.slice(0, 8).every((r) => r.status === 401)).toBe(true);
    expectRateLimited(answers[8]!);
  });

  it('limits failed admin-token attempts per address, not successful ones', async () => {
    const register = (ip: string, token: string) =>
      call(ip, {
        method: 'POST',
        url: '/auth/register',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        payload: JSON.stringify({ name: 'X', email: 'x@example.in' }),
      });
    for (let i = 0; i < 3; i++) expect((await register('10.0.0.4', 'w'.repeat(40))).status).toBe(401);
    expectRateLimited(await register('10.0.0.4', 'w'.repeat(40)));
    expectRateLimited(await register('10.0.0.4', ADMIN_TOKEN)); // the right token too, once locked
    for (let i = 0; i < 5; i++) expect((await register('10.0.0.5', ADMIN_TOKEN)).status).toBe(201);
  });

  it('limits portal login requests per address', async () => {
    const login = (ip: string) =>
      call(ip, {
        method: 'POST',
        url: '/portal/api/login',
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify({ tenant_id: tenant.tenantId, email: 'a@example.in' }),
      });
    for (let i = 0; i < 4; i++) expect((await login('10.0.0.6')).status).toBe(200);
    expectRateLimited(await login('10.0.0.6'));
    expect((await login('10.0.0.7')).status).toBe(200);
  });

  it('limits wrong gift codes per address', async () => {
    const fresh = await t.registerTenant({}, { authorization: `Bearer ${ADMIN_TOKEN}` }); // the first one's key is spent
    const c = await fresh.api('POST', '/v1/customers', { email: 'gifts@example.in' });
    const link = await fresh.api('POST', `/v1/customers/${c.body.data.id}/portal-sessions`);
    const opened = await t.call({ method: 'GET', url: `/portal/login?token=${encodeURIComponent(link.body.data.token)}` });
    const cookie = String(opened.headers['set-cookie']).split(';')[0]!;
    const redeem = (ip: string) =>
      call(ip, {
        method: 'POST',
        url: '/portal/api/redeem',
        headers: { cookie, 'content-type': 'application/json' },
        payload: JSON.stringify({ code: 'ZZZZ-ZZZZ-ZZZZ-ZZZZ' }),
      });
    for (let i = 0; i < 3; i++) expect((await redeem('10.0.0.8')).status).toBe(422);
    expectRateLimited(await redeem('10.0.0.8'));
  });
});

describe('the portal sign-in e-mail', () => {
  let t: TestKosh;
  let tenant: Tenant;
  beforeAll(async () => {
    t = await startTestKosh();
    tenant = await t.registerTenant();
    expect((await tenant.api('POST', '/v1/customers', { email: 'victim@example.in' })).status).toBe(201);
  });
  afterAll(() => t?.close());

  const login = (ip: string, email: string) =>
    t.call({
      method: 'POST',
      url: '/portal/api/login',
      remoteAddress: ip,
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ tenant_id: tenant.tenantId, email }),
    });
  const mails = async (to: string) =>
    (await t.database.db.selectFrom('jobs').select('payload').where('kind', '=', 'mail.send').execute()).filter((j) => JSON.stringify(j.payload).includes(to))
      .length;

  it("does the same work whether or not the address is a customer's: one queued job, nothing else", async () => {
    const jobs = () => t.database.db.selectFrom('jobs').select(['kind', 'payload', 'tenant_id']).where('kind', 'like', 'portal.%').execute();
    const tokens = () => t.database.db.selectFrom('portal_login_tokens').select('id').execute();
    const jobsBefore = (await jobs()).length;
    const tokensBefore = (await tokens()).length;
    const known = await login('10.1.0.1', 'victim@example.in');
    const unknown = await login('10.1.0.1', 'stranger@example.in');
    expect([known.status, known.text]).toEqual([unknown.status, unknown.text]);
    const queued = (await jobs()).slice(jobsBefore);
    expect(queued).toHaveLength(2);
    expect(queued.map((j) => j.kind)).toEqual([queued[0]!.kind, queued[0]!.kind]);
    expect(Object.keys(queued[0]!.payload).sort()).toEqual(Object.keys(queued[1]!.payload).sort());
    expect((await tokens()).length).toBe(tokensBefore); // no lookup result leaks into the answer's work
    await t.kosh.worker.drain();
    expect(await mails('victim@example.in')).toBe(1);
    expect(await mails('stranger@example.in')).toBe(0);
  });

  it('caps links per requester, so a stranger cannot lock the customer out', async () => {
    for (let i = 0; i < 8; i++) await login('10.1.0.2', 'victim@example.in');
    await t.kosh.worker.drain();
    const afterStranger = await mails('victim@example.in');
    const own = await login('10.1.0.3', 'victim@example.in');
    expect(own.status).toBe(200);
    await t.kosh.worker.drain();
    expect(await mails('victim@example.in')).toBe(afterStranger + 1);
  });
});

describe('portal writes without X-CSRF-Token (SPEC 4.9)', () => {
  let t: TestKosh;
  let tenant: Tenant;
  let cookie: string;
  let csrf: string;
  beforeAll(async () => {
    t = await startTestKosh({ env: { KOSH_PUBLIC_URL: 'https://billing.example.in' } });
    tenant = await t.registerTenant();
    const c = await tenant.api('POST', '/v1/customers', { email: 'spec@example.in' });
    const link = await tenant.api('POST', `/v1/customers/${c.body.data.id}/portal-sessions`);
    const opened = await t.call({ method: 'GET', url: `/portal/login?token=${encodeURIComponent(link.body.data.token)}` });
    cookie = String(opened.headers['set-cookie']).split(';')[0]!;
    csrf = (await t.call({ method: 'GET', url: '/portal/api/me', headers: { cookie } })).body.data.csrf_token;
  });
  afterAll(() => t?.close());

  const redeem = (headers: Record<string, string>, payload = JSON.stringify({ code: 'ZZZZ-ZZZZ-ZZZZ-ZZZZ' })) =>
    t.call({ method: 'POST', url: '/portal/api/redeem', headers: { cookie, 'content-type': 'application/json', ...headers }, payload });

  it('accepts a request with the cookie and a JSON body alone (a non-browser SPEC client)', async () => {
    const res = await redeem({});
    expect(res.status, res.text).toBe(422); // reached the gift lookup: the code is unknown
    expect(res.body.error.reason).toBe('gift_code_invalid');
  });

  it.each([
    ['Sec-Fetch-Site: same-origin', { 'sec-fetch-site': 'same-origin' }],
    ['Sec-Fetch-Site: none', { 'sec-fetch-site': 'none' }],
    ['the public origin', { origin: 'https://billing.example.in' }],
    ['the token', { 'x-csrf-token': '' }],
  ])('accepts a same-origin request (%s)', async (_label, headers) => {
    const res = await redeem('x-csrf-token' in headers ? { 'x-csrf-token': csrf } : headers);
    expect(res.status, res.text).toBe(422);
  });

  it.each([
    ['Sec-Fetch-Site: cross-site', { 'sec-fetch-site': 'cross-site' }],
    ['Sec-Fetch-Site: same-site', { 'sec-fetch-site': 'same-site' }],
    ['a foreign Origin', { origin: 'https://evil.example' }],
    ['Origin: null', { origin: 'null' }],
    ['a wrong token', { 'x-csrf-token': 'wrong' }],
  ])('refuses a cross-site request (%s) with 403', async (_label, headers) => {
    const res = await redeem(headers);
    expect(res.status, res.text).toBe(403);
    expect(res.body.error.code).toBe('unauthorized');
  });

  it('refuses a write that is not application/json (a cross-site form or text/plain post)', async () => {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded']) {
      const res = await t.call({ method: 'POST', url: '/portal/api/redeem', headers: { cookie, 'content-type': type }, payload: 'code=ZZZZ-ZZZZ-ZZZZ-ZZZZ' });
      expect([400, 403, 415], `${type}: ${res.status} ${res.text}`).toContain(res.status);
      expect(res.body.error).toBeDefined();
    }
  });

  it('logs out with the cookie alone', async () => {
    const res = await t.call({ method: 'POST', url: '/portal/api/logout', headers: { cookie } });
    expect(res.status, res.text).toBe(200);
    expect((await t.call({ method: 'GET', url: '/portal/api/me', headers: { cookie } })).status).toBe(401);
  });
});
