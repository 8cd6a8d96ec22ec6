import { createHash, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DB, Tx } from '../db/schema.js';
import { newId, isUuid } from '../ids.js';
import type { Role } from './auth.tables.js';
import './auth.tables.js';

/**
 * Operator sessions (DESIGN §17): the `kosh_session` cookie holds `<tenant id>.<secret>`; only the
 * secret's SHA-256 is stored. A session ends 12 h after its last use (idle) and 7 days after it
 * began (absolute), whichever is first; signing out revokes it. The CSRF token of the
 * double-submit rule (`kosh_csrf` cookie = `X-CSRF-Token` header) is derived from the secret, so
 * nothing more is stored and it cannot be forged without the session.
 */
export const SESSION_COOKIE = 'kosh_session';
export const CSRF_COOKIE = 'kosh_csrf';
export const SESSION_IDLE_MS = 12 * 60 * 60 * 1000;
export const SESSION_ABSOLUTE_MS = 7 * 24 * 60 * 60 * 1000;
/** last_seen_at is written at most this often per session (the idle expiry does not need more). */
const SEEN_RESOLUTION_MS = 60_000;

const SECRET_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export type SessionCredential = { tenantId: string; secret: string };

export type OperatorSession = {
  tenantId: string;
  sessionId: string;
  userId: string;
  email: string;
  name: string;
  role: Role;
  csrfToken: string;
  tenantMode: 'test' | 'live';
};

export function hashToken(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/** A fresh 256-bit secret, base64url (43 characters). */
export function newSecret(): string {
  return randomBytes(32).toString('base64url');
}

export function csrfTokenFor(secret: string): string {
  return createHash('sha256').update(`kosh-csrf:${secret}`).digest('base64url');
}

/** `<tenant id>.<secret>` → its parts; anything else → null. */
export function parseTenantCredential(value: string | undefined | null): SessionCredential | null {
  if (typeof value !== 'string' || value.length > 200) return null;
  const dot = value.indexOf('.');
  if (dot < 0) return null;
  const tenantId = value.slice(0, dot).toLowerCase();
  const secret = value.slice(dot + 1);
  return isUuid(tenantId) && SECRET_PATTERN.test(secret) ? { tenantId, secret } : null;
}

/** `Cookie:` header → name → value (first occurrence wins). */
export function cookiesOf(header: string | undefined): Map<string, string> {
  const cookies = new Map<string, string>();
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const name = part.slice(0, eq).trim();
    if (name && !cookies.has(name)) cookies.set(name, part.slice(eq + 1).trim());
  }
  return cookies;
}

/** The live session a cookie names, refreshing its idle clock; null for anything else. */
export async function authenticateSession(db: Kysely<DB>, cookieValue: string | undefined, now: Date): Promise<OperatorSession | null> {
  const credential = parseTenantCredential(cookieValue);
  if (!credential) return null;
  const row = await db
    .selectFrom('user_sessions as s')
    .innerJoin('users as u', (join) => join.onRef('u.tenant_id', '=', 's.tenant_id').onRef('u.id', '=', 's.user_id'))
    .innerJoin('tenants as t', 't.id', 's.tenant_id')
    .select(['s.id', 's.tenant_id', 's.user_id', 's.last_seen_at', 's.expires_at', 's.revoked_at', 'u.email', 'u.name', 'u.role', 't.mode as tenant_mode'])
    .where('s.tenant_id', '=', credential.tenantId)
    .where('s.token_hash', '=', hashToken(credential.secret))
    .executeTakeFirst();
  if (!row || row.revoked_at !== null || row.expires_at <= now || now.getTime() - row.last_seen_at.getTime() >= SESSION_IDLE_MS) return null;
  if (now.getTime() - row.last_seen_at.getTime() >= SEEN_RESOLUTION_MS) {
    await db.updateTable('user_sessions').set({ last_seen_at: now }).where('tenant_id', '=', row.tenant_id).where('id', '=', row.id).execute();
  }
  return {
    tenantId: row.tenant_id,
    sessionId: row.id,
    userId: row.user_id,
    email: row.email,
    name: row.name,
    role: row.role,
    csrfToken: csrfTokenFor(credential.secret),
    tenantMode: row.tenant_mode,
  };
}

/** Starts a session for a user; answers the cookie value and the CSRF token (shown to the browser only). */
export async function startSession(
  tx: Tx,
  input: { tenantId: string; userId: string; now: Date; ip?: string | null; userAgent?: string | null },
): Promise<{ cookie: string; csrfToken: string; sessionId: string; expiresAt: Date }> {
  const secret = newSecret();
  const id = newId();
  const expiresAt = new Date(input.now.getTime() + SESSION_ABSOLUTE_MS);
  await tx
    .insertInto('user_sessions')
    .values({
      tenant_id: input.tenantId,
      id,
      user_id: input.userId,
      token_hash: hashToken(secret),
      created_at: input.now,
      last_seen_at: input.now,
      expires_at: expiresAt,
      revoked_at: null,
      ip: input.ip?.slice(0, 100) ?? null,
      user_agent: input.userAgent?.slice(0, 300) ?? null,
    })
    .execute();
  return { cookie: `${input.tenantId}.${secret}`, csrfToken: csrfTokenFor(secret), sessionId: id, expiresAt };
}

export async function revokeSession(tx: Tx, tenantId: string, sessionId: string, now: Date): Promise<void> {
  await tx
    .updateTable('user_sessions')
    .set({ revoked_at: now })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', sessionId)
    .where('revoked_at', 'is', null)
    .execute();
}

/** Ends every session of a user (sign-out everywhere, a password reset, removal). */
export async function revokeUserSessions(tx: Tx, tenantId: string, userId: string, now: Date): Promise<void> {
  await tx
    .updateTable('user_sessions')
    .set({ revoked_at: now })
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .execute();
}
