/** RFC 3339 in UTC with a trailing Z, the only timestamp format the API speaks. */
export function toIso(value: Date | string): string {
  if (typeof value === 'string' && CANONICAL.test(value)) return value; // already the API's form (e.g. built by SQL)
  return (value instanceof Date ? value : new Date(value)).toISOString();
}

/**
 * The exact form Date.prototype.toISOString writes for years 0000–9999, on days 1–28 (a day that
 * may not exist in its month, like 02-30, goes through Date and comes out normalized as before).
 */
const CANONICAL = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|1\d|2[0-8])T([01]\d|2[0-3]):[0-5]\d:[0-5]\d\.\d{3}Z$/;

export function toIsoOrNull(value: Date | string | null | undefined): string | null {
  return value == null ? null : toIso(value);
}
