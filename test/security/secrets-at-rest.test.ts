import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCustomer, createInvoice } from '../support/billing.js';
import { startTestKosh, type Tenant, type TestKosh } from '../support/harness.js';
import { startWebhookReceiver } from '../support/webhook-receiver.js';
import { endpointRow } from '../support/webhooks.js';
import { insertEndpoint } from '../../src/modules/webhooks/webhooks.repository.js';

/**
 * Secrets shown once stay out of the database in plain text (DESIGN §21, issue #29 item 9): a
 * stored idempotent replay of a webhook signing secret or an organization's join code is sealed;
 * a checkout link's token is kept as its SHA-256 only.
 */
let t: TestKosh;
let acme: Tenant;

beforeAll(async () => {
  t = await startTestKosh();
  acme = await t.registerTenant({ name: 'Acme Secrets' });
});
afterAll(() => t?.close());

async function storedReplay(key: string): Promise<string> {
  const row = await t.database.db
    .selectFrom('idempotency_keys')
    .select('response')
    .where('tenant_id', '=', acme.tenantId)
    .where('key', '=', key)
    .executeTakeFirstOrThrow();
  return JSON.stringify(row.response);
}

describe('stored idempotent replays of secrets shown once', () => {
  it.each([
    ['a webhook signing secret', 'POST', '/v1/webhooks', { url: 'https://hooks.acme.example/kosh', enabled: false }, (d: Record<string, string>) => d.secret],
    ['a rotated webhook signing secret', 'POST', 'rotate', undefined, (d: Record<string, string>) => d.secret],
    ["an organization's join code", 'POST', '/v1/organizations', { name: 'Acme Group', reporting_currency: 'INR' }, (d: Record<string, string>) => d.join_code],
  ] as const)('are sealed: %s (the replay still shows it)', async (label, method, path, body, secretOf) => {
    let url: string = path;
    if (path === 'rotate') {
      const created = await acme.api('POST', '/v1/webhooks', { url: 'https://hooks.acme.example/rotate', enabled: false });
      url = `/v1/webhooks/${created.body.data.id}/rotate-secret`;
    }
    const key = `seal-${label.replace(/\W+/g, '-')}`;
    const first = await acme.api(method, url, body, { 'idempotency-key': key });
    expect(first.status, first.text).toBeLessThan(300);
    const secret = secretOf(first.body.data);
    expect(secret).toEqual(expect.any(String));
    const stored = await storedReplay(key);
    expect(stored).not.toContain(secret);
    expect(stored).toMatch(/"\$sealed":"v1\./);
    const again = await acme.api(method, url, body, { 'idempotency-key': key });
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
  });
});

describe('checkout links', () => {
  it('keep only the SHA-256 of their token, and the link still opens (a wrong token does not)', async () => {
    const invoice = await createInvoice(acme, await createCustomer(acme), [5_000]);
    const res = await acme.api('POST', `/v1/invoices/${invoice.id}/checkout-sessions`);
    expect(res.status, res.text).toBe(201);
    const url = new URL(res.body.data.url);
    const token = url.searchParams.get('token')!;
    const row = await t.database.db
      .selectFrom('checkout_sessions')
      .selectAll()
      .where('tenant_id', '=', acme.tenantId)
      .where('id', '=', res.body.data.id)
      .executeTakeFirstOrThrow();
    expect(row.token).toBeNull();
    expect(row.token_hash).toBe(createHash('sha256').update(token).digest('hex'));
    expect(JSON.stringify(row)).not.toContain(token);
    const page = await t.call({ method: 'GET', url: url.pathname + url.search });
    expect(page.status).toBe(200);
    expect(page.text).toContain(`?token=${token}`);
    const wrong = await t.call({ method: 'GET', url: `${url.pathname}?token=${token.slice(1)}x` });
    expect(wrong.status).toBe(404);
  });
});

describe('webhook signing secrets', () => {
  it('are stored sealed, and deliveries are still signed with them (and with a secret stored before sealing)', async () => {
    const receiver = await startWebhookReceiver({ now: () => t.clock.now() });
    const tenant = await t.registerTenant({ name: 'Sealed Hooks' });
    try {
      const created = await tenant.api('POST', '/v1/webhooks', { url: receiver.url, events: ['plan.created'] });
      expect(created.status, created.text).toBe(201);
      const rotated = await tenant.api('POST', `/v1/webhooks/${created.body.data.id}/rotate-secret`);
      const secret = rotated.body.data.secret as string;
      const row = await t.database.db
        .selectFrom('webhook_endpoints')
        .select(['secret', 'previous_secret'])
        .where('tenant_id', '=', tenant.tenantId)
        .where('id', '=', created.body.data.id)
        .executeTakeFirstOrThrow();
      expect(row.secret).toMatch(/^v1\./);
      expect(row.previous_secret).toMatch(/^v1\./);
      expect(JSON.stringify(row)).not.toContain(secret.slice(6));
      expect(JSON.stringify(row)).not.toContain(created.body.data.secret.slice(6));
      // One endpoint saved before sealing, its secret in plain text.
      const legacy = endpointRow(tenant.tenantId, t.clock.now(), { url: receiver.url, events: ['plan.created'] });
      await insertEndpoint(t.database.db, legacy);
      receiver.setSecrets([secret, legacy.secret]);
      expect((await tenant.api('POST', '/v1/plans', { name: 'Sealed', interval_unit: 'month', amount: 100, currency: 'INR' })).status).toBe(201);
      await t.kosh.worker.drain();
      expect(receiver.count()).toBe(2);
      expect(receiver.verifiedCount()).toBe(2);
    } finally {
      await receiver.close();
    }
  });
});
