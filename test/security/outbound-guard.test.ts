import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertEndpoint } from '../../src/modules/webhooks/webhooks.repository.js';
import { loadConfig } from '../../src/platform/config.js';
import { isForbiddenAddress, outboundPolicy, outboundUrlProblem } from '../../src/platform/http/outbound-guard.js';
import { startTestKosh, type Tenant, type TestKosh } from '../support/harness.js';
import { fetchOpenApi, resolveSchema, routesOf, type JsonSchema, type OpenApiDocument } from '../support/security.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';
import { endpointRow } from '../support/webhooks.js';

/**
 * The one outbound guard (DESIGN §21, decision 0210): every request to a URL a tenant influenced
 * is refused when it could reach inside the network, in every mode and every spelling. Only a
 * test-mode deployment with KOSH_OUTBOUND_ALLOW_PRIVATE=1 (the harness's default) may reach
 * loopback. Only literal addresses and `localhost` are used: no DNS query leaves the machine.
 */

/** Loopback, metadata and private addresses as a tenant might spell them. */
const INSIDE = [
  'http://127.0.0.1/x',
  'http://2130706433/x', // 127.0.0.1 as one integer
  'http://0177.0.0.1/x', // octal
  'http://0x7f.1/x', // hex, short form
  'http://127.1/x',
  'http://[::ffff:127.0.0.1]/x', // IPv4-mapped IPv6
  'http://[0:0:0:0:0:ffff:7f00:1]/x',
  'http://[::1]/x',
  'http://169.254.169.254/latest/meta-data/', // cloud metadata
  'http://[fd00:ec2::254]/x', // AWS metadata over IPv6
  'http://0.0.0.0/x',
  'http://10.1.2.3/x',
  'http://100.64.0.1/x', // CGNAT
  'http://224.0.0.1/x', // multicast
  'http://localhost/x',
];

describe('the WHATWG URL parser (which the guard relies on for IPv4 spellings)', () => {
  it.each([
    ['http://2130706433/', '127.0.0.1'],
    ['http://0177.0.0.1/', '127.0.0.1'],
    ['http://0x7f.1/', '127.0.0.1'],
    ['http://0x7f000001/', '127.0.0.1'],
    ['http://127.1/', '127.0.0.1'],
    ['http://%31%32%37.0.0.1/', '127.0.0.1'],
    ['http://0/', '0.0.0.0'],
    ['http://[::ffff:127.0.0.1]/', '[::ffff:7f00:1]'],
  ])('reads %s as %s', (url, hostname) => {
    expect(new URL(url).hostname).toBe(hostname);
  });
});

describe('outboundUrlProblem', () => {
  const strict = outboundPolicy(loadConfig({ KOSH_MODE: 'test' }));

  it.each(INSIDE)('refuses %s in a test deployment without the allowance', async (url) => {
    expect(await outboundUrlProblem(new URL(url), strict)).toMatch(/private, loopback, link-local or reserved/);
  });

  it.each(['file:///etc/passwd', 'gopher://example.com:70/_x', 'data:text/plain,x', 'ftp://example.com/'])('refuses the non-http URL %s', async (url) => {
    expect(await outboundUrlProblem(new URL(url), { httpsOnly: false, allowPrivate: true })).toBe('must be an http(s) URL');
  });

  it('allows a public address, and loopback only with the test allowance', async () => {
    expect(await outboundUrlProblem(new URL('http://93.184.216.34/x'), strict)).toBeNull();
    const allowing = outboundPolicy(loadConfig({ KOSH_MODE: 'test', KOSH_OUTBOUND_ALLOW_PRIVATE: '1' }));
    expect(await outboundUrlProblem(new URL('http://127.0.0.1:9/x'), allowing)).toBeNull();
  });

  it('judges addresses as the socket sees them', () => {
    for (const address of ['127.0.0.1', '::ffff:7f00:1', '::ffff:169.254.169.254', '::', '0.0.0.0']) expect(isForbiddenAddress(address)).toBe(true);
  });

  it('cannot be lifted in live mode', () => {
    expect(() => loadConfig({ KOSH_MODE: 'live', KOSH_PUBLIC_URL: 'https://billing.example', KOSH_OUTBOUND_ALLOW_PRIVATE: '1' })).toThrow(
      /KOSH_OUTBOUND_ALLOW_PRIVATE/,
    );
  });
});

/** Every request-body field of the OpenAPI document that holds a URL: `METHOD path field.path`. */
function urlFields(doc: OpenApiDocument): string[] {
  const found: string[] = [];
  const walk = (label: string, schema: JsonSchema | undefined, at: string, depth: number) => {
    const s = resolveSchema(doc, schema);
    if (!s || depth > 8) return;
    if (s.format === 'uri' || /(^|_)(url|uri)$/.test(at.split('.').at(-1) ?? '')) found.push(`${label} ${at}`);
    for (const [name, child] of Object.entries(s.properties ?? {})) walk(label, child, at ? `${at}.${name}` : name, depth + 1);
    for (const child of [...(s.anyOf ?? []), ...(s.oneOf ?? []), ...(s.allOf ?? [])]) walk(label, child, at, depth + 1);
    if (s.items) walk(label, s.items, `${at}[]`, depth + 1);
  };
  for (const route of routesOf(doc)) walk(route.label, route.bodySchema, '', 0);
  return [...new Set(found)].sort();
}

describe('tenant-influenced URLs in a test deployment without the allowance', () => {
  let t: TestKosh;
  let tenant: Tenant;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    t = await startTestKosh({ env: { KOSH_OUTBOUND_ALLOW_PRIVATE: '0' } });
    tenant = await t.registerTenant();
    receiver = await startWebhookReceiver({ now: () => t.clock.now() });
  });
  afterAll(async () => {
    await receiver.close();
    await t.close();
  });

  /**
   * A new URL field in any request body fails here until it is classified: fetched by Kosh
   * (then it goes through the guard and is tested below), only handed to a browser, or refused.
   */
  it('knows every URL field of every /v1 request body', async () => {
    expect(urlFields(await fetchOpenApi(t))).toEqual([
      'PATCH /v1/entities/{id} einvoicing.credentials.base_url', // refused: the deployment's (decision 0211)
      'PATCH /v1/webhooks/{id} url', // fetched: guarded
      'POST /v1/accounting/connect/{provider} redirect_uri', // browser only (the OAuth redirect)
      'POST /v1/webhooks url', // fetched: guarded
    ]);
  });

  it.each(INSIDE)('refuses the webhook URL %s with 400 naming the field', async (url) => {
    const res = await tenant.api('POST', '/v1/webhooks', { url, enabled: false });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_failed');
    expect(res.body.error.details).toEqual([{ field: 'url', message: expect.stringMatching(/private, loopback, link-local or reserved/) }]);
  });

  it('refuses changing a webhook URL to the metadata service', async () => {
    const created = await tenant.api('POST', '/v1/webhooks', { url: 'https://93.184.216.34/hooks', enabled: false });
    expect(created.status).toBe(201);
    const res = await tenant.api('PATCH', `/v1/webhooks/${created.body.data.id}`, { url: 'http://169.254.169.254/latest/meta-data/' });
    expect(res.status).toBe(400);
    expect(res.body.error.details[0].field).toBe('url');
  });

  it('sends nothing to an endpoint on loopback at delivery time', async () => {
    // As if saved before the guard, or by a name that resolved publicly then.
    const { id } = await insertEndpoint(t.kosh.deps.db, endpointRow(tenant.tenantId, t.clock.now(), { url: receiver.url }));
    expect((await tenant.api('POST', '/v1/plans', { name: 'Guarded', interval_unit: 'month', amount: 100, currency: 'INR' })).status).toBe(201);
    await t.kosh.worker.drain();
    expect(receiver.count()).toBe(0);
    const [delivery] = (await tenant.api('GET', `/v1/webhooks/${id}/deliveries`)).body.data;
    expect(delivery).toMatchObject({ attempts: 1, last_status_code: null, last_error: expect.stringMatching(/^refused: .*127\.0\.0\.1/) });
  });
});
