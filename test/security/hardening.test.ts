import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKosh, type Kosh } from '../../src/app.js';
import { loadConfig } from '../../src/platform/config.js';
import { generateApiKey } from '../../src/platform/auth/api-keys.js';
import { enqueueJob } from '../../src/platform/jobs/jobs.js';
import { newId } from '../../src/platform/ids.js';
import { isForbiddenAddress } from '../../src/platform/http/outbound-guard.js';
import { gstinCheckCharacter } from '../../src/modules/tax/index.js';
import { envelopeProblem, fetchOpenApi, fillPath, randomIds, routesOf, validBodyFor, type ApiRoute } from '../support/security.js';
import { startTestKosh, toResponse, type Tenant, type TestKosh } from '../support/harness.js';

/**
 * Hardening found by an outside probe: authentication on the matched route, key and job modes,
 * security headers, /metrics, live-mode configuration, the SSRF filter, date ranges, and GSTIN
 * vs billing-address states.
 */

const ADMIN_TOKEN = 'a'.repeat(32);
const SECRET = () => randomBytes(32).toString('base64');

function gstin(state: string, pan = 'AABCU9603R'): string {
  const first14 = `${state}${pan}1Z`;
  return first14 + gstinCheckCharacter(first14);
}

/** A request through a real socket with a raw request target (absolute-form is kept as sent). */
function rawRequest(port: number, method: string, target: string, body?: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method,
        path: target,
        headers: { ...(body !== undefined ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } : {}) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('/v1 authentication', () => {
  let t: TestKosh;
  let routes: ApiRoute[];
  let port: number;

  beforeAll(async () => {
    t = await startTestKosh();
    // Routes declared `security: []` (the accounting OAuth callback) authenticate otherwise.
    routes = routesOf(await fetchOpenApi(t)).filter((r) => !r.public);
    await t.kosh.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.kosh.app.server.address() as AddressInfo).port;
  });
  afterAll(() => t?.close());

  const spellings: [string, (path: string) => string][] = [
    ['an encoded "v" (/%761/…)', (path) => path.replace(/^\/v1/, '/%761')],
    ['an encoded "1" (/v%31/…)', (path) => path.replace(/^\/v1/, '/v%31')],
    ['both encoded (/%76%31/…)', (path) => path.replace(/^\/v1/, '/%76%31')],
    ['absolute-form (http://x/v1/…)', (path) => `http://x${path}`],
    ['absolute-form with encoding (http://x/%761/…)', (path) => `http://x${path.replace(/^\/v1/, '/%761')}`],
  ];

  it.each(spellings)('answers 401 without a key on every /v1 route spelled with %s', async (_label, spell) => {
    expect(routes.length).toBeGreaterThan(20);
    const failures: string[] = [];
    for (const route of routes) {
      const body = validBodyFor(route) ?? (route.bodySchema ? {} : undefined);
      const target = spell(fillPath(route.path, randomIds(route)));
      const res = await rawRequest(port, route.method, target, body === undefined ? undefined : JSON.stringify(body));
      const parsed = { status: res.status, headers: {}, text: res.text, body: res.text ? JSON.parse(res.text) : undefined };
      const problem = envelopeProblem(parsed, 401, 'unauthorized', 'invalid_api_key');
      if (problem) failures.push(`${route.method} ${target}: ${problem}`);
    }
    expect(failures).toEqual([]);
  });

  it.each(spellings)('asks for a key before saying whether a /v1 route exists, spelled with %s', async (_label, spell) => {
    const res = await rawRequest(port, 'GET', spell('/v1/no-such-thing'));
    expect(res.status, res.text).toBe(401);
  });
});

describe('key and tenant modes', () => {
  let t: TestKosh;
  let live: Kosh;
  let tenant: Tenant;

  beforeAll(async () => {
    t = await startTestKosh();
    tenant = await t.registerTenant();
    // A live deployment on the same database as the test one.
    const config = loadConfig({
      KOSH_MODE: 'live',
      LOG_LEVEL: 'silent',
      KOSH_SECRET_KEY: SECRET(),
      KOSH_PUBLIC_URL: 'https://billing.example',
      KOSH_ADMIN_TOKEN: ADMIN_TOKEN,
    });
    live = await createKosh({ config, clock: t.clock, database: t.database, logger: pino({ level: 'silent' }) });
  });
  afterAll(async () => {
    await live?.close();
    await t?.close();
  });

  it("refuses to create a key of another mode than the tenant's (400 naming mode)", async () => {
    const res = await tenant.api('POST', '/v1/developer/keys', { name: 'prod', mode: 'live' });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'validation_failed', details: [{ field: 'mode', message: expect.stringContaining('test-mode tenant') }] });
    const same = await tenant.api('POST', '/v1/developer/keys', { name: 'ci', mode: 'test' });
    expect(same.status).toBe(201);
  });

  it('refuses, on a live deployment, a live key whose tenant is a test-mode tenant', async () => {
    // A key row as an older version could mint it: sk_live_ for a test-mode tenant.
    const { key, prefix, hash } = generateApiKey('live');
    await t.database.db
      .insertInto('api_keys')
      .values({
        id: newId(),
        tenant_id: tenant.tenantId,
        name: 'legacy',
        mode: 'live',
        prefix,
        key_hash: hash,
        created_at: t.clock.now(),
        last_used_at: null,
        revoked_at: null,
      })
      .execute();
    const res = toResponse(await live.app.inject({ method: 'GET', url: '/v1/customers', headers: { authorization: `Bearer ${key}` } }));
    expect(res.status).toBe(401);
    expect(res.body.error).toMatchObject({ code: 'unauthorized', reason: 'key_mode_mismatch' });
  });

  it("gives a job its tenant's mode, and a worker runs only its own mode's jobs", async () => {
    const kind = `probe.${newId()}`; // no handler: running it records a failure we can see
    await t.database.db.transaction().execute((tx) => enqueueJob(tx, t.clock.now(), { kind, tenantId: tenant.tenantId }));
    const job = () => t.database.db.selectFrom('jobs').selectAll().where('kind', '=', kind).executeTakeFirstOrThrow();
    expect((await job()).mode).toBe('test');
    await live.worker.drain();
    expect((await job()).attempts).toBe(0);
    await t.kosh.worker.drain();
    expect((await job()).attempts).toBe(1);
  });
});

describe('headers and /metrics', () => {
  let t: TestKosh;
  let liveT: TestKosh;
  beforeAll(async () => {
    t = await startTestKosh({ env: { KOSH_METRICS_TOKEN: 'm'.repeat(32) } });
    liveT = await startTestKosh({ env: { KOSH_MODE: 'live', KOSH_PUBLIC_URL: 'https://billing.example', KOSH_REGISTRATION: 'open' } });
  });
  afterAll(async () => {
    await t?.close();
    await liveT?.close();
  });

  it.each(['/healthz', '/v1/customers', '/no-such-route', '/openapi.json'])('sends the security headers on %s', async (url) => {
    const res = await t.api('GET', url);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['x-frame-options']).toBeDefined();
    expect(res.headers['content-security-policy']).toBeDefined();
    expect(res.headers['referrer-policy']).toBeDefined();
    expect(res.headers['strict-transport-security']).toBeUndefined(); // test mode is plain http
  });

  it('sends HSTS in live mode', async () => {
    const res = await liveT.api('GET', '/healthz');
    expect(res.headers['strict-transport-security']).toMatch(/max-age=\d+/);
  });

  it('serves /docs with a CSP that lets the documentation page load its own scripts', async () => {
    const res = await t.api('GET', '/docs/');
    expect(res.status).toBe(200);
    expect(res.headers['content-security-policy']).toMatch(/script-src 'self'/);
  });

  it('keeps the portal page CSP', async () => {
    const res = await t.api('GET', '/portal');
    expect(res.status).toBe(200);
    expect(res.headers['content-security-policy']).toMatch(/default-src 'none'/);
  });

  it('requires KOSH_METRICS_TOKEN on /metrics when it is set', async () => {
    expect((await t.api('GET', '/metrics')).status).toBe(401);
    expect((await t.api('GET', '/metrics', undefined, { authorization: 'Bearer wrong' })).status).toBe(401);
    const ok = await t.api('GET', '/metrics', undefined, { authorization: `Bearer ${'m'.repeat(32)}` });
    expect(ok.status).toBe(200);
    expect(ok.text).toContain('kosh_http_requests_total');
  });

  it('closes /metrics in live mode when no KOSH_METRICS_TOKEN is set', async () => {
    const res = await liveT.api('GET', '/metrics');
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('unauthorized');
  });
});

describe('configuration', () => {
  const base = { KOSH_SECRET_KEY: SECRET() };
  it('requires KOSH_PUBLIC_URL in live mode', () => {
    expect(() => loadConfig({ ...base, KOSH_MODE: 'live' })).toThrow(/KOSH_PUBLIC_URL/);
    expect(loadConfig({ ...base, KOSH_MODE: 'live', KOSH_PUBLIC_URL: 'https://billing.example' }).publicUrl).toBe('https://billing.example');
  });

  it('refuses a KOSH_ADMIN_TOKEN shorter than 32 characters', () => {
    expect(() => loadConfig({ ...base, KOSH_ADMIN_TOKEN: 'secret-token' })).toThrow(/KOSH_ADMIN_TOKEN/);
    expect(loadConfig({ ...base, KOSH_ADMIN_TOKEN: ADMIN_TOKEN }).adminToken).toBe(ADMIN_TOKEN);
  });
});

describe('the live-mode SSRF filter', () => {
  it.each([
    '::ffff:0:7f00:1', // IPv4-translated 127.0.0.1
    '[::ffff:0:7f00:1]',
    '::ffff:127.0.0.1', // IPv4-mapped
    '[::ffff:127.0.0.1]',
    '::ffff:7f00:1',
    '::127.0.0.1', // IPv4-compatible
    '[::127.0.0.1]',
    '::ffff:0:a00:1', // translated 10.0.0.1
    '::ffff:a9fe:a9fe', // mapped 169.254.169.254
    '::ffff:0:a9fe:a9fe', // translated 169.254.169.254
  ])('refuses %s', (address) => {
    expect(isForbiddenAddress(address)).toBe(true);
  });

  it.each(['::ffff:93.184.216.34', '::ffff:0:5db8:d822', '93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'])('allows the public %s', (address) => {
    expect(isForbiddenAddress(address)).toBe(false);
  });
});

describe('dates', () => {
  let t: TestKosh;
  let tenant: Tenant;
  beforeAll(async () => {
    t = await startTestKosh();
    tenant = await t.registerTenant();
  });
  afterAll(() => t?.close());

  const customer = '00000000-0000-4000-8000-000000000000';
  const cases: [string, (date: string) => [string, string, unknown?]][] = [
    [
      'invoice due_date',
      (d) => ['POST', '/v1/invoices', { customer_id: customer, currency: 'INR', due_date: d, lines: [{ description: 'x', unit_amount: 100 }] }],
    ],
    ['credit note expires_at', (d) => ['POST', '/v1/credit-notes', { customer_id: customer, amount: 100, expires_at: d }]],
    [
      'quote valid_until',
      (d) => ['POST', '/v1/quotes', { customer_id: customer, line_items: [{ description: 'x', quantity: 1, unit_amount: 100 }], valid_until: d }],
    ],
    ['subscription start_at', (d) => ['POST', '/v1/subscriptions', { customer_id: customer, plan_id: customer, start_at: d }]],
    ['events created[gte]', (d) => ['GET', `/v1/events?created[gte]=${encodeURIComponent(d)}`]],
  ];
  const outOfRange = ['0001-01-01T00:00:00Z', '1969-12-31T23:59:59Z', '9999-12-31T23:59:59-01:00', '1970-01-01T04:00:00+05:00'];

  it.each(cases)('refuses a %s outside 1970–9999 with 400', async (_label, make) => {
    for (const date of outOfRange) {
      const [method, url, body] = make(date);
      const res = await tenant.api(method as 'GET', url, body);
      expect(res.status, `${date}: ${res.text}`).toBe(400);
      expect(res.body.error.code).toBe('validation_failed');
    }
  });

  it.each(cases)('still accepts a %s inside the range (refused only for the missing record)', async (label, make) => {
    // A past instant for a start, a future one for the rest (the clock is at 2026-04-01).
    const [method, url, body] = make(label.includes('start_at') ? '2026-03-20T00:00:00+05:30' : '2026-05-01T00:00:00+05:30');
    const res = await tenant.api(method as 'GET', url, body);
    expect(res.status, res.text).not.toBe(400);
  });
});

describe('customers whose GSTIN state differs from the billing address state', () => {
  let t: TestKosh;
  let tenant: Tenant;
  beforeAll(async () => {
    t = await startTestKosh();
    tenant = await t.registerTenant({ state_code: '29', gstin: gstin('29', 'AAACK1234F') });
  });
  afterAll(() => t?.close());

  it('accepts a head-office GSTIN with a branch address, and taxes by the GSTIN', async () => {
    const created = await tenant.api('POST', '/v1/customers', {
      email: 'branch@example.in',
      gstin: gstin('27'),
      billing_address: { line1: 'Branch office', city: 'Bengaluru', state_code: '29', country: 'IN' },
    });
    expect(created.status, created.text).toBe(201);
    expect(created.body.data.billing_address.state_code).toBe('29');

    const invoice = await tenant.api('POST', '/v1/invoices', {
      customer_id: created.body.data.id,
      currency: 'INR',
      lines: [{ description: 'Plan', unit_amount: 100000 }],
    });
    expect(invoice.status, invoice.text).toBe(201);
    expect(invoice.body.data).toMatchObject({ place_of_supply: '27', tax_type: 'inter_state' });
  });

  it('accepts changing either side to disagree', async () => {
    const created = await tenant.api('POST', '/v1/customers', {
      email: 'hq@example.in',
      gstin: gstin('29'),
      billing_address: { state_code: '29', country: 'IN' },
    });
    expect(created.status).toBe(201);
    const moved = await tenant.api('PUT', `/v1/customers/${created.body.data.id}`, { billing_address: { state_code: '33', country: 'IN' } });
    expect(moved.status, moved.text).toBe(200);
    const regstin = await tenant.api('PUT', `/v1/customers/${created.body.data.id}`, { gstin: gstin('07') });
    expect(regstin.status, regstin.text).toBe(200);
  });
});
