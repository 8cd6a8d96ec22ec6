import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKosh, type Tenant, type TestKosh, withoutRequestId } from '../../../test/support/harness.js';

let t: TestKosh;
let acme: Tenant;
let other: Tenant;

beforeAll(async () => {
  t = await startTestKosh();
  acme = await t.registerTenant();
  other = await t.registerTenant();
});
afterAll(() => t.close());

const MISSING = '00000000-0000-7000-8000-000000000000';
const url = 'http://127.0.0.1:9/hooks'; // discard port: nothing here is ever delivered (no drain)

describe('webhook endpoints', () => {
  describe('create', () => {
    it('answers 201 with the endpoint and its secret; events default to every type', async () => {
      const res = await acme.http.POST('/v1/webhooks', { body: { url, description: 'billing sync' } });
      expect(res.status).toBe(201);
      expect(res.body.data).toEqual({
        id: expect.any(String),
        tenant_id: acme.tenantId,
        url,
        events: ['*'],
        description: 'billing sync',
        enabled: true,
        secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
        previous_secret_expires_at: null,
        created_at: t.clock.now().toISOString(),
        updated_at: t.clock.now().toISOString(),
      });
    });

    it("keeps a filter's documented types, without duplicates; '*' anywhere means every type", async () => {
      const some = await acme.http.POST('/v1/webhooks', { body: { url, events: ['invoice.paid', 'plan.created', 'invoice.paid'] } });
      expect(some.body.data.events).toEqual(['invoice.paid', 'plan.created']);
      const all = await acme.http.POST('/v1/webhooks', { body: { url, events: ['plan.created', '*'] } });
      expect(all.body.data.events).toEqual(['*']);
    });

    it.each([
      ['a missing url', {}, 'url'],
      ['a url that is not a URL', { url: 'not a url' }, 'url'],
      ['a relative url', { url: '/hooks' }, 'url'],
      ['an ftp url', { url: 'ftp://example.com/hooks' }, 'url'],
      ['a javascript url', { url: 'javascript:alert(1)' }, 'url'],
      ['credentials in the url', { url: 'https://user:pw@example.com/hooks' }, 'url'],
      ['an over-long url', { url: `https://example.com/${'a'.repeat(2048)}` }, 'url'],
      ['an unknown event type', { url, events: ['invoice.exploded'] }, 'events.0'],
      ['a wildcard pattern', { url, events: ['invoice.*'] }, 'events.0'],
      ['an empty filter', { url, events: [] }, 'events'],
      ['events not an array', { url, events: 'plan.created' }, 'events'],
      ['an over-long description', { url, description: 'x'.repeat(501) }, 'description'],
      ['enabled not a boolean', { url, enabled: 'yes' }, 'enabled'],
    ])('refuses %s with 400 naming the field', async (_label, body, field) => {
      const res = await acme.api('POST', '/v1/webhooks', body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('validation_failed');
      expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
    });

    it('allows http and loopback addresses in test mode', async () => {
      for (const u of ['http://localhost:3000/x', 'http://[::1]:3000/x', 'http://10.0.0.5/x']) {
        expect((await other.http.POST('/v1/webhooks', { body: { url: u, enabled: false } })).status).toBe(201);
      }
    });

    it('replays the same answer for a repeated Idempotency-Key', async () => {
      const headers = { 'idempotency-key': 'wh-create-1' };
      const first = await acme.http.POST('/v1/webhooks', { body: { url }, headers });
      const again = await acme.http.POST('/v1/webhooks', { body: { url }, headers });
      expect(again.status).toBe(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body).toEqual(first.body);
    });

    it('refuses a 21st endpoint with 409', async () => {
      const crowded = await t.registerTenant();
      for (let i = 0; i < 20; i++) expect((await crowded.http.POST('/v1/webhooks', { body: { url } })).status).toBe(201);
      const res = await crowded.http.POST('/v1/webhooks', { body: { url } });
      expect(res.status).toBe(409);
      expect(res.error!.reason).toBe('webhook_endpoint_limit');
    });
  });

  describe('get and list', () => {
    it('never shows the secret again', async () => {
      const created = await acme.http.POST('/v1/webhooks', { body: { url } });
      const shown = await acme.http.GET('/v1/webhooks/{id}', { path: { id: created.body.data.id } });
      expect(shown.status).toBe(200);
      const { secret, ...rest } = created.body.data;
      expect(shown.body.data).toEqual(rest);
      const listed = await acme.http.GET('/v1/webhooks', { query: { limit: 1000 } });
      expect(listed.text).not.toContain(secret.slice(6));
      expect(listed.body.data.every((e: object) => !('secret' in e))).toBe(true);
    });

    it('lists newest first with paging', async () => {
      const tenant = await t.registerTenant();
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        ids.push((await tenant.http.POST('/v1/webhooks', { body: { url: `${url}/${i}` } })).body.data.id);
        t.clock.advance(1000);
      }
      const first = await tenant.http.GET('/v1/webhooks', { query: { limit: 2 } });
      expect(first.body).toMatchObject({ object: 'list', has_more: true, total_count: 3 });
      expect(first.body.data.map((e: { id: string }) => e.id)).toEqual([ids[2], ids[1]]);
      const second = await tenant.http.GET('/v1/webhooks', { query: { limit: 2, page: 2 } });
      expect(second.body.data.map((e: { id: string }) => e.id)).toEqual([ids[0]]);
      expect(second.body.has_more).toBe(false);
    });

    it.each(['limit=0', 'limit=abc', 'page=0'])('refuses %s with 400', async (q) => {
      expect((await acme.api('GET', `/v1/webhooks?${q}`)).status).toBe(400);
    });
  });

  describe('update', () => {
    it('changes url, events, description and enabled; an empty body changes nothing', async () => {
      const created = (await acme.http.POST('/v1/webhooks', { body: { url, description: 'x' } })).body.data;
      t.clock.advance(1000);
      const res = await acme.http.PATCH('/v1/webhooks/{id}', {
        path: { id: created.id },
        body: { url: `${url}/v2`, events: ['invoice.paid'], description: null, enabled: false },
      });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({
        url: `${url}/v2`,
        events: ['invoice.paid'],
        description: null,
        enabled: false,
        updated_at: t.clock.now().toISOString(),
      });
      expect(res.body.data).not.toHaveProperty('secret');
      const same = await acme.http.PATCH('/v1/webhooks/{id}', { path: { id: created.id }, body: {} });
      expect(same.status).toBe(200);
      expect(same.body.data).toMatchObject({ url: `${url}/v2`, enabled: false });
    });

    it.each([
      ['a bad url', { url: 'nope' }, 'url'],
      ['an unknown event type', { events: ['plan.deleted'] }, 'events.0'],
      ['enabled as a string', { enabled: 'false' }, 'enabled'],
    ])('refuses %s with 400', async (_label, body, field) => {
      const created = (await acme.http.POST('/v1/webhooks', { body: { url } })).body.data;
      const res = await acme.api('PATCH', `/v1/webhooks/${created.id}`, body);
      expect(res.status).toBe(400);
      expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
    });
  });

  describe('delete', () => {
    it('removes the endpoint from the API: 404 afterwards, also for its deliveries', async () => {
      const created = (await acme.http.POST('/v1/webhooks', { body: { url } })).body.data;
      const res = await acme.http.DELETE('/v1/webhooks/{id}', { path: { id: created.id } });
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual({ id: created.id, deleted: true });
      expect((await acme.http.GET('/v1/webhooks/{id}', { path: { id: created.id } })).status).toBe(404);
      expect((await acme.http.DELETE('/v1/webhooks/{id}', { path: { id: created.id } })).status).toBe(404);
      expect((await acme.http.GET('/v1/webhooks/{id}/deliveries', { path: { id: created.id } })).status).toBe(404);
      const listed = await acme.http.GET('/v1/webhooks', { query: { limit: 1000 } });
      expect(listed.body.data.map((e: { id: string }) => e.id)).not.toContain(created.id);
    });
  });

  describe('deliveries log', () => {
    it.each(['status=done', 'limit=0', 'limit=-1', 'offset=-1', 'offset=x', 'page=0'])('refuses %s with 400', async (q) => {
      const created = (await acme.http.POST('/v1/webhooks', { body: { url } })).body.data;
      const res = await acme.api('GET', `/v1/webhooks/${created.id}/deliveries?${q}`);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('validation_failed');
    });

    it('caps limit at 500 rather than refusing a larger one', async () => {
      const created = (await acme.http.POST('/v1/webhooks', { body: { url } })).body.data;
      const res = await acme.http.GET('/v1/webhooks/{id}/deliveries', { path: { id: created.id }, query: { limit: 100000, offset: 0 } });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ data: [], object: 'list', has_more: false, total_count: 0 });
    });
  });

  describe('tenancy', () => {
    let theirs: { id: string };
    let theirEvent: string;
    beforeAll(async () => {
      theirs = (await other.http.POST('/v1/webhooks', { body: { url, enabled: false } })).body.data;
      await other.http.POST('/v1/plans', { body: { name: 'Theirs', interval_unit: 'month', amount: 100, currency: 'INR' } });
      theirEvent = (await other.http.GET('/v1/events', { query: { limit: 1 } })).body.data[0]!.id;
    });

    const calls: Array<[string, string, (id: string) => string, unknown?]> = [
      ['GET', 'webhook', (id) => `/v1/webhooks/${id}`],
      ['PATCH', 'webhook', (id) => `/v1/webhooks/${id}`, { enabled: true }],
      ['DELETE', 'webhook', (id) => `/v1/webhooks/${id}`],
      ['POST', 'webhook', (id) => `/v1/webhooks/${id}/rotate-secret`],
      ['GET', 'webhook', (id) => `/v1/webhooks/${id}/deliveries`],
      ['GET', 'event', (id) => `/v1/events/${id}`],
      ['GET', 'event', (id) => `/v1/events/${id}/deliveries`],
      ['POST', 'event', (id) => `/v1/events/${id}/redeliver`],
    ];

    it.each(calls)("%s %s: another tenant's id answers exactly like a missing one (404)", async (method, kind, path, body) => {
      const foreign = kind === 'webhook' ? theirs.id : theirEvent;
      const mine = await acme.api(method as 'GET', path(foreign), body);
      const missing = await acme.api(method as 'GET', path(MISSING), body);
      expect(mine.status).toBe(404);
      expect(withoutRequestId(mine.text)).toBe(withoutRequestId(missing.text));
      expect(mine.body.error.code).toBe('not_found');
    });

    it.each(calls)('%s %s: a malformed id is a 400', async (method, _kind, path, body) => {
      const res = await acme.api(method as 'GET', path('not-a-uuid'), body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('validation_failed');
    });

    it("left the other tenant's endpoint untouched", async () => {
      const res = await other.http.GET('/v1/webhooks/{id}', { path: { id: theirs.id } });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ enabled: false, previous_secret_expires_at: null });
    });

    it('needs an API key', async () => {
      expect((await t.api('GET', '/v1/webhooks')).status).toBe(401);
      expect((await t.api('POST', '/v1/webhooks', { url })).status).toBe(401);
    });
  });
});

describe('deliveries of a tenant that had no endpoint', () => {
  it('queues a delivery for an endpoint added since the last event (the "still none" assumption is checked)', async () => {
    const fresh = await t.registerTenant();
    const plan = (code: string) => ({ name: code, code, interval_unit: 'month' as const, amount: 100, currency: 'INR' });
    // No endpoint yet: the first plan's event finds none, and the process remembers it.
    expect((await fresh.http.POST('/v1/plans', { body: plan('no-endpoint-1') })).status).toBe(201);
    expect((await fresh.http.POST('/v1/plans', { body: plan('no-endpoint-2') })).status).toBe(201);
    // An endpoint appears; this process's memory of "none" is not told (as if another process added it).
    const endpoint = await fresh.http.POST('/v1/webhooks', { body: { url, events: ['plan.created'] } });
    expect(endpoint.status).toBe(201);
    const created = await fresh.http.POST('/v1/plans', { body: plan('with-endpoint') });
    expect(created.status).toBe(201);
    const deliveries = await fresh.http.GET('/v1/webhooks/{id}/deliveries', { path: { id: endpoint.body.data.id } });
    expect(deliveries.body.data).toHaveLength(1);
    const event = await fresh.http.GET('/v1/events/{id}', { path: { id: deliveries.body.data[0]!.event_id } });
    expect(event.body.data.data.object.code).toBe('with-endpoint');
    expect((await fresh.http.GET('/v1/plans', { query: { q: 'with-endpoint' } })).body.total_count).toBe(1);
  });
});
