import { errorCatalog, type ErrorKind } from '../errors.js';

/**
 * The statuses a route answers, in one place: the OpenAPI document lists exactly these for the
 * route's operation (platform/http/openapi.ts), and the test harness checks every answer against
 * them (test/support/harness.ts). They are
 *   - the success statuses of the route's `response` schema;
 *   - the errors the route declares in its schema — `errors: ['not_found', 'conflict']`, kinds
 *     from the error catalog (platform/errors.ts) — for what its handler raises: an id in the
 *     body or query that is looked up, a state refusal, a business rule, a missing provider;
 *   - what the framework answers on every route of its shape (FRAMEWORK_ERRORS below): a route
 *     declares none of these.
 */

declare module 'fastify' {
  interface FastifySchema {
    /**
     * The error kinds (platform/errors.ts) this route's handler raises beyond what the framework
     * answers on every route of its shape (platform/http/route-errors.ts). The OpenAPI operation
     * lists them, and the test harness fails when the route answers a status it does not list.
     */
    errors?: readonly ErrorKind[];
  }
}

/** Why each framework status can happen, for the document's descriptions and failure messages. */
export type DocumentedError = { status: number; kind: ErrorKind; why: string };

export type RouteShape = {
  method: string;
  /** The route's pattern: `/v1/plans/:id`. */
  url: string;
  schema?: {
    body?: unknown;
    querystring?: unknown;
    params?: unknown;
    response?: Record<string | number, unknown>;
    errors?: readonly ErrorKind[];
    hide?: boolean;
  };
  config?: { public?: boolean };
};

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export function isV1Pattern(url: string): boolean {
  return url === '/v1' || url.startsWith('/v1/');
}

/** Routes that take no credential (the portal login, registration, password reset, OAuth callbacks). */
function isAnonymous(route: RouteShape): boolean {
  if (isV1Pattern(route.url)) return route.config?.public === true;
  return !route.url.startsWith('/portal/') || route.url === '/portal/api/login';
}

/** What the framework answers on every route of this shape, whatever its handler does. */
export function frameworkErrors(route: RouteShape, options: { rateLimited: boolean }): DocumentedError[] {
  const method = route.method.toUpperCase();
  const out: DocumentedError[] = [
    { status: 400, kind: 'validation_failed', why: 'a field, the query, a path id, the Idempotency-Key header or the request target is invalid' },
    { status: 503, kind: 'database_unavailable', why: 'the database is unavailable (retry after Retry-After), or the server is shutting down' },
  ];
  if (!isAnonymous(route)) out.push({ status: 401, kind: 'unauthorized', why: 'no valid API key or session' });
  if (isV1Pattern(route.url) && !isAnonymous(route)) {
    out.push({
      status: 403,
      kind: 'forbidden',
      why: "the key's or operator's role is below the route's, or a session write lacks its CSRF token or is cross-site",
    });
    if (MUTATING.has(method)) {
      out.push({ status: 409, kind: 'conflict', why: 'the Idempotency-Key is in use by a request still running' });
      out.push({ status: 422, kind: 'unprocessable', why: 'the Idempotency-Key was used with another body' });
    }
  }
  // The portal's writes with its session cookie: the same double-submit and cross-site rules.
  if (route.url.startsWith('/portal/') && !isAnonymous(route) && MUTATING.has(method)) {
    out.push({ status: 403, kind: 'forbidden', why: 'a portal write lacks its X-CSRF-Token or is cross-site' });
  }
  if (route.url.includes(':')) out.push({ status: 404, kind: 'not_found', why: 'no object with this id in the tenant' });
  if (MUTATING.has(method)) out.push({ status: 413, kind: 'payload_too_large', why: 'the body is larger than 1 MiB' });
  if (options.rateLimited) out.push({ status: 429, kind: 'rate_limited', why: 'too many requests: retry after Retry-After' });
  return out;
}

/** The success statuses (2xx, 3xx) of the route's response schema. */
export function successStatuses(route: RouteShape): number[] {
  return Object.keys(route.schema?.response ?? {})
    .map(Number)
    .filter((s) => s >= 200 && s < 400);
}

/** Every error status of the route: the framework's and its own declarations. */
export function errorStatuses(route: RouteShape, options: { rateLimited: boolean }): Map<number, ErrorKind[]> {
  const out = new Map<number, ErrorKind[]>();
  const add = (status: number, kind: ErrorKind) => out.set(status, [...new Set([...(out.get(status) ?? []), kind])]);
  for (const e of frameworkErrors(route, options)) add(e.status, e.kind);
  for (const kind of route.schema?.errors ?? []) add(errorCatalog[kind].status, kind);
  return out;
}

/**
 * Whether the route may answer `status` (500 is never listed: it is a defect wherever it
 * happens). Undefined when the route is not in the document (hidden: /openapi.json, /healthz…).
 */
export function documentsStatus(route: RouteShape, status: number, options: { rateLimited: boolean }): boolean | undefined {
  if (route.schema?.hide || !route.schema) return undefined;
  if (status === 500) return true;
  if (status < 400) {
    const success = successStatuses(route);
    return success.length === 0 || success.includes(status);
  }
  return errorStatuses(route, options).has(status);
}

/** `/v1/plans/:id` → `/v1/plans/{id}` (the OpenAPI form). */
export function openApiPath(url: string): string {
  return url.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}');
}
