import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors, isResponseSerializationError } from 'fastify-type-provider-zod';
import { errorCatalog, KoshError, type ErrorDetail, type ErrorReason } from '../errors.js';
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

type Issue = { keyword?: string; code?: string; message?: string; values?: unknown[]; params?: { values?: unknown[]; errors?: Issue[][] }; errors?: Issue[][] };

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

/** `must be one of: a, b, c` for an unknown enum value; the schema's own words are kept before it. */
function messageOf(issue: Issue): string {
  const message = issue.message ?? 'invalid';
  const values = allowedValues(issue).filter((v) => typeof v === 'string' || typeof v === 'number');
  if (values.length === 0 || values.length > 60) return message;
  const list = `must be one of: ${values.join(', ')}`;
  return /^Invalid (option|input)/.test(message) ? list : `${message} (${list})`;
}

/** Maps anything thrown during a request to a KoshError. Unknown causes become a 500. */
export function classifyError(error: unknown): { koshError: KoshError; unexpected: boolean } {
  // A 503 from the catalog (`unavailable`: a provider not configured here) is an expected answer.
  if (error instanceof KoshError) return { koshError: error, unexpected: error.status >= 500 && error.kind !== 'unavailable' };
  const fe = error as FastifyError & { validationContext?: string; code?: string };

  if (hasZodFastifySchemaValidationErrors(fe)) {
    const details: ErrorDetail[] = fe.validation.map((v) => ({
      field: fieldOf(fe.validationContext, v.instancePath),
      message: messageOf(v as Issue),
    }));
    const summary = details.map((d) => `${d.field}: ${d.message}`).join('; ');
    return { koshError: new KoshError('validation_failed', `validation failed: ${summary}`, { details }), unexpected: false };
  }
  if (fe && typeof fe === 'object' && 'validation' in fe && Array.isArray(fe.validation)) {
    return { koshError: new KoshError('validation_failed', fe.message), unexpected: false };
  }
  if (isResponseSerializationErrorSafe(fe)) {
    return { koshError: new KoshError('internal_error', undefined, { cause: error }), unexpected: true };
  }
  if (fe?.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
    return { koshError: new KoshError('payload_too_large', 'request body exceeds the 1 MiB limit', { reason: 'payload_too_large' }), unexpected: false };
  }
  if (fe?.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || fe?.name === 'SyntaxError') {
    return { koshError: new KoshError('validation_failed', 'request body is not valid JSON', { reason: 'malformed_json' }), unexpected: false };
  }
  if (fe?.code === 'FST_ERR_CTP_EMPTY_JSON_BODY') {
    return {
      koshError: new KoshError('validation_failed', 'request body is empty but Content-Type is application/json', { reason: 'malformed_json' }),
      unexpected: false,
    };
  }
  if (fe?.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
    return {
      koshError: new KoshError('validation_failed', 'unsupported Content-Type; send application/json', { reason: 'unsupported_media_type' }),
      unexpected: false,
    };
  }
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
  const { koshError, unexpected } = classifyError(error);
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
