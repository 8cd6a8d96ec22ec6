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
