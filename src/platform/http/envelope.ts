import { z } from 'zod';
import { isKnownCurrency } from '../currencies.js';
import { errors } from '../errors.js';

/** `{ data: ... }` — the success envelope of DESIGN §3. */
export function dataEnvelope<T extends z.ZodType>(schema: T) {
  return z.object({ data: schema });
}

/** Lists satisfy both SPEC descriptions: `data` plus `object`, `has_more`, `total_count`. */
export function listEnvelope<T extends z.ZodType>(item: T) {
  return z.object({
    data: z.array(item),
    object: z.literal('list'),
    has_more: z.boolean(),
    total_count: z.int().min(0),
  });
}

export const errorEnvelope = z
  .object({
    error: z.object({
      code: z.string().describe('One of SPEC §7: validation_failed, unauthorized, not_found, conflict, internal_error'),
      message: z.string().describe('For people; may change'),
      request_id: z.string().optional().describe('The X-Request-Id of the request: quote it when reporting a problem'),
      reason: z.string().optional().describe('A finer machine-readable word (e.g. invalid_state, idempotency_key_in_use)'),
      details: z.array(z.object({ field: z.string(), message: z.string() })).optional(),
    }),
  })
  .meta({ id: 'Error' });

/**
 * One list request's window: `limit` with `page` (offset paging) or a cursor (`startingAfter` /
 * `endingBefore`, an object id). `paginate` (platform/db/paginate.ts) fills `hasMore`.
 */
export type Page = { limit: number; page: number; offset: number; startingAfter?: string; endingBefore?: string; hasMore?: boolean };

export const MAX_LIST_LIMIT = 1000;
export const DEFAULT_LIST_LIMIT = 50;

/**
 * `limit` (1..1000, default 50; larger values are capped, not refused) and `page` (>= 1).
 * Spread into a route's querystring schema.
 */
export function paginationQuery(maxLimit = MAX_LIST_LIMIT, defaultLimit = DEFAULT_LIST_LIMIT) {
  return {
    limit: z.coerce
      .number()
      .int()
      .min(1)
      .max(Number.MAX_SAFE_INTEGER)
      .default(defaultLimit)
      .transform((v) => Math.min(v, maxLimit))
      .describe(`1..${maxLimit}, default ${defaultLimit}; larger values are capped`),
    page: z.coerce.number().int().min(1).max(1_000_000).default(1).describe('1-based page number (offset paging); ignored with a cursor'),
    starting_after: z
      .uuid({ message: 'must be the id of an object in this list' })
      .optional()
      .describe('Cursor: the objects after this id, in list order; not together with ending_before (400)'),
    ending_before: z
      .uuid({ message: 'must be the id of an object in this list' })
      .optional()
      .describe('Cursor: the objects before this id, in list order; not together with starting_after (400)'),
  };
}

export function toPage(query: { limit: number; page: number; starting_after?: string; ending_before?: string }): Page {
  if (query.starting_after !== undefined && query.ending_before !== undefined) {
    throw errors.invalidField('ending_before', 'give starting_after or ending_before, not both');
  }
  const cursor = query.starting_after !== undefined || query.ending_before !== undefined;
  return {
    limit: query.limit,
    page: cursor ? 1 : query.page,
    offset: cursor ? 0 : (query.page - 1) * query.limit,
    ...(query.starting_after !== undefined ? { startingAfter: query.starting_after } : {}),
    ...(query.ending_before !== undefined ? { endingBefore: query.ending_before } : {}),
  };
}

export function listResponse<T>(items: T[], total: number, page: Page) {
  return {
    data: items,
    object: 'list' as const,
    // Exact when the list was read by `paginate` (limit + 1 rows); else derived from the count.
    has_more: page.hasMore ?? page.offset + items.length < total,
    total_count: total,
  };
}

/** Path parameter `{id}`: a bad UUID is a 400, not a 404. */
export const idParams = z.object({ id: z.uuid({ message: 'must be a UUID' }) });

/** Shared field helpers: bounded strings and non-negative safe integers. */
export const fields = {
  text: (max = 255) => z.string().max(max),
  requiredText: (max = 255) => z.string().trim().min(1).max(max),
  /**
   * A name shown on one line — in e-mail headers (From, Subject), PDFs, the dashboard: no control
   * characters (CR/LF would make every e-mail carrying it fail), no line or paragraph separators.
   */
  singleLineName: (max = 200) =>
    z
      .string()
      .trim()
      .min(1)
      .max(max)
      .refine((v) => !CONTROL_CHARACTERS.test(v), 'must be one line without control characters'),
  minorUnits: () => z.int().min(0).max(Number.MAX_SAFE_INTEGER),
  positiveMinorUnits: () => z.int().min(1).max(Number.MAX_SAFE_INTEGER),
  /** An ISO 4217 code from the one table (platform/currencies.ts), upper-cased; anything else is a 400. */
  currency: () =>
    z
      .string()
      .regex(/^[A-Za-z]{3}$/, 'must be a 3-letter ISO 4217 code')
      .transform((v) => v.toUpperCase())
      .refine(isKnownCurrency, 'is not an ISO 4217 currency code'),
  metadata: () =>
    z
      .record(z.string().max(40), z.union([z.string().max(500), z.number(), z.boolean(), z.null()]))
      .refine((m) => Object.keys(m).length <= 50, 'at most 50 keys'),
  timestamp: () => z.string().describe('RFC 3339 date-time in UTC'),
  /**
   * An RFC 3339 date-time given by a client, with its offset, between 1970-01-01T00:00:00Z and
   * 9999-12-31T23:59:59.999Z once in UTC: every date a request may carry goes through this.
   */
  instant: (message = 'must be an RFC 3339 date-time') =>
    z.iso.datetime({ offset: true, message }).refine(inInstantRange, 'must be between 1970-01-01T00:00:00Z and 9999-12-31T23:59:59Z'),
};

// C0 and C1 controls (tab, CR and LF among them), DEL, and U+2028/U+2029.
// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

const MIN_INSTANT_MS = 0;
const MAX_INSTANT_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/** Whether an RFC 3339 text (or a Date) falls within 1970–9999 in UTC. */
export function inInstantRange(value: string | Date): boolean {
  const ms = typeof value === 'string' ? Date.parse(value) : value.getTime();
  return Number.isFinite(ms) && ms >= MIN_INSTANT_MS && ms <= MAX_INSTANT_MS;
}

/** The JSON Schema keyword that carries a request body's hand-written example (see `bodyExample`). */
export const REQUEST_EXAMPLE_KEY = 'x-request-example';

/**
 * A request body's example for the OpenAPI document: `.meta(bodyExample({ … }))` on the body
 * schema. (zod drops `examples` from the input schema of a body with defaults or transforms; this
 * keyword survives, and platform/http/openapi.ts moves it to the media type's `example`.)
 * test/platform/openapi-examples.test.ts sends every example to a fresh tenant.
 */
export function bodyExample(example: Record<string, unknown>): Record<string, unknown> {
  return { [REQUEST_EXAMPLE_KEY]: example };
}
