import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_TYPES } from '../../src/modules/events/index.js';
import { deriveOperationId, exampleOf } from '../../src/platform/http/openapi.js';
import { startTestKosh, type TestKosh } from '../support/harness.js';

/**
 * The OpenAPI document as a client generator needs it. Every check names the operations that fail
 * it, so a route added later without what it needs is caught here (the mechanisms in
 * src/platform/http/openapi.ts give it most of it by itself).
 */
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

let t: TestKosh;
let doc: Json;
const operations: { key: string; method: string; path: string; op: Json }[] = [];

beforeAll(async () => {
  t = await startTestKosh();
  doc = (await t.api('GET', '/openapi.json')).body;
  for (const [path, item] of Object.entries(doc.paths as Record<string, Json>)) {
    for (const [method, op] of Object.entries(item)) operations.push({ key: `${method.toUpperCase()} ${path}`, method, path, op: op as Json });
  }
});

afterAll(async () => {
  await t?.close();
});

function resolve(node: Json | undefined): Json | undefined {
  let current = node;
  for (let i = 0; current?.$ref && i < 5; i += 1) {
    const parts = String(current.$ref).replace(/^#\//, '').split('/');
    current = parts.reduce<Json | undefined>((at, part) => at?.[part], doc);
  }
  return current;
}

const failing = (predicate: (o: (typeof operations)[number]) => boolean) => operations.filter(predicate).map((o) => o.key);

describe('openapi document', () => {
  it('describes the API at all', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(operations.length).toBeGreaterThan(50);
    expect(doc.servers?.length).toBeGreaterThan(0);
    expect(doc.info.license).toMatchObject({ name: 'Apache-2.0' });
  });

  it('gives every operation a unique operationId, a summary and a description', () => {
    expect(failing((o) => !o.op.operationId || !o.op.summary || !o.op.description)).toEqual([]);
    const ids = operations.map((o) => o.op.operationId);
    expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([]);
    expect(doc.paths['/v1/invoices/{id}/finalize'].post.operationId).toBe('finalizeInvoice');
    expect(doc.paths['/v1/invoices'].get.operationId).toBe('listInvoices');
  });

  it('gives every operation its error responses, each with the Error schema', () => {
    const errorsOf = (o: (typeof operations)[number]) => Object.keys(o.op.responses).filter((s) => /^[45]/.test(s));
    expect(failing((o) => errorsOf(o).length === 0)).toEqual([]);
    expect(
      failing((o) => errorsOf(o).some((s) => resolve(o.op.responses[s])?.content?.['application/json']?.schema?.$ref !== '#/components/schemas/Error')),
    ).toEqual([]);
    const authenticated = (o: (typeof operations)[number]) => o.path.startsWith('/v1/') && !(Array.isArray(o.op.security) && o.op.security.length === 0);
    expect(failing((o) => authenticated(o) && !o.op.responses['401'])).toEqual([]);
    // Every authenticated /v1 route can refuse the role, a session write's CSRF token or a cross-site write.
    expect(failing((o) => authenticated(o) && !o.op.responses['403'])).toEqual([]);
    // Any route may find the database unavailable.
    expect(failing((o) => !o.op.responses['503'])).toEqual([]);
    expect(failing((o) => o.path.includes('{') && !o.op.responses['404'])).toEqual([]);
    expect(failing((o) => Boolean(o.op.requestBody) && !o.op.responses['400'])).toEqual([]);
    expect(failing((o) => authenticated(o) && o.method !== 'get' && !(o.op.responses['409'] && o.op.responses['422']))).toEqual([]);
    const error = doc.components.schemas.Error;
    expect(Object.keys(error.properties.error.properties)).toEqual(expect.arrayContaining(['code', 'message', 'reason', 'request_id', 'details']));
  });

  it('lists the errors routes declare: ids in a body or query, token links, providers, states', () => {
    const lists = (key: string, status: string) => {
      const [method, path] = key.split(' ');
      return Boolean(doc.paths[path!]?.[method!.toLowerCase()]?.responses?.[status]);
    };
    const bodyIds = ['POST /v1/invoices', 'POST /v1/subscriptions', 'POST /v1/payments/offline', 'POST /v1/credit-notes', 'POST /v1/gifts', 'POST /v1/quotes'];
    const queryIds = ['GET /v1/ledger/trial-balance', 'GET /v1/accounting/sync-status'];
    expect([...bodyIds, ...queryIds].filter((key) => !lists(key, '404'))).toEqual([]);
    expect(['POST /v1/auth/invitations/accept', 'POST /v1/auth/password-reset/confirm'].filter((key) => !lists(key, '410'))).toEqual([]);
    expect(lists('POST /v1/accounting/connect/{provider}', '503')).toBe(true);
    expect(lists('GET /v1/subscriptions/{id}/upcoming-invoice', '409')).toBe(true);
    // Not guessed: a list without a path id or a declared lookup does not claim a 404.
    expect(lists('GET /v1/plans', '404')).toBe(false);
    expect(doc.components.responses.UnprocessableEntity.description).toMatch(/Idempotency-Key was used with another body/);
    expect(doc.components.parameters.IdempotencyKey.description).toMatch(/another body is a 422/);
  });

  it('documents the operator session cookie, and the routes that take only it', () => {
    expect(doc.components.securitySchemes.operatorSession).toMatchObject({ type: 'apiKey', in: 'cookie', name: 'kosh_session' });
    expect(doc.security).toEqual([{ apiKey: [] }, { operatorSession: [] }]);
    for (const key of [
      'get /v1/auth/me',
      'post /v1/auth/sign-out',
      'post /v1/auth/sign-out-everywhere',
      'post /v1/auth/totp/setup',
      'post /v1/auth/totp/enable',
      'post /v1/auth/totp/disable',
    ]) {
      const [method, path] = key.split(' ');
      expect(doc.paths[path!][method!].security, key).toEqual([{ operatorSession: [] }]);
    }
  });

  it('gives CSV and XML answers their content types', () => {
    for (const path of [
      '/v1/analytics/mrr',
      '/v1/analytics/mrr/waterfall',
      '/v1/analytics/churn',
      '/v1/analytics/cohorts',
      '/v1/analytics/invoice-aging',
      '/v1/organizations/{id}/analytics/mrr',
    ]) {
      expect(Object.keys(doc.paths[path].get.responses['200'].content), path).toEqual(['application/json', 'text/csv']);
    }
    expect(Object.keys(doc.paths['/v1/ledger/export'].get.responses['200'].content)).toEqual(['text/csv']);
    expect(Object.keys(doc.paths['/v1/accounting/export/tally'].get.responses['200'].content)).toEqual(['application/xml']);
  });

  it('links create operations to the operations that take the created id, and lists event types as an enum', () => {
    expect(doc.paths['/v1/plans'].post.responses['201'].links.getPlan).toEqual({
      operationId: 'getPlan',
      parameters: { id: '$response.body#/data/id' },
      description: expect.any(String),
    });
    expect(doc.paths['/v1/webhooks'].post.responses['201'].links).toHaveProperty('deleteWebhookEndpoint');
    const events = resolve(doc.paths['/v1/webhooks'].post.requestBody.content['application/json'].schema)!.properties.events;
    expect(events.items.enum).toEqual(['*', ...EVENT_TYPES]);
  });

  it('gives dates, months and currencies in queries a pattern, and webhook URLs a format', () => {
    const loose: string[] = [];
    for (const o of operations) {
      for (const p of (o.op.parameters ?? []) as Json[]) {
        const param = resolve(p)!;
        const schema = param.schema ?? {};
        if (param.in !== 'query' || schema.type !== 'string' || schema.enum || schema.format || schema.pattern) continue;
        if (/^(from|to|month|start_date|end_date|as_of|currency)$/.test(param.name)) loose.push(`${o.key} ${param.name}`);
      }
    }
    expect(loose).toEqual([]);
    const url = resolve(doc.paths['/v1/webhooks'].post.requestBody.content['application/json'].schema)!.properties.url;
    expect(url.format).toBe('uri');
  });

  it('puts the Idempotency-Key header on every mutating /v1 operation', () => {
    const hasKey = (op: Json) => (op.parameters ?? []).some((p: Json) => resolve(p)?.name === 'Idempotency-Key' && resolve(p)?.in === 'header');
    expect(failing((o) => o.path.startsWith('/v1/') && o.method !== 'get' && !hasKey(o.op))).toEqual([]);
  });

  it('has a description and an example for every request body and every response with content', () => {
    expect(
      failing(
        (o) =>
          Boolean(o.op.requestBody) &&
          (!o.op.requestBody.description ||
            !Object.values(o.op.requestBody.content as Json).every((m: Json) => m.example !== undefined || m.examples !== undefined)),
      ),
    ).toEqual([]);
    const bad: string[] = [];
    for (const o of operations) {
      for (const [status, ref] of Object.entries(o.op.responses as Json)) {
        const response = resolve(ref as Json)!;
        if (!response.description || response.description === 'Default Response') bad.push(`${o.key} ${status}: no description`);
        for (const [type, media] of Object.entries((response.content ?? {}) as Json)) {
          if (type === 'application/json' && media.example === undefined && media.examples === undefined) bad.push(`${o.key} ${status}: no example`);
        }
      }
    }
    expect(bad).toEqual([]);
  });

  it('lets responses gain fields: no additionalProperties false in what they return', () => {
    const closed: string[] = [];
    const seen = new Set<unknown>();
    const visit = (node: unknown, where: string) => {
      if (!node || typeof node !== 'object' || seen.has(node)) return;
      seen.add(node);
      const obj = node as Json;
      if (obj.additionalProperties === false) closed.push(where);
      if (obj.$ref) visit(resolve(obj), String(obj.$ref));
      for (const [k, v] of Object.entries(obj)) if (k !== '$ref') visit(v, where);
    };
    for (const o of operations) for (const [status, r] of Object.entries(o.op.responses as Json)) visit(r, `${o.key} ${status}`);
    expect(closed).toEqual([]);
  });

  it('keeps no unused component schema', () => {
    const text = JSON.stringify({ paths: doc.paths, webhooks: doc.webhooks, responses: doc.components.responses, schemas: doc.components.schemas });
    const unused = Object.keys(doc.components.schemas).filter((name) => !text.includes(`"#/components/schemas/${name}"`));
    expect(unused).toEqual([]);
  });

  it('documents every event type as a webhook with its payload', () => {
    expect(Object.keys(doc.webhooks ?? {}).sort()).toEqual([...EVENT_TYPES].sort());
    const payload = doc.webhooks['invoice.finalized'].post.requestBody.content['application/json'];
    expect(payload.schema.properties.type.const).toBe('invoice.finalized');
    expect(payload.schema.properties.data.properties.object.$ref).toBe('#/components/schemas/Invoice');
    expect(payload.example.type).toBe('invoice.finalized');
  });
});

describe('operationId derivation', () => {
  it.each([
    ['get', '/v1/plans', true, 'listPlans'],
    ['post', '/v1/plans', false, 'createPlan'],
    ['get', '/v1/plans/{id}', false, 'getPlan'],
    ['post', '/v1/invoices/{id}/finalize', false, 'finalizeInvoice'],
    ['post', '/v1/credit-notes/{id}/approve', false, 'approveCreditNote'],
    ['patch', '/v1/entities/{id}', false, 'updateEntity'],
    ['delete', '/v1/webhooks/{id}', false, 'deleteWebhook'],
    ['get', '/v1/gateways/{id}/events', true, 'listGatewaysEvents'],
  ])('%s %s → %s', (method, path, isList, expected) => {
    expect(deriveOperationId(method, path, isList)).toBe(expected);
  });
});

describe('generated examples', () => {
  it('follow formats, enums, bounds and field names', () => {
    const schema = {
      type: 'object',
      properties: {
        id: { type: 'string', format: 'uuid' },
        currency: { type: 'string', pattern: '^[A-Za-z]{3}$' },
        status: { type: 'string', enum: ['draft', 'open'] },
        quantity: { type: 'integer', minimum: 5 },
        lines: { type: 'array', items: { type: 'object', properties: { amount: { type: 'integer' } } }, minItems: 1 },
      },
    };
    expect(exampleOf(schema, () => undefined)).toEqual({
      id: '0196f0c2-5b1e-7c3a-9d41-3a0c8e2f1b77',
      currency: 'INR',
      status: 'draft',
      quantity: 5,
      lines: [{ amount: 49900 }],
    });
  });
});
