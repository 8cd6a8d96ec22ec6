import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InjectOptions } from 'fastify';
import { generateApiKey } from '../../src/platform/auth/api-keys.js';
import { factories, missingIdAnswers, pathValues, validBodies } from './factories.js';
import { startTestKosh, withoutRequestId, type ApiResponse, type Tenant, type TestKosh } from './harness.js';

/**
 * The shared security suite (STYLE habit 3): every `/v1` route, discovered from the app's own
 * OpenAPI document, refuses missing, malformed, unknown, revoked and wrong-mode keys, and answers a
 * foreign tenant's id exactly as it answers an id that does not exist.
 */

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

// A JSON Schema object as @fastify/swagger emits it; only the parts the suites read are typed.
export type JsonSchema = {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  enum?: unknown[];
  format?: string;
  [key: string]: unknown;
};

type OpenApiOperation = {
  parameters?: { in: string; name: string; required?: boolean; schema?: JsonSchema }[];
  /** `[]` marks a route that takes no API key (an OAuth callback). */
  security?: unknown[];
  requestBody?: { required?: boolean; content?: Record<string, { schema?: JsonSchema }> };
};

export type OpenApiDocument = {
  openapi: string;
  paths: Record<string, Partial<Record<Lowercase<HttpMethod>, OpenApiOperation>>>;
  components?: { schemas?: Record<string, JsonSchema> };
};

export type ApiRoute = {
  method: HttpMethod;
  /** OpenAPI form: `/v1/plans/{id}`. */
  path: string;
  /**
   * Path parameters that name a tenant's record, in order of appearance. A parameter whose schema
   * is an enum (`/v1/accounting/connect/{provider}`) names a kind, not a record: it needs no
   * factory and has no tenant to isolate; the suites fill it like any unknown parameter.
   */
  pathParams: string[];
  /** Declared `security: []`: the route authenticates its caller otherwise, not by API key. */
  public: boolean;
  /** The JSON request body schema with `$ref`s resolved one level deep, when the route takes one. */
  bodySchema: JsonSchema | undefined;
  /** `METHOD /path`, for messages and the `validBodies` registry. */
  label: string;
};

const METHODS: HttpMethod[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

export async function fetchOpenApi(t: TestKosh): Promise<OpenApiDocument> {
  const res = await t.api('GET', '/openapi.json');
  if (res.status !== 200) throw new Error(`GET /openapi.json answered ${res.status}`);
  return res.body as OpenApiDocument;
}

export function resolveSchema(doc: OpenApiDocument, schema: JsonSchema | undefined): JsonSchema | undefined {
  if (!schema?.$ref) return schema;
  const name = schema.$ref.replace('#/components/schemas/', '');
  return doc.components?.schemas?.[name];
}

/** Every operation of the OpenAPI document whose path starts with `prefix` (default `/v1/`). */
export function routesOf(doc: OpenApiDocument, prefix = '/v1/'): ApiRoute[] {
  const routes: ApiRoute[] = [];
  for (const [path, operations] of Object.entries(doc.paths)) {
    if (!path.startsWith(prefix)) continue;
    for (const method of METHODS) {
      const op = operations[method.toLowerCase() as Lowercase<HttpMethod>];
      if (!op) continue;
      routes.push({
        method,
        path,
        pathParams: [...path.matchAll(/\{([^}]+)\}/g)]
          .map((m) => m[1]!)
          .filter((name) => !(name in pathValues) && !op.parameters?.some((p) => p.in === 'path' && p.name === name && Array.isArray(p.schema?.enum))),
        public: Array.isArray(op.security) && op.security.length === 0,
        bodySchema: resolveSchema(doc, op.requestBody?.content?.['application/json']?.schema),
        label: `${method} ${path}`,
      });
    }
  }
  return routes;
}

/**
 * The `/v1` routes fastify actually serves, read from its route tree (`printRoutes`), in OpenAPI
 * form. Used to prove no route escapes the OpenAPI document — and with it this suite — by being
 * hidden (`schema: { hide: true }`) or schemaless.
 */
export function servedRoutes(t: TestKosh, prefix = '/v1/'): string[] {
  const tree = t.kosh.app.printRoutes({ commonPrefix: false });
  const stack: string[] = [];
  const found: string[] = [];
  for (const line of tree.split('\n')) {
    const m = /^((?:[│ ] {3})*)[├└]── (.+?)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!m) continue;
    const depth = m[1]!.length / 4;
    const path = (stack[depth - 1] ?? '') + m[2]!;
    stack[depth] = path;
    stack.length = depth + 1;
    if (!m[3] || !path.startsWith(prefix)) continue;
    for (const method of m[3].split(',').map((s) => s.trim())) {
      if (method === 'HEAD' || method === 'OPTIONS') continue;
      found.push(`${method} ${path.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}')}`);
    }
  }
  return found;
}

/** The factory key of a path parameter: the path up to it (`/v1/invoices/{id}/pay`, `id` → `/v1/invoices`). */
export function factoryKey(path: string, param: string): string {
  return path.slice(0, path.indexOf(`{${param}}`)).replace(/\/$/, '');
}

export function missingFactories(route: ApiRoute): string[] {
  return route.pathParams.map((p) => factoryKey(route.path, p)).filter((key) => !factories[key]);
}

export function missingFactoryMessage(route: ApiRoute, key: string): string {
  return `${route.label}: add a factory for ${key} in test/support/factories.ts`;
}

/** Ids of fresh records of `tenant` for each path parameter of the route, made by the factories. */
export async function realIds(route: ApiRoute, tenant: Tenant): Promise<Record<string, string>> {
  const ids: Record<string, string> = {};
  for (const param of route.pathParams) {
    const key = factoryKey(route.path, param);
    const factory = factories[key];
    if (!factory) throw new Error(missingFactoryMessage(route, key));
    ids[param] = await factory(tenant, { ...ids });
  }
  return ids;
}

export function randomIds(route: ApiRoute): Record<string, string> {
  return Object.fromEntries(route.pathParams.map((p) => [p, randomUUID()]));
}

export function fillPath(path: string, ids: Record<string, string>): string {
  return path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(ids[name] ?? pathValues[name] ?? randomUUID()));
}

/**
 * A body that passes validation for a route with path parameters: the `validBodies` entry, else
 * `{}` when the body has no required field. `undefined` means the route takes no body; `null`
 * means one is needed and missing.
 */
export function validBodyFor(route: ApiRoute): unknown {
  if (route.label in validBodies) return validBodies[route.label];
  if (!route.bodySchema) return undefined;
  return route.bodySchema.required?.length ? null : {};
}

/** A well-formed key no tenant has (the pattern matches, the hash does not). */
export function unknownKey(mode: 'test' | 'live' = 'test'): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  return `sk_${mode}_${[...randomBytes(32)].map((b) => alphabet[b % alphabet.length]).join('')}`;
}

export const ERROR_CODES = ['validation_failed', 'unauthorized', 'not_found', 'conflict'] as const;

/** Null when `res` is the error envelope with `status` and `code` (and `reason`); else what is wrong. */
export function envelopeProblem(res: ApiResponse, status: number, code: string, reason?: string): string | null {
  const error = res.body?.error;
  const ok =
    res.status === status &&
    typeof error?.message === 'string' &&
    error.code === code &&
    (reason === undefined || error.reason === reason) &&
    res.body.data === undefined;
  return ok ? null : `expected ${status} ${code}${reason ? `/${reason}` : ''}, got ${res.status} ${res.text.slice(0, 300)}`;
}

function requestFor(route: ApiRoute, ids: Record<string, string>, headers: Record<string, string>, body?: unknown): InjectOptions {
  return {
    method: route.method,
    url: fillPath(route.path, ids),
    headers: { ...headers, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
  };
}

export type SecurityOptions = {
  /** Which discovered routes to check (default: every `/v1` route). */
  include?: (route: ApiRoute) => boolean;
  /**
   * For the central suite: also require that every route fastify serves under `/v1` is in the
   * OpenAPI document, and that the document lists at least these operations.
   */
  expectRoutes?: string[];
};

/**
 * The security suite as a describe block. test/security/routes.test.ts runs it over every route;
 * a module's own test may run it over its routes:
 * `describeSecurity('plans', { include: (r) => r.path.startsWith('/v1/plans') })`.
 */
export function describeSecurity(title: string, options: SecurityOptions = {}): void {
  describe(`security: ${title}`, () => {
    let t: TestKosh;
    let attacker: Tenant; // calls with other tenants' ids
    let victim: Tenant; // owns the records
    let routes: ApiRoute[];
    let revokedKey: string;
    let liveKey: string;

    beforeAll(async () => {
      t = await startTestKosh();
      attacker = await t.registerTenant();
      victim = await t.registerTenant();
      const doc = await fetchOpenApi(t);
      routes = routesOf(doc).filter(options.include ?? (() => true));

      const spare = await attacker.api('POST', '/v1/developer/keys', { name: 'to revoke' });
      expect(spare.status).toBe(201);
      revokedKey = spare.body.data.key;
      expect((await attacker.api('DELETE', `/v1/developer/keys/${spare.body.data.id}`)).status).toBe(200);

      // A key of the other mode cannot be made through the API (a key is of its tenant's mode):
      // write one for the attacker's test-mode tenant directly, as a shared database could hold.
      const live = generateApiKey('live');
      await t.database.db
        .insertInto('api_keys')
        .values({
          id: randomUUID(),
          tenant_id: attacker.tenantId,
          name: 'live',
          mode: 'live',
          prefix: live.prefix,
          key_hash: live.hash,
          created_at: t.clock.now(),
          last_used_at: null,
          revoked_at: null,
        })
        .execute();
      liveKey = live.key;
    });
    afterAll(() => t?.close());

    /** Runs `check` on every route and reports every failing route at once. */
    async function everyRoute(selected: ApiRoute[], check: (route: ApiRoute) => Promise<string | null | undefined>) {
      expect(selected.length, 'no route matched: the suite would check nothing').toBeGreaterThan(0);
      const failures: string[] = [];
      for (const route of selected) {
        const problem = await check(route).catch((error: Error) => error.message);
        if (problem) failures.push(problem.startsWith(route.label) ? problem : `${route.label}: ${problem}`);
      }
      expect(failures).toEqual([]);
    }

    const idRoutes = () => routes.filter((r) => r.pathParams.length > 0);

    describe('route discovery', () => {
      it.runIf(Boolean(options.expectRoutes))('finds every /v1 route fastify serves in the OpenAPI document', () => {
        const documented = new Set(routes.map((r) => r.label));
        const served = servedRoutes(t);
        for (const label of options.expectRoutes ?? []) expect(served, 'could not read the route tree').toContain(label);
        for (const label of options.expectRoutes ?? []) expect(documented).toContain(label);
        const undocumented = served.filter((label) => !documented.has(label));
        expect(undocumented, 'these routes are missing from /openapi.json, so no suite checks them').toEqual([]);
      });

      it('has a factory for every route with a path parameter', () => {
        const missing = idRoutes().flatMap((route) => missingFactories(route).map((key) => missingFactoryMessage(route, key)));
        expect(missing).toEqual([]);
      });
    });

    describe('authentication', () => {
      const cases: [string, () => Record<string, string>, string][] = [
        ['without an Authorization header', () => ({}), 'invalid_api_key'],
        ['with a garbage key', () => ({ authorization: 'Bearer not-a-key' }), 'invalid_api_key'],
        ['with a non-Bearer scheme', () => ({ authorization: `Basic ${Buffer.from('sk:x').toString('base64')}` }), 'invalid_api_key'],
        ['with a well-formed but unknown test key', () => ({ authorization: `Bearer ${unknownKey('test')}` }), 'invalid_api_key'],
        ['with a well-formed but unknown live key', () => ({ authorization: `Bearer ${unknownKey('live')}` }), 'invalid_api_key'],
        ['with a revoked key', () => ({ authorization: `Bearer ${revokedKey}` }), 'invalid_api_key'],
        ['with a key of the other mode', () => ({ authorization: `Bearer ${liveKey}` }), 'key_mode_mismatch'],
      ];
      it.each(cases)('answers 401 on every route %s', async (_label, headers, reason) => {
        await everyRoute(
          routes.filter((r) => !r.public),
          async (route) => {
            // A valid body, where one is known, so that nothing but the key can explain a refusal.
            const body = validBodyFor(route) ?? (route.bodySchema ? {} : undefined);
            const res = await t.call(requestFor(route, randomIds(route), headers(), body));
            return envelopeProblem(res, 401, 'unauthorized', reason);
          },
        );
      });
    });

    describe('tenant isolation', () => {
      it("answers another tenant's id exactly as a random id (404 not_found unless SPEC says otherwise), and changes nothing", async () => {
        await everyRoute(idRoutes(), async (route) => {
          const body = validBodyFor(route);
          if (body === null) return `add a valid body for ${route.label} in test/support/factories.ts (validBodies)`;
          const victimIds = await realIds(route, victim);
          // The GET of the record itself (`/v1/x/{id}` for `/v1/x/{id}` and `/v1/x/{id}/void`), if any.
          const recordPath = route.path.replace(/\/[^/{}]+$/, '');
          const reader = routes.find((r) => r.method === 'GET' && r.path === recordPath && r.pathParams.length > 0);
          const before = reader ? await victim.api('GET', fillPath(reader.path, victimIds)) : undefined;

          const foreign = await attacker.api(route.method, fillPath(route.path, victimIds), body);
          const missing = await attacker.api(route.method, fillPath(route.path, randomIds(route)), body);
          const expected = missingIdAnswers[route.label] ?? { status: 404, code: 'not_found' };
          const notFound = envelopeProblem(missing, expected.status, expected.code);
          if (notFound) return `a random id: ${notFound}`;
          if (foreign.status !== missing.status || withoutRequestId(foreign.text) !== withoutRequestId(missing.text)) {
            return `a foreign id answered ${foreign.status} ${foreign.text.slice(0, 200)} but a random id ${missing.status} ${missing.text.slice(0, 200)}`;
          }
          if (reader && before) {
            const after = await victim.api('GET', fillPath(reader.path, victimIds));
            if (withoutRequestId(after.text) !== withoutRequestId(before.text))
              return `the foreign call changed the record: ${before.text.slice(0, 200)} → ${after.text.slice(0, 200)}`;
          }
          // The id is real: its owner is not told 404 (else the comparison above proves nothing).
          const own = await victim.api(route.method, fillPath(route.path, victimIds), body);
          if (own.status === expected.status && withoutRequestId(own.text) === withoutRequestId(missing.text)) {
            return `the factory's own id is refused to its owner as if missing: ${own.text.slice(0, 200)}`;
          }
          return null;
        });
      });

      it.each([['not-a-uuid'], ['123'], ["1' OR '1'='1"], ['00000000-0000-0000-0000-00000000000g']])(
        'answers a malformed id (%s) with 400 validation_failed naming the parameter',
        async (bad) => {
          await everyRoute(idRoutes(), async (route) => {
            const ids = Object.fromEntries(route.pathParams.map((p) => [p, bad]));
            const res = await attacker.api(route.method, fillPath(route.path, ids), validBodyFor(route) ?? undefined);
            const problem = envelopeProblem(res, 400, 'validation_failed');
            if (problem) return problem;
            const fields: string[] = (res.body.error.details ?? []).map((d: { field: string }) => d.field);
            const named = route.pathParams.some((p) => fields.includes(`params.${p}`));
            return named ? null : `the 400 does not name the path parameter: ${res.text.slice(0, 200)}`;
          });
        },
      );
    });
  });
}
