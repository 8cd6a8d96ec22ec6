import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors, isResponseSerializationError } from 'fastify-type-provider-zod';
import { errorCatalog, fieldSentence, KoshError, type ErrorDetail, type ErrorReason } from '../errors.js';
import { isDatabaseUnavailable } from '../db/errors.js';

/** The single place where any failure becomes the wire envelope of DESIGN §3. */
export function toEnvelope(error: KoshError, requestId?: string) {
  const entry = errorCatalog[error.kind];
  return {
    error: {
      ...(requestId ? { request_id: requestId } : {}),
      code: entry.code,
      // A 5xx never leaks internals: its message is the catalog's fixed text.
      message: entry.status >= 500 ? entry.message : error.message,
      ...(error.reason ? { reason: error.reason } : {}),
      ...(error.details?.length ? { details: error.details } : {}),
    },
  };
}

const PG_CLIENT_ERRORS: Record<string, { kind: 'conflict' | 'validation_failed'; message: string }> = {
  '23505': { kind: 'conflict', message: 'a record with these unique values already exists' },
  '22P02': { kind: 'validation_failed', message: 'a value has the wrong format' },
  '22003': { kind: 'validation_failed', message: 'a number is out of range' },
  '22001': { kind: 'validation_failed', message: 'a value is too long' },
  '22007': { kind: 'validation_failed', message: 'a date or time is invalid' },
  '22008': { kind: 'validation_failed', message: 'a date or time is out of range' },
  // U+0000 is valid JSON but PostgreSQL stores it neither in text (22021) nor in jsonb (22P05).
  '22021': { kind: 'validation_failed', message: 'a text value contains a character that cannot be stored (such as U+0000)' },
  '22P05': { kind: 'validation_failed', message: 'a text value contains a character that cannot be stored (such as U+0000)' },
};

function fieldOf(context: string | undefined, instancePath: string): string {
  const path = instancePath.replace(/^\//, '').replace(/\//g, '.');
  const prefix = context && context !== 'body' ? `${context}` : '';
  if (!path) return prefix || 'body';
  return prefix ? `${prefix}.${path}` : path;
}

/** How a message names the field: `currency`, `from` (a query parameter), `idempotency-key header`. */
function labelOf(context: string | undefined, instancePath: string): string {
  const path = instancePath.replace(/^\//, '').replace(/\//g, '.');
  if (context === 'headers') return path ? `${path} header` : 'headers';
  if (context === 'params' || context === 'querystring') return path || (context === 'params' ? 'path' : 'query');
  return path || 'body';
}

type Issue = {
  keyword?: string;
  code?: string;
  message?: string;
  values?: unknown[];
  params?: {
    values?: unknown[];
    errors?: Issue[][];
    expected?: string;
    origin?: string;
    minimum?: number | bigint;
    maximum?: number | bigint;
    inclusive?: boolean;
    exact?: boolean;
    format?: string;
    keys?: string[];
    divisor?: number;
  };
  errors?: Issue[][];
};

/** The allowed values behind an enum, literal or union-of-literals issue (empty when not one). */
function allowedValues(issue: Issue): unknown[] {
  const values = issue.params?.values ?? issue.values;
  if (Array.isArray(values)) return values;
  const branches = issue.params?.errors ?? issue.errors;
  if ((issue.keyword ?? issue.code) === 'invalid_union' && Array.isArray(branches)) {
    return [...new Set(branches.flat().flatMap((branch) => allowedValues(branch)))];
  }
  return [];
}

const TYPE_WORDS: Record<string, string> = {
  string: 'text',
  number: 'a number',
  int: 'a whole number',
  boolean: 'true or false',
  object: 'an object',
  array: 'a list',
  null: 'null',
  date: 'a date',
  bigint: 'a whole number',
};

const FORMAT_WORDS: Record<string, string> = {
  uuid: 'must be a UUID',
  email: 'must be an e-mail address',
  url: 'must be a URL',
  datetime: 'must be a date-time like 2026-04-01T09:30:00Z',
  date: 'must be a date like 2026-04-01',
  time: 'must be a time like 09:30:00',
  e164: 'must be a phone number in E.164 form, like +919876543210',
};

const SIZE_UNITS: Record<string, string> = { string: 'characters', array: 'items', set: 'items', map: 'entries', file: 'bytes' };

type IssueParams = NonNullable<Issue['params']>;

/** A size or value bound (too_small / too_big) in plain words; null when the issue names no bound. */
function boundWords(code: 'too_small' | 'too_big', p: IssueParams): string | null {
  const bound = code === 'too_small' ? p.minimum : p.maximum;
  if (bound === undefined) return null;
  const unit = p.origin ? SIZE_UNITS[p.origin] : undefined;
  if (code === 'too_small' && unit && Number(bound) === 1 && p.inclusive !== false) return 'must not be empty';
  const exact = p.exact
    ? 'exactly'
    : code === 'too_small'
      ? p.inclusive === false
        ? 'more than'
        : 'at least'
      : p.inclusive === false
        ? 'less than'
        : 'at most';
  if (unit) return `must have ${exact} ${String(bound)} ${unit}`;
  const verb = code === 'too_small' && p.inclusive === false ? 'greater than' : code === 'too_big' && p.inclusive === false ? 'less than' : exact;
  return `must be ${verb} ${String(bound)}`;
}

/** Zod's own English (`Invalid input: expected string, received undefined`) in plain words; null when unknown. */
function plainWords(issue: Issue, message: string, root: boolean): string | null {
  const code = issue.keyword ?? issue.code;
  const p = issue.params ?? {};
  switch (code) {
    case 'invalid_type':
      // A missing body reaches the schema as null (an empty JSON body is no body).
      if (/received undefined$/.test(message) || (root && /received null$/.test(message))) return 'is required';
      return p.expected && TYPE_WORDS[p.expected] ? `must be ${TYPE_WORDS[p.expected]}` : null;
    case 'too_small':
    case 'too_big':
      return boundWords(code, p);
    case 'invalid_format':
      return p.format && FORMAT_WORDS[p.format] ? FORMAT_WORDS[p.format]! : null;
    case 'not_multiple_of':
      return p.divisor !== undefined ? `must be a multiple of ${p.divisor}` : null;
    case 'unrecognized_keys':
      return p.keys?.length ? `has ${p.keys.length === 1 ? 'a field' : 'fields'} it does not take: ${p.keys.join(', ')}` : null;
    default:
      return null;
  }
}

/**
 * The one place a schema's complaint becomes words: the schema's own message when it wrote one
 * (`must be a 3-letter ISO 4217 code`); Zod's defaults in plain words (`is required`, `must be a
 * whole number`); an unknown enum value lists what is allowed (`must be one of: a, b, c`).
 */
function messageOf(issue: Issue, instancePath: string, missing: boolean): string {
  const message = issue.message ?? 'invalid';
  // Absent from the request: whatever the schema's message for a wrong value, it is missing.
  if (missing && (issue.keyword ?? issue.code) === 'invalid_type') {
    const values = allowedValues(issue).filter((v) => typeof v === 'string' || typeof v === 'number');
    return values.length > 0 && values.length <= 60 ? `is required (must be one of: ${values.join(', ')})` : 'is required';
  }
  const values = allowedValues(issue).filter((v) => typeof v === 'string' || typeof v === 'number');
  const zodDefault = /^(Invalid|Too (big|small)|Unrecognized)/.test(message);
  if (values.length > 0 && values.length <= 60) {
    const list = `must be one of: ${values.join(', ')}`;
    if (/received undefined$/.test(message)) return `is required (${list})`;
    return zodDefault ? list : `${message} (${list})`;
  }
  if (!zodDefault) return message;
  return plainWords(issue, message, instancePath === '/' || instancePath === '') ?? message;
}

/** Fastify's complaints about a request body it could not parse (size, JSON, media type), in plain words. */
function bodyParseError(fe: (FastifyError & { code?: string }) | undefined): KoshError | undefined {
  if (fe?.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
    return new KoshError('payload_too_large', 'request body exceeds the 1 MiB limit', { reason: 'payload_too_large' });
  }
  // secure-json-parse refuses prototype keys (they could poison objects built from the body).
  if (fe?.name === 'SyntaxError' && /forbidden prototype property/i.test(fe.message ?? '')) {
    return new KoshError(
      'validation_failed',
      'request body contains a "__proto__" or "constructor.prototype" key, which is refused (it could alter JavaScript objects); rename or remove it',
      { reason: 'prototype_key' },
    );
  }
  if (fe?.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || fe?.name === 'SyntaxError') {
    return new KoshError('validation_failed', 'request body is not valid JSON', { reason: 'malformed_json' });
  }
  if (fe?.code === 'FST_ERR_CTP_EMPTY_JSON_BODY') {
    return new KoshError('validation_failed', 'request body is empty but Content-Type is application/json', { reason: 'malformed_json' });
  }
  if (fe?.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
    return new KoshError('validation_failed', 'unsupported Content-Type; send application/json', { reason: 'unsupported_media_type' });
  }
  return undefined;
}

/** The part of the request a validation context names (body, querystring, params, headers). */
export type RequestParts = { body?: unknown; query?: unknown; params?: unknown; headers?: unknown };

/** Whether the value at a validation issue's path is absent from the request (undefined, or a missing body). */
function isMissing(parts: RequestParts | undefined, context: string | undefined, instancePath: string): boolean {
  if (!parts) return false;
  let value: unknown = context === 'querystring' ? parts.query : context === 'params' ? parts.params : context === 'headers' ? parts.headers : parts.body;
  const path = instancePath.replace(/^\//, '');
  if (path === '') return value === undefined || value === null;
  for (const key of path.split('/')) {
    if (value === null || typeof value !== 'object') return false;
    value = Object.prototype.hasOwnProperty.call(value, key) ? (value as Record<string, unknown>)[key] : undefined;
  }
  return value === undefined;
}

/** Maps anything thrown during a request to a KoshError. Unknown causes become a 500. */
export function classifyError(error: unknown, request?: RequestParts): { koshError: KoshError; unexpected: boolean } {
  // A 503 from the catalog (`unavailable`: a provider not configured here) is an expected answer.
  if (error instanceof KoshError) return { koshError: error, unexpected: error.status >= 500 && error.kind !== 'unavailable' };
  const fe = error as FastifyError & { validationContext?: string; code?: string };

  if (hasZodFastifySchemaValidationErrors(fe)) {
    const details: ErrorDetail[] = fe.validation.map((v) => ({
      field: fieldOf(fe.validationContext, v.instancePath),
      message: messageOf(v as Issue, v.instancePath, isMissing(request, fe.validationContext, v.instancePath)),
    }));
    // `currency is required; status must be one of: draft, open`: each field named as a sentence's subject.
    const summary = fe.validation.map((v, i) => fieldSentence(labelOf(fe.validationContext, v.instancePath), details[i]!.message)).join('; ');
    return { koshError: new KoshError('validation_failed', summary, { details }), unexpected: false };
  }
  if (fe && typeof fe === 'object' && 'validation' in fe && Array.isArray(fe.validation)) {
    return { koshError: new KoshError('validation_failed', fe.message), unexpected: false };
  }
  if (isResponseSerializationErrorSafe(fe)) {
    return { koshError: new KoshError('internal_error', undefined, { cause: error }), unexpected: true };
  }
  const unreadableBody = bodyParseError(fe);
  if (unreadableBody) return { koshError: unreadableBody, unexpected: false };
  if (isDatabaseUnavailable(error)) {
    return {
      koshError: new KoshError('database_unavailable', undefined, { reason: 'database_unavailable', cause: error }),
      unexpected: false,
    };
  }
  const pg = fe?.code ? PG_CLIENT_ERRORS[fe.code] : undefined;
  if (pg) return { koshError: new KoshError(pg.kind, pg.message, { cause: error }), unexpected: false };
  if (typeof fe?.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
    return { koshError: new KoshError('validation_failed', fe.message, { reason: fe.code?.toLowerCase() as ErrorReason | undefined }), unexpected: false };
  }
  return { koshError: new KoshError('internal_error', undefined, { cause: error }), unexpected: true };
}

function isResponseSerializationErrorSafe(e: unknown): boolean {
  return typeof e === 'object' && e !== null && (e as { code?: string }).code === 'FST_ERR_RESPONSE_SERIALIZATION' && isResponseSerializationError(e);
}

export function errorHandler(error: unknown, request: FastifyRequest, reply: FastifyReply) {
  const { koshError, unexpected } = classifyError(error, request);
  if (unexpected) {
    request.log.error({ err: error }, 'request failed');
  } else if (koshError.kind === 'database_unavailable') {
    request.log.warn({ err: error }, 'database unavailable');
    reply.header('retry-after', '1');
  } else {
    request.log.info({ code: koshError.kind, reason: koshError.reason, msg: koshError.message }, 'request refused');
  }
  // 413 from the body parser is answered with 413; others keep their catalog status.
  const status = koshError.status;
  return reply.code(status).type('application/json; charset=utf-8').serializer(JSON.stringify).send(toEnvelope(koshError, request.id));
}
