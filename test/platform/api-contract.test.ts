import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { EVENT_TYPES } from '../../src/modules/events/index.js';
import { errors } from '../../src/platform/errors.js';
import { createHttpServer, readCtx, type UndocumentedAnswer } from '../../src/platform/http/server.js';
import { dataEnvelope, idParams } from '../../src/platform/http/envelope.js';
import { startLoggedKosh } from '../support/log-capture.js';
import { startTestKosh, undocumentedStatusMessage, type Tenant, type TestKosh } from '../support/harness.js';

/**
 * The edges of the contract a client generator, an SDK or a developer copying from /docs lives at:
 * documented statuses checked on every answer, wrong methods, the static paths beside `/:id`,
 * Idempotency-Key on every write, and refusals in plain words.
 */
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

let t: TestKosh;
let acme: Tenant;

beforeAll(async () => {
  t = await startTestKosh();
  acme = await t.registerTenant();
});

afterAll(async () => {
  await t?.close();
});

describe('documented statuses', () => {
  it('reports an answer whose status the route does not list, naming the route, the status and what to declare', async () => {
    // A route added later by someone else: it raises 409 but declares nothing.
    const reported: UndocumentedAnswer[] = [];
    const widgets = await createHttpServer(
      t.kosh.deps,
      (app) => {
        app.get(
          '/v1/widgets/:id',
          { schema: { tags: ['widgets'], summary: 'Get a widget', params: idParams, response: { 200: dataEnvelope(z.object({ id: z.uuid() })) } } },
          async (request) => {
            readCtx(t.kosh.deps, request);
            throw errors.conflict('the widget is busy', 'invalid_state');
          },
        );
        app.post(
          '/v1/widgets/:id/spin',
          {
            schema: {
              errors: ['conflict', 'unavailable'],
              tags: ['widgets'],
              summary: 'Spin a widget',
              params: idParams,
              response: { 200: dataEnvelope(z.object({ id: z.uuid() })) },
            },
          },
          async () => {
            throw errors.unavailable('no spinner here', 'provider_not_configured');
          },
        );
      },
      { access: () => 'viewer', onUndocumentedStatus: (answer) => reported.push(answer) },
    );
    try {
      await widgets.ready();
      const auth = { authorization: `Bearer ${acme.key}` };
      const busy = await widgets.inject({ method: 'GET', url: `/v1/widgets/${randomUUID()}`, headers: auth });
      expect(busy.statusCode).toBe(409);
      const spun = await widgets.inject({ method: 'POST', url: `/v1/widgets/${randomUUID()}/spin`, headers: auth });
      expect(spun.statusCode).toBe(503); // declared: not reported
      const unknownKey = await widgets.inject({ method: 'GET', url: `/v1/widgets/${randomUUID()}` });
      expect(unknownKey.statusCode).toBe(401); // the framework's: listed on every /v1 route

      expect(reported).toEqual([
        {
          method: 'GET',
          path: '/v1/widgets/{id}',
          status: 409,
          listed: [200, 400, 401, 403, 404, 429, 503].filter((s) => s !== 429 || reported[0]?.listed.includes(429)),
          code: 'conflict',
          reason: 'invalid_state',
          message: 'the widget is busy',
          request_id: expect.any(String),
        },
      ]);
      const message = undocumentedStatusMessage(reported);
      expect(message).toContain('GET /v1/widgets/{id} answered 409 (conflict/invalid_state: the widget is busy)');
      expect(message).toContain("errors: ['not_found']");
      expect(message).toContain('CONTRIBUTING.md');
    } finally {
      await widgets.close();
    }
  });
});

describe('wrong methods', () => {
  it('answers 405 with Allow, in the envelope', async () => {
    const res = await acme.api('PUT', '/v1/plans');
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('POST, GET, HEAD');
    expect(res.body).toEqual({
      error: {
        request_id: expect.any(String),
        code: 'validation_failed',
        reason: 'method_not_allowed',
        message: 'PUT is not allowed on /v1/plans; it answers POST, GET, HEAD',
      },
    });
    const one = await acme.api('POST', `/v1/plans/${randomUUID()}`);
    expect(one.status).toBe(405);
    expect(one.headers.allow).toBe('GET, PATCH, HEAD');
  });

  it('still answers 404 for a path nothing serves, and 401 before either without a key', async () => {
    expect((await acme.api('GET', '/v1/nothing-here')).status).toBe(404);
    expect((await t.api('PUT', '/v1/plans')).status).toBe(401);
  });
});

describe('static paths beside /:id', () => {
  it('lists offline payments at GET /v1/payments/offline', async () => {
    const customer = (await acme.api('POST', '/v1/customers', { name: 'Ravi Traders', email: 'ravi@example.in' })).body.data;
    const recorded = await acme.api('POST', '/v1/payments/offline', {
      customer_id: customer.id,
      amount: 118000,
      currency: 'INR',
      payment_type: 'bank_transfer',
      reference_number: 'NEFT-0001',
    });
    expect(recorded.status).toBe(201);
    const list = await acme.api('GET', '/v1/payments/offline');
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ object: 'list', total_count: 1, has_more: false });
    expect(list.body.data.map((p: Json) => [p.id, p.amount, p.channel])).toEqual([[recorded.body.data.id, 118000, 'offline']]);
    // And /:id still reads one.
    expect((await acme.api('GET', `/v1/payments/${recorded.body.data.id}`)).body.data.id).toBe(recorded.body.data.id);
  });

  it('serves the event-type catalog at GET /v1/events/types', async () => {
    const res = await acme.api('GET', '/v1/events/types');
    expect(res.status).toBe(200);
    expect(res.body.data.map((e: Json) => e.type)).toEqual([...EVENT_TYPES]);
    expect(res.body.data.find((e: Json) => e.type === 'invoice.finalized')).toEqual({ type: 'invoice.finalized', object: 'invoice' });
  });
});

describe('Idempotency-Key', () => {
  it('is refused when malformed on every /v1 write, also on those that store nothing', async () => {
    const doc = (await t.api('GET', '/openapi.json')).body as Json;
    const accepted: string[] = [];
    for (const [path, item] of Object.entries(doc.paths as Record<string, Json>)) {
      if (!path.startsWith('/v1/')) continue;
      for (const [method, op] of Object.entries(item) as [string, Json][]) {
        if (method === 'get' || (Array.isArray(op.security) && op.security.length === 0)) continue;
        const url = path.replace(/\{[^}]+\}/g, () => randomUUID());
        const res = await acme.api(method.toUpperCase() as 'POST', url, undefined, { 'idempotency-key': 'has spaces' });
        if (res.status !== 400 || res.body?.error?.details?.[0]?.field !== 'header.idempotency-key')
          accepted.push(`${method.toUpperCase()} ${path}: ${res.status}`);
      }
    }
    expect(accepted).toEqual([]);
  });

  it('answers 422 for the same key with another body (DESIGN §5), as documented', async () => {
    const key = randomUUID();
    const first = await acme.api('POST', '/v1/customers', { name: 'Asha Foods', email: 'asha@example.in' }, { 'idempotency-key': key });
    expect(first.status).toBe(201);
    const other = await acme.api('POST', '/v1/customers', { name: 'Another', email: 'another@example.in' }, { 'idempotency-key': key });
    expect(other.status).toBe(422);
    expect(other.body.error.reason).toBe('idempotency_key_reused');
  });
});

describe('schemas as tight as the server', () => {
  it('refuses a month or currency the document refuses', async () => {
    const month = await acme.api('GET', '/v1/analytics/mrr?from=2026-13');
    expect(month.status).toBe(400);
    expect(month.body.error.message).toBe('from must be a month YYYY-MM (or a date YYYY-MM-DD)');
    const currency = await acme.api('GET', '/v1/analytics/mrr?currency=rupees');
    expect(currency.status).toBe(400);
    expect((await acme.api('GET', '/v1/analytics/mrr?from=2026-03&currency=inr')).status).toBe(200);
  });

  it('refuses both cursors at once', async () => {
    const res = await acme.api('GET', `/v1/plans?starting_after=${randomUUID()}&ending_before=${randomUUID()}`);
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain('give starting_after or ending_before, not both');
  });
});

describe('refusals in plain words', () => {
  it('says what a __proto__ key is', async () => {
    const res = await acme.testKosh.call({
      method: 'POST',
      url: '/v1/customers',
      headers: { authorization: `Bearer ${acme.key}`, 'content-type': 'application/json' },
      payload: '{"name":"x","__proto__":{"admin":true}}',
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'validation_failed', reason: 'prototype_key' });
    expect(res.body.error.message).toContain('"__proto__"');
    expect(res.body.error.message).not.toContain('not valid JSON');
  });

  it('names a missing external customer once, without "not found" after it', async () => {
    await acme.api('POST', '/v1/billable-metrics', { code: 'api_calls', name: 'API calls', aggregation: 'count' });
    const res = await acme.api('POST', '/v1/usage/events', { transaction_id: 'tx-1', external_customer_id: 'nobody', metric_code: 'api_calls' });
    expect(res.status).toBe(404);
    expect(res.body.error.message).toBe("no customer with external_id 'nobody'");
  });
});

describe('logging', () => {
  it('logs 503 provider_not_configured as a refusal (info, no stack), not as an error', async () => {
    const logged = await startLoggedKosh();
    try {
      const reg = await logged.api('POST', '/auth/register', { name: 'Zed Labs', email: 'owner@zed.example' });
      const key = reg.body.data.api_key.key as string;
      const res = await logged.api('POST', '/v1/accounting/connect/quickbooks', {}, { authorization: `Bearer ${key}` });
      expect(res.status).toBe(503);
      expect(res.body.error.reason).toBe('provider_not_configured');
      const line = logged.lines.find((l) => l.reason === 'provider_not_configured');
      expect(line).toMatchObject({ level: 30, msg: expect.any(String) });
      expect(logged.lines.filter((l) => Number(l.level) >= 50)).toEqual([]);
      expect(JSON.stringify(logged.lines)).not.toContain('"stack"');
    } finally {
      await logged.close();
    }
  });
});
