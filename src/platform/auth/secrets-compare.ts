import { timingSafeEqual } from 'node:crypto';

/**
 * The one constant-time comparison: two byte strings equal in length and content, compared without
 * an early exit (a length difference answers false at once; lengths of hashes and signatures are
 * public).
 */
export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Constant-time comparison of two secrets (admin token, metrics token, CSRF and link tokens). */
export function sameSecret(a: string, b: string): boolean {
  return sameBytes(Buffer.from(a), Buffer.from(b));
}
