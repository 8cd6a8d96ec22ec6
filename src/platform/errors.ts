/**
 * The one closed error catalog. Every failure the API reports is a KoshError of one of these
 * kinds; `toEnvelope` in platform/http maps it to the wire. Codes stay within SPEC §7's set (plus
 * `rate_limited`, for limits SPEC does not show);
 * `reason` carries the finer machine-readable word.
 */
export const errorCatalog = {
  validation_failed: { status: 400, code: 'validation_failed', message: 'validation failed' },
  unauthorized: { status: 401, code: 'unauthorized', message: 'missing or invalid API key or session' },
  forbidden: { status: 403, code: 'unauthorized', message: 'not allowed' },
  not_found: { status: 404, code: 'not_found', message: 'not found' },
  conflict: { status: 409, code: 'conflict', message: 'conflict' },
  payload_too_large: { status: 413, code: 'validation_failed', message: 'request body too large' },
  unprocessable: { status: 422, code: 'validation_failed', message: 'validation failed' },
  /** Over a request budget (platform/http/rate-limits); answered with Retry-After and RateLimit-* headers. */
  rate_limited: { status: 429, code: 'rate_limited', message: 'too many requests' },
  failed_dependency: { status: 424, code: 'internal_error', message: 'a dependent step failed' },
  internal_error: { status: 500, code: 'internal_error', message: 'internal error' },
  unavailable: { status: 503, code: 'internal_error', message: 'service not available on this deployment' },
} as const;

export type ErrorKind = keyof typeof errorCatalog;

export type ErrorDetail = { field: string; message: string };

export class KoshError extends Error {
  readonly kind: ErrorKind;
  readonly reason: string | undefined;
  readonly details: ErrorDetail[] | undefined;

  constructor(kind: ErrorKind, message?: string, options: { reason?: string; details?: ErrorDetail[]; cause?: unknown } = {}) {
    super(message ?? errorCatalog[kind].message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'KoshError';
    this.kind = kind;
    this.reason = options.reason;
    this.details = options.details;
  }

  get status(): number {
    return errorCatalog[this.kind].status;
  }
}

export const errors = {
  validation: (message: string, details?: ErrorDetail[], reason?: string) =>
    new KoshError('validation_failed', message, { details, reason }),
  invalidField: (field: string, message: string) =>
    new KoshError('validation_failed', `${field}: ${message}`, { details: [{ field, message }] }),
  unauthorized: (reason: string, message?: string) => new KoshError('unauthorized', message, { reason }),
  forbidden: (message: string, reason?: string) => new KoshError('forbidden', message, { reason }),
  /** Missing and foreign-tenant records answer exactly alike. */
  notFound: (what: string) => new KoshError('not_found', `${what} not found`),
  conflict: (message: string, reason?: string) => new KoshError('conflict', message, { reason }),
  unprocessable: (message: string, reason?: string) => new KoshError('unprocessable', message, { reason }),
  unavailable: (message: string, reason?: string) => new KoshError('unavailable', message, { reason }),
  rateLimited: (message: string, reason?: string) => new KoshError('rate_limited', message, { reason }),
};

export function isKoshError(error: unknown): error is KoshError {
  return error instanceof KoshError;
}
