import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import openapiTS, { astToString } from 'openapi-typescript';
import { startTestKosh, type TestKosh } from '../../../test/support/harness.js';
import { createKoshClient, newIdempotencyKey, type KoshClient } from '../src/index.js';

/** The typed client against a live Kosh listening on a loopback port. */
let t: TestKosh;
let baseUrl: string;
let kosh: KoshClient;
let apiKey: string;

beforeAll(async () => {
  t = await startTestKosh();
  baseUrl = await t.kosh.app.listen({ port: 0, host: '127.0.0.1' });
  const anonymous = createKoshClient({ baseUrl });
  const { data, error } = await anonymous.POST('/auth/register', { body: { name: 'Client Co', email: 'owner@client.test' } });
  if (!data) throw new Error(`registration failed: ${JSON.stringify(error)}`);
  apiKey = data.data.api_key.key;
  kosh = createKoshClient({ baseUrl, apiKey, retry: { baseDelayMs: 1 } });
});

afterAll(async () => {
  await t?.close();
});

const planBody = (code: string) => ({ name: `Plan ${code}`, code, interval_unit: 'month' as const, amount: 49900, currency: 'INR' });

describe('typescript client', () => {
  describe('generated types', () => {
    it('match the document the server serves (run `npm run generate:client` after changing a route)', async () => {
      const served = (await (await fetch(`${baseUrl}/openapi.json`)).json()) as Record<string, unknown>;
      const committed = JSON.parse(readFileSync(new URL('../openapi.json', import.meta.url), 'utf8')) as Record<string, unknown>;
      const { servers: _served, ...live } = served;
      const { servers: _committed, ...stored } = committed;
      expect(stored, 'clients/typescript/openapi.json is stale: npm run generate:client').toEqual(live);
      const types = astToString(await openapiTS(served as never));
      const file = readFileSync(new URL('../src/schema.d.ts', import.meta.url), 'utf8');
      expect(file.replace(/^\/\*\*[\s\S]*?\*\/\s*/, ''), 'clients/typescript/src/schema.d.ts is stale: npm run generate:client').toBe(types);
    });
  });

  describe('usage', () => {
    it('creates a billable metric and records a batch of usage events, typed', async () => {
      const metric = await kosh.POST('/v1/billable-metrics', { body: { code: 'typed-calls', name: 'Calls', aggregation: 'count' } });
      expect(metric.response.status).toBe(201);
      expect(metric.data!.data.aggregation).toBe('count');
      const batch = await kosh.POST('/v1/usage/events/batch', {
        body: { events: [{ transaction_id: 'typed-1', customer_id: '00000000-0000-4000-8000-000000000000', metric_code: 'typed-calls' }] },
      });
      expect(batch.response.status).toBe(202);
      expect(batch.data!.data).toMatchObject({ accepted: 0, duplicates: 0, rejected: [{ index: 0 }] });
    });
  });

  describe('test clocks', () => {
    it('creates a test clock and a customer on it, typed', async () => {
      const clock = await kosh.POST('/v1/test-clocks', { body: { frozen_time: '2026-01-01T00:00:00Z', name: 'typed' } });
      expect(clock.response.status).toBe(201);
      expect(clock.data!.data).toMatchObject({ status: 'ready', frozen_time: '2026-01-01T00:00:00.000Z', customer_count: 0 });
      const customer = await kosh.POST('/v1/customers', { body: { email: 'typed-clock@example.in', test_clock_id: clock.data!.data.id } });
      expect(customer.data!.data.test_clock_id).toBe(clock.data!.data.id);
      const read = await kosh.GET('/v1/test-clocks/{id}', { params: { path: { id: clock.data!.data.id } } });
      expect(read.data?.data.customer_count).toBe(1);
    });
  });

  describe('retention offers', () => {
    it('offers a coupon for cancellation reasons, typed', async () => {
      const coupon = await kosh.POST('/v1/coupons', { body: { code: 'TYPED-STAY', percent_off: 20, duration: 'repeating', duration_in_months: 3 } });
      expect(coupon.response.status).toBe(201);
      const offer = await kosh.POST('/v1/retention-offers', { body: { coupon: 'TYPED-STAY', reasons: ['too_expensive'] } });
      expect(offer.response.status).toBe(201);
      expect(offer.data!.data).toMatchObject({ coupon_code: 'TYPED-STAY', reasons: ['too_expensive'], active: true });
      const off = await kosh.PATCH('/v1/retention-offers/{id}', { params: { path: { id: offer.data!.data.id } }, body: { active: false } });
      expect(off.data?.data.active).toBe(false);
    });
  });

  describe('plans', () => {
    it('creates a plan and reads it back, typed', async () => {
      const created = await kosh.POST('/v1/plans', { body: planBody('typed-1') });
      expect(created.response.status).toBe(201);
      const plan = created.data!.data;
      expect(plan.prices[0]).toMatchObject({ amount: 49900, currency: 'INR' });
      const read = await kosh.GET('/v1/plans/{id}', { params: { path: { id: plan.id } } });
      expect(read.data?.data.code).toBe('typed-1');
    });

    it('answers the Error envelope, with the request id, for a missing plan', async () => {
      const missing = await kosh.GET('/v1/plans/{id}', { params: { path: { id: '00000000-0000-4000-8000-000000000000' } } });
      expect(missing.response.status).toBe(404);
      expect(missing.error?.error).toMatchObject({ code: 'not_found', request_id: missing.response.headers.get('x-request-id') });
    });

    it('pages a list with page and with cursors', async () => {
      for (const code of ['page-a', 'page-b', 'page-c']) await kosh.POST('/v1/plans', { body: planBody(code) });
      const first = await kosh.GET('/v1/plans', { params: { query: { limit: 2, q: 'page-' } } });
      expect(first.data).toMatchObject({ object: 'list', has_more: true, total_count: 3 });
      expect(first.data!.data.map((p) => p.code)).toEqual(['page-c', 'page-b']);
      const after = await kosh.GET('/v1/plans', { params: { query: { limit: 2, q: 'page-', starting_after: first.data!.data[1]!.id } } });
      expect(after.data!.data.map((p) => p.code)).toEqual(['page-a']);
      expect(after.data!.has_more).toBe(false);
      const before = await kosh.GET('/v1/plans', { params: { query: { limit: 1, q: 'page-', ending_before: after.data!.data[0]!.id } } });
      expect(before.data!.data.map((p) => p.code)).toEqual(['page-b']);
      expect(before.data!.has_more).toBe(true);
    });
  });

  describe('idempotency and retries', () => {
    it('replays an action sent twice with the same Idempotency-Key', async () => {
      const key = newIdempotencyKey();
      const first = await kosh.POST('/v1/plans', { body: planBody('idem-1'), headers: { 'idempotency-key': key } });
      const again = await kosh.POST('/v1/plans', { body: planBody('idem-1'), headers: { 'idempotency-key': key } });
      expect(again.response.status).toBe(201);
      expect(again.response.headers.get('idempotent-replayed')).toBe('true');
      expect(again.data!.data.id).toBe(first.data!.data.id);
    });

    describe('through a gateway that fails the first attempt', () => {
      let gateway: Server;
      let gatewayUrl: string;
      const seenKeys: string[] = [];
      beforeAll(async () => {
        let calls = 0;
        gateway = createServer(async (req, res) => {
          calls += 1;
          seenKeys.push(String(req.headers['idempotency-key'] ?? ''));
          const chunks: Buffer[] = [];
          for await (const chunk of req) chunks.push(chunk as Buffer);
          const upstream = await fetch(`${baseUrl}${req.url}`, {
            method: req.method,
            headers: Object.fromEntries(
              Object.entries(req.headers).filter(([k]) => !['host', 'connection', 'content-length'].includes(k)) as [string, string][],
            ),
            body: chunks.length ? Buffer.concat(chunks) : undefined,
          });
          const text = await upstream.text();
          // The first call reaches Kosh, but its answer is lost: the client sees a 503.
          if (calls === 1) res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":{"code":"internal_error","message":"gateway"}}');
          else
            res
              .writeHead(upstream.status, { 'content-type': 'application/json', 'idempotent-replayed': upstream.headers.get('idempotent-replayed') ?? 'false' })
              .end(text);
        });
        await new Promise<void>((resolve) => gateway.listen(0, '127.0.0.1', resolve));
        const address = gateway.address();
        gatewayUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
      });
      afterAll(() => new Promise<void>((resolve) => gateway.close(() => resolve())));

      it('retries with the same generated key, so the plan is created once', async () => {
        const viaGateway = createKoshClient({ baseUrl: gatewayUrl, apiKey, retry: { baseDelayMs: 1 } });
        const created = await viaGateway.POST('/v1/plans', { body: planBody('retried-1') });
        expect(created.response.status).toBe(201);
        expect(created.response.headers.get('idempotent-replayed')).toBe('true');
        expect(seenKeys).toHaveLength(2);
        expect(seenKeys[0]).toMatch(/^[0-9a-f-]{36}$/);
        expect(seenKeys[1]).toBe(seenKeys[0]);
        const listed = await kosh.GET('/v1/plans', { params: { query: { q: 'retried-1' } } });
        expect(listed.data?.total_count).toBe(1);
      });
    });
  });
});
