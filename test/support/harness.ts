import { randomBytes } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import { pino } from 'pino';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { createKosh, type Kosh } from '../../src/app.js';
import type { UndocumentedAnswer } from '../../src/platform/http/server.js';
import { ManualClock } from '../../src/platform/clock.js';
import { loadConfig, type Config } from '../../src/platform/config.js';
import type { Database } from '../../src/platform/db/database.js';
import { openTestDatabase } from './database.js';
import { typedApi, type TypedApi } from './typed-api.js';

export type ApiResponse = {
  status: number;
  headers: LightMyRequestResponse['headers'];
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  text: string;
};

export type Tenant = {
  tenantId: string;
  key: string;
  /** Calls the API as this tenant. */
  api: (method: InjectOptions['method'], url: string, body?: unknown, headers?: Record<string, string>) => Promise<ApiResponse>;
  /** Calls the API as this tenant, typed against the OpenAPI document (test/support/typed-api.ts). */
  http: TypedApi;
  /** The Kosh the tenant lives in (factories that need more than the tenant's API use it). */
  testKosh: TestKosh;
};

export type TestKosh = {
  kosh: Kosh;
  clock: ManualClock;
  database: Database;
  config: Config;
  /** Raw call through the full HTTP stack (routing, hooks, validation, serialization). */
  call: (options: InjectOptions) => Promise<ApiResponse>;
  api: (method: InjectOptions['method'], url: string, body?: unknown, headers?: Record<string, string>) => Promise<ApiResponse>;
  /** Registers through `POST /auth/register`; `headers` for an admin-only deployment's token. */
  registerTenant: (overrides?: Record<string, unknown>, headers?: Record<string, string>) => Promise<Tenant>;
  /** Answers so far whose status their route's OpenAPI operation does not list (close() fails on them). */
  undocumentedStatuses: () => UndocumentedAnswer[];
  close: () => Promise<void>;
};

/** The failure a test file gets when a route answered a status its operation does not list. */
export function undocumentedStatusMessage(answers: UndocumentedAnswer[]): string {
  const lines = answers.map(
    (a) =>
      `  ${a.method} ${a.path} answered ${a.status}${a.code ? ` (${a.code}${a.reason ? `/${a.reason}` : ''}: ${a.message ?? ''})` : ''}; ` +
      `its operation lists ${a.listed.join(', ')}`,
  );
  return [
    'Routes answered statuses their OpenAPI operations do not list:',
    ...lines,
    "Declare the error kind in the route's schema, e.g. `errors: ['not_found']` (kinds: src/platform/errors.ts;",
    'framework statuses: src/platform/http/route-errors.ts; CONTRIBUTING.md "Errors a route raises").',
  ].join('\n');
}

/** An answer's text without its (per-request) `request_id`: two refusals compare equal. */
export function withoutRequestId(text: string): string {
  return text.replace(/"request_id":"[^"]*",?/g, '');
}

export function toResponse(res: LightMyRequestResponse): ApiResponse {
  let body: unknown = undefined;
  const type = String(res.headers['content-type'] ?? '');
  if (type.includes('json') && res.body.length) body = JSON.parse(res.body);
  return { status: res.statusCode, headers: res.headers, body, text: res.body };
}

let tenantCounter = 0;

/**
 * One Kosh for a test file: real database (PGlite in memory, or a fresh PostgreSQL database when
 * DATABASE_URL is set), a ManualClock, the worker not started (tests drain it explicitly).
 */
export async function startTestKosh(options: { env?: Record<string, string>; clock?: ManualClock } = {}): Promise<TestKosh> {
  const database = await openTestDatabase();
  const clock = options.clock ?? new ManualClock('2026-04-01T00:00:00Z');
  // Live mode requires KOSH_PUBLIC_URL; tests that do not care about it get a placeholder.
  const liveDefaults = options.env?.KOSH_MODE === 'live' ? { KOSH_PUBLIC_URL: 'https://kosh.example' } : {};
  // Test receivers listen on loopback: a test deployment may reach them (decision 0210).
  const testDefaults = options.env?.KOSH_MODE === 'live' ? {} : { KOSH_OUTBOUND_ALLOW_PRIVATE: '1' };
  const config = loadConfig({
    KOSH_MODE: 'test',
    LOG_LEVEL: 'silent',
    KOSH_SECRET_KEY: randomBytes(32).toString('base64'),
    ...liveDefaults,
    ...testDefaults,
    ...options.env,
  });
  // Every answer is checked against the route's OpenAPI operation: a status it does not list fails
  // the test file when it closes (KOSH_CHECK_STATUSES=0 turns the check off while investigating).
  const undocumented = new Map<string, UndocumentedAnswer>();
  const checkStatuses = process.env.KOSH_CHECK_STATUSES !== '0';
  const kosh = await createKosh({
    config,
    clock,
    database,
    validateResponses: true,
    logger: pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }),
    ...(checkStatuses
      ? {
          onUndocumentedStatus: (answer: UndocumentedAnswer) => {
            undocumented.set(`${answer.method} ${answer.path} ${answer.status}`, answer);
            // KOSH_UNDOCUMENTED_LOG=<file>: every such answer of a run, one JSON line each.
            if (process.env.KOSH_UNDOCUMENTED_LOG) appendFileSync(process.env.KOSH_UNDOCUMENTED_LOG, `${JSON.stringify(answer)}\n`);
          },
        }
      : {}),
  });

  const call = async (opts: InjectOptions) => toResponse(await kosh.app.inject(opts));
  const api: TestKosh['api'] = (method, url, body, headers = {}) =>
    call({
      method,
      url,
      headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
      ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
    });

  const registerTenant = async (overrides: Record<string, unknown> = {}, headers: Record<string, string> = {}): Promise<Tenant> => {
    tenantCounter += 1;
    const res = await api('POST', '/auth/register', { name: `Tenant ${tenantCounter}`, email: `owner${tenantCounter}@tenant.test`, ...overrides }, headers);
    if (res.status !== 201) throw new Error(`registration failed: ${res.status} ${res.text}`);
    const key: string = res.body.data.api_key.key;
    const tenantApi: Tenant['api'] = (method, url, body, headers = {}) => api(method, url, body, { authorization: `Bearer ${key}`, ...headers });
    return { tenantId: res.body.data.tenant.id, key, api: tenantApi, http: typedApi(tenantApi), testKosh };
  };

  const testKosh: TestKosh = {
    kosh,
    clock,
    database,
    config,
    call,
    api,
    registerTenant,
    undocumentedStatuses: () => [...undocumented.values()],
    close: async () => {
      await kosh.close();
      await database.close();
      if (undocumented.size) throw new Error(undocumentedStatusMessage([...undocumented.values()]));
    },
  };
  return testKosh;
}
