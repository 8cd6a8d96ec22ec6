/** True when `error` is PostgreSQL's unique_violation (23505), optionally of one named constraint. */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  const e = error as { code?: string; constraint?: string } | null;
  return e?.code === '23505' && (constraint === undefined || e.constraint === constraint);
}

/** True when `error` is PostgreSQL's foreign_key_violation (23503), optionally of one named constraint. */
export function isForeignKeyViolation(error: unknown, constraint?: string): boolean {
  const e = error as { code?: string; constraint?: string } | null;
  return e?.code === '23503' && (constraint === undefined || e.constraint === constraint);
}

/**
 * SQLSTATEs that mean "the database could not do it now", not "the request is wrong": the
 * connection was cut (class 08), the server is shutting down or starting (57P01–57P03), it has
 * no connection slot (53300), a statement or lock wait hit its limit (57014, 55P03), an idle
 * transaction was ended (25P03), or the connection reached a standby after a failover (25006).
 */
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300', '57014', '55P03', '25P03', '25006']);
/** Socket errors of a connection that could not be opened or was lost. */
const UNAVAILABLE_SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
/** node-postgres and pg-pool report a lost or unobtainable connection with plain messages only. */
const UNAVAILABLE_MESSAGES =
  /^(Connection terminated|Client has encountered a connection error|Client was closed and is not queryable|timeout exceeded when trying to connect|Query read timeout|Connection terminated due to connection timeout)/;

/**
 * True when `error` says the database was unreachable, went away or timed out: nothing of the
 * request was committed, and the same request may be retried.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown } | null;
  if (!e || typeof e !== 'object') return false;
  const code = typeof e.code === 'string' ? e.code : '';
  if (code.startsWith('08') && code.length === 5) return true;
  if (UNAVAILABLE_SQLSTATES.has(code) || UNAVAILABLE_SOCKET_CODES.has(code)) return true;
  return typeof e.message === 'string' && UNAVAILABLE_MESSAGES.test(e.message);
}
