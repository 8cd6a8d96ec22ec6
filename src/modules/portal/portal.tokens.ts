import { createHash, randomBytes } from 'node:crypto';
import { sameSecret } from '../../platform/auth/secrets-compare.js';
import { isUuid } from '../../platform/ids.js';

/**
 * Portal credentials (sign-in links and session cookies) are `<tenant_id>.<secret>`: 32 random
 * bytes, base64url. The tenant id is not secret; it scopes the lookup. Only sha256(secret) is
 * stored, so a copy of the database signs nobody in.
 */
/** The session cookie's name (SPEC §5.4). */
export const SESSION_COOKIE = 'portal_session';

export type Credential = { tenantId: string; secret: string };

const SECRET_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export function newSecret(): string {
  return randomBytes(32).toString('base64url');
}

export function formatCredential(tenantId: string, secret: string): string {
  return `${tenantId}.${secret}`;
}

/** Null for anything that is not a well-formed credential (the caller answers as for an unknown one). */
export function parseCredential(value: string | undefined | null): Credential | null {
  if (typeof value !== 'string' || value.length > 200) return null;
  const dot = value.indexOf('.');
  if (dot < 0) return null;
  const tenantId = value.slice(0, dot).toLowerCase();
  const secret = value.slice(dot + 1);
  return isUuid(tenantId) && SECRET_PATTERN.test(secret) ? { tenantId, secret } : null;
}

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/**
 * The session's CSRF token, derived from the cookie's secret (so it needs no storage and a copy of
 * the database does not reveal it). A cross-site form can make the browser send the cookie, but
 * cannot read this token, so it cannot put it into the request.
 */
export function csrfTokenFor(secret: string): string {
  return createHash('sha256').update(`csrf:${secret}`).digest('base64url');
}

export function sameToken(expected: string, given: unknown): boolean {
  return typeof given === 'string' && sameSecret(expected, given);
}

/** `Cookie:` header → name → value: the platform's parser (first occurrence wins; values are not decoded). */
export { cookiesOf as parseCookies } from '../../platform/auth/sessions.js';
