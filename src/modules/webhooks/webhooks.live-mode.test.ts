import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKosh, type Tenant, type TestKosh } from '../../../test/support/harness.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../../test/support/webhook-receiver.js';
import { endpointRow } from '../../../test/support/webhooks.js';
import { insertEndpoint } from './webhooks.repository.js';

/**
 * Live mode refuses webhook URLs that could reach inside the network (SSRF). Only literal
 * addresses and `localhost` (answered by the hosts file) are used: no DNS query leaves the machine.
 */
let t: TestKosh;
let tenant: Tenant;
let receiver: WebhookReceiver;

beforeAll(async () => {
  t = await startTestKosh({ env: { KOSH_MODE: 'live', KOSH_REGISTRATION: 'open' } });
  tenant = await t.registerTenant();
  receiver = await startWebhookReceiver({ now: () => t.clock.now() });
});
afterAll(async () => {
  await receiver.close();
  await t.close();
});

describe('webhook endpoints in live mode', () => {
  it('uses a live key', () => {
    expect(tenant.key).toMatch(/^sk_live_/);
  });

  it.each([
    ['plain http', 'http://127.0.0.1:8080/hooks', /https/],
    ['http to a public address', 'http://93.184.216.34/hooks', /https/],
    ['loopback', 'https://127.0.0.1/hooks', /private|loopback/],
    ['loopback, another form', 'https://127.1.2.3/hooks', /private|loopback/],
    ['loopback written as a number', 'https://2130706433/hooks', /private|loopback/],
    ['private 10/8', 'https://10.0.0.5/hooks', /private/],
    ['private 172.16/12', 'https://172.20.1.1/hooks', /private/],
    ['private 192.168/16', 'https://192.168.1.10/hooks', /private/],
    ['CGNAT 100.64/10', 'https://100.64.0.1/hooks', /private/],
    ['link-local metadata service', 'https://169.254.169.254/latest/meta-data', /link-local/],
    ['unspecified', 'https://0.0.0.0/hooks', /private/],
    ['IPv6 loopback', 'https://[::1]/hooks', /private|loopback/],
    ['IPv4-mapped IPv6 loopback', 'https://[::ffff:127.0.0.1]/hooks', /private|loopback/],
    ['IPv6 unique local (AWS metadata)', 'https://[fd00:ec2::254]/hooks', /private/],
    ['IPv6 link-local', 'https://[fe80::1]/hooks', /link-local/],
    ['NAT64 of a private address', 'https://[64:ff9b::a00:5]/hooks', /private/],
    ['localhost by name', 'https://localhost/hooks', /resolves to/],
  ])('refuses %s with 400 naming the url field', async (_label, url, message) => {
    const res = await tenant.http.POST('/v1/webhooks', { body: { url } });
    expect(res.status).toBe(400);
    expect(res.error!.code).toBe('validation_failed');
    expect(res.error!.details).toEqual([{ field: 'url', message: expect.stringMatching(message) }]);
  });

  it('accepts a public https address, and refuses changing it to a private one', async () => {
    // Disabled, so no test ever sends anything to it.
    const res = await tenant.http.POST('/v1/webhooks', { body: { url: 'https://93.184.216.34/hooks', enabled: false } });
    expect(res.status).toBe(201);
    const patched = await tenant.http.PATCH('/v1/webhooks/{id}', { path: { id: res.body.data.id }, body: { url: 'https://10.1.2.3/hooks' } });
    expect(patched.status).toBe(400);
    expect(patched.error!.details![0]!.field).toBe('url');
    expect((await tenant.http.GET('/v1/webhooks/{id}', { path: { id: res.body.data.id } })).body.data.url).toBe('https://93.184.216.34/hooks');
  });

  it('checks again at delivery time and sends nothing to an address that became private', async () => {
    // As if the endpoint had been registered while its name still resolved to a public address.
    const { id: endpointId } = await insertEndpoint(
      t.kosh.deps.db,
      endpointRow(tenant.tenantId, t.clock.now(), { url: receiver.url.replace('http://', 'https://') }),
    );
    const plan = await tenant.http.POST('/v1/plans', { body: { name: 'Live', interval_unit: 'month', amount: 100, currency: 'INR' } });
    expect(plan.status).toBe(201);
    await t.kosh.worker.drain();
    expect(receiver.count()).toBe(0);
    const [delivery] = (await tenant.http.GET('/v1/webhooks/{id}/deliveries', { path: { id: endpointId } })).body.data;
    expect(delivery).toMatchObject({ status: 'pending', attempts: 1, last_status_code: null });
    expect(delivery!.last_error).toMatch(/^refused: .*127\.0\.0\.1/);
  });
});
