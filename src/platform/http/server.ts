import { randomUUID } from 'node:crypto';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type RawReplyDefaultExpression,
  type RawRequestDefaultExpression,
  type RawServerDefault,
} from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { jsonSchemaTransform, jsonSchemaTransformObject, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Logger } from 'pino';
import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import type { DB } from '../db/schema.js';
import type { Database } from '../db/database.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { SecretBox } from '../secrets/secrets.js';
import { isUuid } from '../ids.js';
import { errors, KoshError } from '../errors.js';
import { hasRole, type Role } from '../auth/actor.js';
import { authenticateSession, cookiesOf, SESSION_COOKIE, type OperatorSession } from '../auth/sessions.js';
import { appendAudit, auditTargetOf, diffRows, readAuditedRow } from '../audit/audit.js';
import { ApiKeyCache, authenticateApiKey, bearerToken, type Principal } from '../auth/api-keys.js';
import type { ChangeFeed } from '../db/change-feed.js';
import { errorHandler, toEnvelope } from './error-handler.js';
import { malformedTargetRefusal, rerouteFrameworkError } from './malformed-target.js';
import { assertBodyDepth } from './json-depth.js';
import { acceptEmptyJsonBodies } from './json-body.js';
import { completeDocument } from './openapi.js';
import { documentsStatus, errorStatuses, openApiPath, successStatuses, type RouteShape } from './route-errors.js';
import { API_INTRODUCTION, frontDoor } from './docs-intro.js';
import { countsChanged, setListCountCacheMs } from '../db/paginate.js';
import { isSpeculationFailed } from '../db/speculation.js';
import type { AppScope } from '../app-scope.js';
import { responseSerializerCompiler } from './serializer.js';
import { securityHeaders } from './security-headers.js';
import { registerMetrics } from './metrics.js';
import { serializeRequest } from './request-log.js';
import { limiter, registerRateLimits } from './rate-limits.js';
import { sameSecret } from '../auth/secrets-compare.js';
import { jobBacklog, pendingJobCount } from '../jobs/jobs.js';
import { runIdempotentAction, validateIdempotencyKey, type ActionResult } from '../idempotency/idempotency.js';
import type { Ctx, ReadCtx } from '../context.js';

export type KoshApp = FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, ZodTypeProvider>;

declare module 'fastify' {
  interface FastifyRequest {
    principal?: Principal;
  }
  interface FastifyContextConfig {
    /**
     * A `/v1` route that takes no API key because it authenticates its caller otherwise (an OAuth
     * callback, identified by its single-use state). Mark it `security: []` in its schema too.
     */
    public?: boolean;
    /**
     * How the audit log names this write, where the path does not say it well (platform/audit
     * derives `invoice.void` from `POST /v1/invoices/:id/void`); `false`: the route records its
     * own entry (sign-in and the like).
     */
    audit?: { action?: string; objectType?: string } | false;
  }
}

/**
 * The minimum role of each `/v1` route (src/api/access.ts): `undefined` when the table has no
 * decision, which refuses every operator and every API key.
 */
export type AccessPolicy = (method: string, pattern: string) => Role | undefined;

export type HttpDeps = {
  db: Kysely<DB>;
  clock: Clock;
  config: Config;
  logger: Logger;
  version: string;
  /** Seals and opens third parties' secrets (platform/secrets). */
  secrets: SecretBox;
  /** The app's own state (platform/app-scope.ts): registries its modules fill at start-up, caches its requests share. */
  scope: AppScope;
  /** Which database: on a PostgreSQL server rate-limit budgets are held there, shared by all processes. */
  database?: Pick<Database, 'kind'>;
  /** Where reports read (a replica under DATABASE_READ_URL); `db` when absent. */
  readDb?: Kysely<DB>;
  /**
   * What other processes changed (platform/db/change-feed.ts): the in-memory caches of API keys and
   * entitlements answer only while it is fresh. Without one, a verified key is trusted for
   * KOSH_API_KEY_CACHE_SECONDS whatever happens elsewhere.
   */
  changes?: ChangeFeed;
};

export const BODY_LIMIT_BYTES = 1024 * 1024;
/** `/readyz` answers 503 when the database has not answered `SELECT 1` within this. */
const READY_TIMEOUT_MS = 2_000;

/** The authenticated tenant of a `/v1` request. */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new KoshError('unauthorized', undefined, { reason: 'invalid_api_key' });
  return request.principal;
}

/**
 * Runs a mutating `/v1` action: one transaction with the Idempotency-Key record, the effect, its
 * ledger entries, events and jobs. Routes call this and nothing else to write.
 */
export async function runAction(deps: HttpDeps, request: FastifyRequest, reply: FastifyReply, action: (ctx: Ctx) => Promise<ActionResult>) {
  const outcome = await commitAction(deps, request, action);
  if (outcome.replayed) reply.header('idempotent-replayed', 'true');
  return reply.code(outcome.status).send(outcome.body);
}

/**
 * A mutation that calls a third party, in two phases: `intent` commits first exactly as an action
 * does (idempotency record, audit record, events — and replayed as it was under the same
 * Idempotency-Key), `call` then runs outside any transaction and commits the outcome in its own,
 * and `answer` reads what the client is told. `call` learns whether this request committed the
 * intent (false on a replay: the intent's call may already have run).
 */
export async function runTwoPhaseAction<Intent extends Record<string, unknown>>(
  deps: HttpDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  phases: {
    intent: (ctx: Ctx) => Promise<Intent>;
    call: (intent: Intent, firstTime: boolean) => Promise<void>;
    answer: (intent: Intent) => Promise<ActionResult>;
  },
) {
  const committed = await commitAction(deps, request, async (ctx) => ({ status: 200, body: await phases.intent(ctx) }));
  if (committed.replayed) reply.header('idempotent-replayed', 'true');
  const intent = committed.body as Intent;
  await phases.call(intent, !committed.replayed);
  const answer = await phases.answer(intent);
  return reply.code(answer.status).send(answer.body);
}

/** The action's transaction (with its idempotency and audit records), committed; its outcome not yet sent. */
async function commitAction(deps: HttpDeps, request: FastifyRequest, action: (ctx: Ctx) => Promise<ActionResult>) {
  const principal = principalOf(request);
  const key = validateIdempotencyKey(request.headers['idempotency-key']);
  // The action knows who asked (four-eyes rules read it: decision 0221).
  const audited = auditedAction(request, principal.actor, (ctx) => action({ ...ctx, actor: principal.actor }));
  const attempt = (speculate: boolean) =>
    runIdempotentAction(deps.db, principal.tenantId, deps.clock.now(), { key, method: request.method, url: request.url, body: request.body }, audited, {
      speculate: speculate ? deps.scope : undefined,
      secrets: deps.secrets,
    });
  let outcome;
  try {
    // A failed speculation (platform/db/speculation.ts) rolled everything back: run it again, reading.
    outcome = await attempt(true).catch((error: unknown) => {
      if (isSpeculationFailed(error)) return attempt(false);
      throw error;
    });
  } finally {
    countsChanged(deps.db, principal.tenantId);
  }
  return outcome;
}

/**
 * The action with its audit record: the row it changes is read before and after (inside the same
 * transaction) where the route names one (platform/audit), and one record is appended, deferred,
 * in that transaction — it commits or rolls back with the change.
 */
function auditedAction(request: FastifyRequest, actor: Principal['actor'], action: (ctx: Ctx) => Promise<ActionResult>) {
  const override = request.routeOptions.config?.audit;
  if (override === false) return action;
  const target = auditTargetOf(request.method, request.routeOptions.url ?? request.url, (request.params ?? {}) as Record<string, unknown>);
  return async (ctx: Ctx): Promise<ActionResult> => {
    const before = target.table && target.objectId ? await readAuditedRow(ctx.tx, target.table, ctx.tenantId, target.objectId) : undefined;
    const result = await action(ctx);
    const after = target.table && target.objectId && before ? await readAuditedRow(ctx.tx, target.table, ctx.tenantId, target.objectId) : undefined;
    const data = (result.body as { data?: { id?: unknown } } | null)?.data;
    const responseId = data && typeof data === 'object' && typeof data.id === 'string' ? data.id : null;
    await appendAudit(ctx.tx, {
      tenantId: ctx.tenantId,
      actor,
      action: override?.action ?? target.action,
      objectType: override?.objectType ?? target.objectType,
      objectId: target.objectId ?? responseId,
      changes: before ? diffRows(before, after) : {},
      ip: request.ip ?? null,
      requestId: request.id,
      at: ctx.now,
    });
    return result;
  };
}

/** A read in the caller's tenant. Reads need no transaction; `tx` is the pool. */
export function readCtx(deps: HttpDeps, request: FastifyRequest): ReadCtx {
  return { tx: deps.db, tenantId: principalOf(request).tenantId, now: deps.clock.now() };
}

/**
 * For reports, exports and analytics only: reads from the replica when DATABASE_READ_URL is set
 * (decision 0324), so they may lag the primary by the replication delay. Never for a read that
 * decides a write.
 */
export function reportCtx(deps: HttpDeps, request: FastifyRequest): ReadCtx {
  return { tx: deps.readDb ?? deps.db, tenantId: principalOf(request).tenantId, now: deps.clock.now() };
}

export type HttpOptions = {
  /** Every event type (the events catalog): the OpenAPI document's `webhooks`. */
  eventTypes?: readonly string[];
  /**
   * Validate every response against its schema and refuse fields the schema does not list (the
   * test harness turns it on). Off, responses are serialized without re-validation.
   */
  validateResponses?: boolean;
  /** The role table (src/api/access.ts); without one, operators may call nothing. */
  access?: AccessPolicy;
  /**
   * Called for every answer whose status the route's OpenAPI operation does not list
   * (platform/http/route-errors.ts); the test harness turns every test into a check of the document.
   */
  onUndocumentedStatus?: (answer: UndocumentedAnswer) => void;
};

/** An answer whose status its route's operation does not list. */
export type UndocumentedAnswer = { method: string; path: string; status: number; listed: number[]; code?: string; reason?: string; message?: string };

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * The double-submit rule for writes authenticated by the session cookie: a browser on another
 * site cannot read `kosh_csrf`, so it cannot send the header; and a browser that says the request
 * is cross-site (Sec-Fetch-Site) is refused outright.
 */
function assertSameSiteWrite(request: FastifyRequest, session: OperatorSession): void {
  const site = request.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none') {
    throw errors.forbidden(`cross-site request refused (Sec-Fetch-Site: ${String(site)})`, 'cross_site_request');
  }
  const token = request.headers['x-csrf-token'];
  if (typeof token !== 'string' || !sameSecret(token, session.csrfToken)) {
    throw errors.forbidden('a write with the session cookie needs the X-CSRF-Token header equal to the kosh_csrf cookie', 'csrf_token_invalid');
  }
}

export async function createHttpServer(deps: HttpDeps, registerRoutes: (app: KoshApp) => void | Promise<void>, options: HttpOptions = {}): Promise<KoshApp> {
  const app: KoshApp = Fastify({
    // Request lines never carry magic-link, checkout or OAuth tokens from the query string.
    loggerInstance: deps.logger.child({}, { serializers: { req: serializeRequest } }) as FastifyBaseLogger,
    bodyLimit: BODY_LIMIT_BYTES,
    return503OnClosing: true,
    requestIdHeader: false,
    genReqId: (req) => {
      const incoming = req.headers['x-request-id'];
      // A random UUID (node's pooled generator): a request id needs no time order, and it is made for every request.
      return typeof incoming === 'string' && /^[\w.:-]{1,128}$/.test(incoming) ? incoming : `req_${randomUUID()}`;
    },
    ajv: { customOptions: { coerceTypes: false } },
    routerOptions: { ignoreTrailingSlash: true },
    trustProxy: deps.config.trustProxy,
    // Bad percent-encoding and over-long path parameters meet every hook and the envelope too.
    frameworkErrors: rerouteFrameworkError(() => app, isV1Path),
  }).withTypeProvider<ZodTypeProvider>();

  setListCountCacheMs(deps.db, deps.config.listCountCacheMs);
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(responseSerializerCompiler(options.validateResponses ?? false));
  app.setErrorHandler(errorHandler);
  // Every route's pattern and methods: a path served with other methods answers 405 with `Allow`.
  const served: { method: string; pattern: RegExp }[] = [];
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) if (method !== 'HEAD' && method !== 'OPTIONS') served.push({ method, pattern: patternRegExp(route.url) });
  });
  acceptEmptyJsonBodies(app);
  app.setNotFoundHandler((request, reply) => {
    const refusal = malformedTargetRefusal(request);
    if (refusal) return errorHandler(refusal, request, reply);
    const path = request.url.split('?')[0] ?? '/';
    const allowed = [...new Set(served.filter((r) => r.pattern.test(path)).map((r) => r.method))];
    // A route of this very method that found nothing (a missing static file) is a 404, not a 405.
    const sameMethod = allowed.includes(request.method) || (request.method === 'HEAD' && allowed.includes('GET'));
    if (allowed.length && !sameMethod) {
      if (allowed.includes('GET')) allowed.push('HEAD');
      reply.header('allow', allowed.join(', '));
      const message = `${request.method} is not allowed on ${path}; it answers ${allowed.join(', ')}`;
      return errorHandler(new KoshError('method_not_allowed', message, { reason: 'method_not_allowed' }), request, reply);
    }
    return reply.code(404).send(toEnvelope(new KoshError('not_found', `no route for ${request.method} ${request.url.split('?')[0]}`), request.id));
  });
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  // Security headers on every answer (an onRequest hook, so errors and 404s carry them too), on the
  // raw response so that a route's own header wins. JSON needs no sources at all; the HTML pages
  // (portal, /docs) set their own policy.
  const headers = securityHeaders({
    contentSecurityPolicy: {
      useDefaults: false,
      directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"], baseUri: ["'none'"], formAction: ["'self'"] },
    },
    // HSTS only where Kosh is served over https: a live deployment (KOSH_PUBLIC_URL is required there).
    strictTransportSecurity: deps.config.mode === 'live' ? { maxAge: 31_536_000, includeSubDomains: true } : false,
    referrerPolicy: { policy: 'no-referrer' },
  });
  app.addHook('onRequest', (_request, reply, done) => {
    for (const [name, value] of headers) reply.raw.setHeader(name, value);
    done();
  });

  await registerRateLimits(app, { db: deps.db, kind: deps.database?.kind ?? 'pglite' });
  const keyCache = new ApiKeyCache(deps.config.apiKeyCacheMs, deps.changes, deps.scope);
  app.addHook('onClose', async () => keyCache.close());
  const { perIp, perKey } = deps.config.rateLimits;
  const v1PerIp = limiter(app, { max: perIp, windowMs: 60_000, what: 'requests from this address', batched: true });
  const v1PerKey = limiter(app, {
    max: perKey,
    windowMs: 60_000,
    what: 'requests with this API key',
    batched: true,
    key: (request) => `key:${request.principal?.actor.id ?? ''}`,
  });

  // The role table's answer for each route, looked up once.
  const roles = new Map<string, Role | undefined>();
  const neededRole = (method: string, pattern: string): Role | undefined => {
    const key = `${method} ${pattern}`;
    if (!roles.has(key)) roles.set(key, options.access?.(method, pattern));
    return roles.get(key);
  };

  // Every /v1 route needs an API key; authentication happens before body parsing. The check reads
  // the route the router matched, not the raw URL: `/%761/…`, `/v%31/…` and absolute-form targets
  // (`http://x/v1/…`) reach the same handlers and must meet the same check.
  app.addHook('onRequest', async (request, reply) => {
    // An unmatched target under /v1 also asks for a key first, so anonymous callers learn nothing
    // about which routes exist.
    const pattern = request.routeOptions.url;
    if (!(pattern === undefined ? isV1Path(request.url) : isV1Route(pattern))) return;
    // A route that authenticates otherwise (the accounting OAuth callback: its single-use state).
    if (request.routeOptions.config?.public === true) return;
    await v1PerIp.hit(request, reply);
    // An API key when one is sent; else the operator's session cookie (the dashboard).
    const sessionCookie = request.headers.authorization === undefined ? cookiesOf(request.headers.cookie).get(SESSION_COOKIE) : undefined;
    if (sessionCookie !== undefined) {
      const session = await authenticateSession(deps.db, sessionCookie, deps.clock.now());
      if (!session || session.tenantMode !== deps.config.mode)
        throw errors.unauthorized('invalid_session', 'the session has ended or is not valid; sign in again');
      request.principal = {
        tenantId: session.tenantId,
        apiKeyId: null,
        mode: session.tenantMode,
        actor: { type: 'user', id: session.userId, label: session.email, role: session.role, sessionId: session.sessionId, csrfToken: session.csrfToken },
      };
      if (!SAFE_METHODS.has(request.method)) assertSameSiteWrite(request, session);
    } else {
      request.principal = await authenticateApiKey(deps.db, request.headers.authorization, deps.config.mode, deps.clock.now(), keyCache);
    }
    await v1PerKey.hit(request, reply);
    // Roles (DESIGN §17, §21): an operator, and an API key alike, needs the route's minimum role.
    const actor = request.principal.actor;
    if (actor.type !== 'system' && pattern !== undefined) {
      const needed = neededRole(request.method, pattern);
      if (needed === undefined) throw errors.forbidden('no role may call this route (it has no entry in the role table)', 'role_forbidden');
      if (!hasRole(actor.role, needed)) throw errors.forbidden(`this needs the ${needed} role or higher; you are ${actor.role}`, 'role_forbidden');
    }
    // A malformed Idempotency-Key is refused on every /v1 write, also on those that store nothing (previews).
    if (!SAFE_METHODS.has(request.method)) validateIdempotencyKey(request.headers['idempotency-key']);
  });

  // Before validation, the idempotency fingerprint or a handler walks the body recursively.
  app.addHook('preValidation', async (request) => assertBodyDepth(request.body));

  // Graceful shutdown: a request still in flight when close() starts is answered with
  // `Connection: close`, so its keep-alive socket ends with it. Otherwise close() waits out the
  // keep-alive timeout (72 s) of every client that keeps its connection open.
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onSend', async (_request, reply) => {
    if (closing) reply.header('connection', 'close');
  });

  const report = options.onUndocumentedStatus;
  if (report) {
    app.addHook('onSend', async (request, reply, payload) => {
      const route = request.routeOptions;
      if (route.url === undefined || request.method === 'HEAD' || request.method === 'OPTIONS') return payload;
      const shape = routeShapeOf({ method: request.method, url: route.url, schema: route.schema, config: route.config });
      const rateLimited = app.hasDecorator('rateLimit');
      if (documentsStatus(shape, reply.statusCode, { rateLimited }) !== false) return payload;
      let error: { code?: string; reason?: string; message?: string } = {};
      try {
        error = (JSON.parse(String(payload)) as { error?: typeof error }).error ?? {};
      } catch {
        // not an envelope
      }
      const listed = [...successStatuses(shape), ...errorStatuses(shape, { rateLimited }).keys()].sort((a, b) => a - b);
      report({ method: request.method, path: openApiPath(route.url), status: reply.statusCode, listed, ...error });
      return payload;
    });
  }

  const metrics = registerMetrics(
    app,
    () => pendingJobCount(deps.db),
    () => jobBacklog(deps.db, deps.clock.now()),
  );

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Kosh API',
        description: API_INTRODUCTION,
        version: deps.version,
      },
      components: {
        securitySchemes: {
          apiKey: { type: 'http', scheme: 'bearer', description: 'sk_test_… or sk_live_…' },
          operatorSession: {
            type: 'apiKey',
            in: 'cookie',
            name: SESSION_COOKIE,
            description:
              'The dashboard operator session set by POST /v1/auth/sign-in (used when no Authorization header is sent). A write with it also needs the X-CSRF-Token header equal to the kosh_csrf cookie, and is refused when the browser says it is cross-site. The operator routes (/v1/auth/me, sign-out, TOTP) take only this.',
          },
        },
      },
      security: [{ apiKey: [] }, { operatorSession: [] }],
    },
    // The route's error statuses (its own declarations and the framework's) go to completeDocument.
    transform: (input) => {
      const out = jsonSchemaTransform(input);
      const schema = out.schema as Record<string, unknown>;
      delete schema.errors;
      if (!schema.hide) {
        const statuses = errorStatuses(routeShapeOf(input.route), { rateLimited: app.hasDecorator('rateLimit') });
        schema['x-kosh-errors'] = Object.fromEntries(statuses);
      }
      return out;
    },
    transformObject: (input) =>
      completeDocument(jsonSchemaTransformObject(input) as Record<string, unknown>, {
        serverUrl: deps.config.publicUrl,
        eventTypes: options.eventTypes ?? [],
      }) as ReturnType<typeof jsonSchemaTransformObject>,
  });
  // staticCSP: the documentation pages get a policy listing their own scripts (by hash). Swagger UI
  // sets inline styles from its script, so style-src allows inline styles (hashes would disable
  // that); plain-http test deployments drop upgrade-insecure-requests.
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    staticCSP: true,
    transformStaticCSP: (header) => {
      const withStyles = header.replace(/style-src [^;]*;/, "style-src 'self' 'unsafe-inline';");
      return deps.config.mode === 'live' ? withStyles : withStyles.replace(/\s*upgrade-insecure-requests;?/, '');
    },
  });

  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));
  app.get('/', { schema: { hide: true } }, async () => frontDoor(deps.version));
  app.get('/readyz', { schema: { hide: true } }, async (_request, reply) => {
    try {
      // Answered within READY_TIMEOUT_MS whatever the database does: a load balancer's check must not hang.
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('database did not answer in time')), READY_TIMEOUT_MS);
      });
      // The queue's backlog rides along (decision 0321): the process is ready whatever it says.
      const jobs = await Promise.race([sql`SELECT 1`.execute(deps.db).then(() => jobBacklog(deps.db, deps.clock.now())), timeout]).finally(() =>
        clearTimeout(timer),
      );
      return { status: 'ready', database: 'ok', jobs };
    } catch {
      return reply.code(503).send({ status: 'unavailable', database: 'unreachable' });
    }
  });
  app.get('/version', { schema: { hide: true } }, async () => ({ name: 'kosh', version: deps.version, api_version: '1.0.0' }));
  app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
    // KOSH_METRICS_TOKEN, when set, is required; a live deployment never serves metrics without one.
    const token = deps.config.metricsToken;
    if (token || deps.config.mode === 'live') {
      const given = bearerToken(request.headers.authorization);
      if (!token || !given || !sameSecret(given, token)) {
        throw new KoshError(
          'unauthorized',
          token ? 'metrics require Authorization: Bearer <KOSH_METRICS_TOKEN>' : 'metrics are closed in live mode until KOSH_METRICS_TOKEN is set',
          {
            reason: 'invalid_metrics_token',
          },
        );
      }
    }
    reply.type(metrics.contentType);
    return metrics.metrics();
  });

  await registerRoutes(app);
  return app;
}

/** A route pattern (`/v1/plans/:id`, `/dashboard/*`) as a regular expression over request paths. */
function patternRegExp(url: string): RegExp {
  const source = url
    .split(/(:[A-Za-z_][A-Za-z0-9_]*|\*)/)
    .map((part) => (part === '*' ? '.*' : part.startsWith(':') ? '[^/]+' : part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${source.replace(/\/$/, '')}/?$`);
}

function routeShapeOf(route: { method: string | string[]; url: string; schema?: unknown; config?: unknown }): RouteShape {
  return {
    method: Array.isArray(route.method) ? String(route.method[0]) : route.method,
    url: route.url,
    schema: route.schema as RouteShape['schema'],
    config: route.config as RouteShape['config'],
  };
}

/** Whether a matched route (its pattern, e.g. `/v1/plans/:id`) is under `/v1`. Unmatched: no. */
export function isV1Route(pattern: string | undefined): boolean {
  return pattern !== undefined && (pattern === '/v1' || pattern.startsWith('/v1/'));
}

/** Whether a raw request target (origin- or absolute-form, percent-encoded or not) names a /v1 path. */
export function isV1Path(target: string): boolean {
  let path: string;
  try {
    path = decodeURIComponent(new URL(target, 'http://localhost').pathname);
  } catch {
    path = target;
  }
  return isV1Route(path);
}

export { isUuid };
