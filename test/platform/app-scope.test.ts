import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppScope, scopeKey } from '../../src/platform/app-scope.js';
import { ApiKeyCache, forgetApiKey } from '../../src/platform/auth/api-keys.js';
import { paymentRetrier, registerPaymentRetrier } from '../../src/modules/dunning/index.js';
import { findSubscribedEndpoints } from '../../src/modules/webhooks/webhooks.repository.js';
import { allowSpeculation } from '../../src/platform/db/speculation.js';
import { enqueueMail, onMailSent, registerAttachmentRenderer, type MailSpec } from '../../src/platform/mail/index.js';
import { testGateway, testGatewayJournal } from '../../src/modules/collections/gateways/test.js';
import { startTestKosh, type TestKosh } from '../support/harness.js';

// Two apps in one process (as the tests run them): what one app registers, caches or counts is
// held by that app (platform/app-scope.ts, decision 0590), never by a module of the process.

describe('app scope', () => {
  it('creates a value once per app and hands every later get of that app the same one', () => {
    const counter = scopeKey('test.counter', () => ({ n: 0 }));
    const a = new AppScope();
    const b = new AppScope();
    a.get(counter).n += 2;
    a.get(counter).n += 1;
    b.get(counter).n += 5;
    expect([a.get(counter).n, b.get(counter).n]).toEqual([3, 5]);
  });

  it("forgets a revoked API key in the revoking app's caches only (another app hears of it from the change feed)", () => {
    const now = new Date('2026-04-01T00:00:00Z');
    const row = {
      id: 'key_1',
      tenant_id: 'ten_1',
      name: 'k',
      prefix: 'sk_test_1',
      mode: 'test' as const,
      role: 'owner' as const,
      tenant_mode: 'test' as const,
      last_used_at: null,
    };
    const scopeA = new AppScope();
    const scopeB = new AppScope();
    // No change feed: an entry is trusted for its 10 s.
    const cacheA = new ApiKeyCache(10_000, undefined, scopeA);
    const cacheB = new ApiKeyCache(10_000, undefined, scopeB);
    cacheA.remember('hash', row, now, cacheA.generation, 0);
    cacheB.remember('hash', row, now, cacheB.generation, 0);
    forgetApiKey(scopeA, 'key_1');
    expect(cacheA.get('hash', now)).toBeUndefined();
    expect(cacheB.get('hash', now)).toEqual(row);
    cacheA.close();
    cacheB.close();
  });

  it("keeps the in-memory test gateway's charges per app: one app's charge is unknown to the other's gateway", async () => {
    const scopeA = new AppScope();
    const scopeB = new AppScope();
    const now = new Date('2026-04-01T00:00:00Z');
    const call = (scope: AppScope) => ({ credentials: {}, baseUrl: 'memory:', timeoutMs: 1_000, now, scope });
    const metadata = { tenant_id: 'ten_1', invoice_id: 'inv_1', attempt_id: 'att_1' };
    const charged = await testGateway.charge(call(scopeA), {
      idempotencyKey: 'kosh_att_1',
      amount: 11_800,
      currency: 'INR',
      paymentMethod: { type: 'card', brand: 'visa', last4: '4242', reference: 'tok_visa', gatewayCustomerId: null, requiresPreDebitNotice: false },
      customer: { id: 'cus_1', email: 'priya@example.in', name: 'Priya' },
      description: 'INV-1',
      metadata,
    });
    expect(charged.status).toBe('succeeded');
    const lookup = { idempotencyKey: 'kosh_att_1', gatewayPaymentId: null, metadata };
    expect(await testGateway.lookupCharge(call(scopeA), lookup)).toEqual(charged);
    expect(await testGateway.lookupCharge(call(scopeB), lookup)).toEqual({ status: 'not_found' });
    expect(testGatewayJournal(scopeB, 'memory:').allCharges()).toEqual([]);
  });
});

describe('two apps in one process', () => {
  let a: TestKosh;
  let b: TestKosh;
  beforeAll(async () => {
    a = await startTestKosh();
    b = await startTestKosh();
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
  });

  it('each have the payment retrier their own start-up registered, and a retrier set on one is not the other’s', async () => {
    const registered = paymentRetrier(a.kosh.deps.scope);
    expect(registered).toBeTypeOf('function');
    expect(paymentRetrier(b.kosh.deps.scope)).toBe(registered);
    const replacement = async () => ({ outcome: 'skipped' as const, detail: 'test' });
    registerPaymentRetrier(a.kosh.deps.scope, replacement);
    expect(paymentRetrier(a.kosh.deps.scope)).toBe(replacement);
    expect(paymentRetrier(b.kosh.deps.scope)).toBe(registered);
  });
  it('each have the mail renderers and sent hooks their own start-up (or they) registered, and one registered on the first is unknown to the second', async () => {
    const mail = (overrides: Partial<MailSpec>): MailSpec => ({ tenantId: null, to: 'someone@example.in', subject: 'Hello', text: 'Body', ...overrides });
    const queue = (app: TestKosh, spec: MailSpec) =>
      app.kosh.deps.db.transaction().execute((tx) => enqueueMail(tx, app.clock.now(), spec, app.kosh.deps.scope));
    // The invoice PDF renderer and the invoice-sent hook: each app's own start-up registered them.
    for (const app of [a, b]) {
      await queue(app, mail({ attachments: [{ render: 'invoice.pdf', params: { invoice_id: 'x' } }], onSent: { hook: 'invoice.sent', params: {} } }));
    }
    registerAttachmentRenderer(a.kosh.deps.scope, 'test.only_a', async () => ({ filename: 'a.txt', contentType: 'text/plain', content: Buffer.from('a') }));
    onMailSent(a.kosh.deps.scope, 'test.only_a', async () => {});
    await queue(a, mail({ attachments: [{ render: 'test.only_a', params: {} }], onSent: { hook: 'test.only_a', params: {} } }));
    await expect(queue(b, mail({ attachments: [{ render: 'test.only_a', params: {} }] }))).rejects.toThrow(
      "no attachment renderer registered as 'test.only_a'",
    );
    await expect(queue(b, mail({ onSent: { hook: 'test.only_a', params: {} } }))).rejects.toThrow("no mail-sent hook registered as 'test.only_a'");
  });

  it('keep their own webhooks\' "tenant without endpoints" hint: what one app last saw never makes the other assume it', async () => {
    const tenant = await b.registerTenant();
    const created = await tenant.api('POST', '/v1/webhooks', { url: 'http://127.0.0.1:9/hooks', events: ['customer.created'] });
    expect(created.status).toBe(201);
    const subscribed = (app: TestKosh) =>
      app.kosh.deps.db.transaction().execute(async (tx) => {
        allowSpeculation(tx, app.kosh.deps.scope);
        const endpoints = await findSubscribedEndpoints(tx, tenant.tenantId, ['customer.created']);
        await tx.selectFrom('tenants').select('id').limit(1).execute(); // the deferred check (if any) is answered here
        return endpoints;
      });
    // App a has no endpoint for this tenant id (its own database): it reads none and keeps the hint.
    expect(await subscribed(a)).toEqual([]);
    expect(await subscribed(a)).toEqual([]);
    // App b never saw "none" for the tenant: it reads, and finds the endpoint.
    expect((await subscribed(b)).map((e) => e.url)).toEqual(['http://127.0.0.1:9/hooks']);
  });
});

describe('list counts of two apps in one process', () => {
  let cached: TestKosh;
  let uncached: TestKosh;
  beforeAll(async () => {
    cached = await startTestKosh();
    // Started second, with counting on every request: its setting is its own database's.
    uncached = await startTestKosh({ env: { KOSH_LIST_COUNT_CACHE_MS: '0' } });
  });
  afterAll(async () => {
    await cached?.close();
    await uncached?.close();
  });

  it("each keep their own count cache setting: counting on every request in one never turns the other's cache off", async () => {
    const totals: number[] = [];
    for (const app of [cached, uncached]) {
      const tenant = await app.registerTenant();
      const ids: string[] = [];
      for (const n of [1, 2, 3]) {
        const res = await tenant.http.POST('/v1/customers', { body: { email: `c${n}@customer.test`, name: `Customer ${n}` } });
        ids.push(res.body.data.id);
      }
      // A page after a cursor that does not reach the end takes its total from the (cached) count.
      const total = async () => (await tenant.http.GET('/v1/customers', { query: { limit: 1, starting_after: ids[2] } })).body.total_count;
      expect(await total()).toBe(3);
      // A row that leaves behind the app's back (no action, so no reset of the cache).
      await app.database.db.deleteFrom('customers').where('tenant_id', '=', tenant.tenantId).where('id', '=', ids[0]!).execute();
      totals.push(await total());
    }
    expect(totals, 'the first app still answers its cached count; the second counts again').toEqual([3, 2]);
  });
});
