import { createHash, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import './auth.tables.js';
import { errors } from '../errors.js';

export type KeyMode = 'test' | 'live';

export type Principal = {
  tenantId: string;
  apiKeyId: string;
  mode: KeyMode;
};

const KEY_PATTERN = /^sk_(test|live)_[A-Za-z0-9]{32}$/;
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** A fresh secret: `sk_<mode>_` + 32 base62 characters (~190 bits). Shown once, stored hashed. */
export function generateApiKey(mode: KeyMode): { key: string; prefix: string; hash: string } {
  const bytes = randomBytes(32);
  let body = '';
  for (const b of bytes) body += ALPHABET[b % ALPHABET.length];
  const key = `sk_${mode}_${body}`;
  return { key, prefix: key.slice(0, 12), hash: hashApiKey(key) };
}

/** Keys are high-entropy random strings, so a plain SHA-256 is the right hash (no salt needed). */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

export function bearerToken(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

/**
 * Resolves `Authorization: Bearer sk_…` to a tenant. Unknown, malformed and revoked keys all answer
 * `invalid_api_key`; a valid key of the other mode answers `key_mode_mismatch`.
 */
const LAST_USED_RESOLUTION_MS = 60 * 60 * 1000;

export async function authenticateApiKey(db: Kysely<DB>, header: string | undefined, deploymentMode: KeyMode, now: Date): Promise<Principal> {
  const token = bearerToken(header);
  if (!token || !KEY_PATTERN.test(token)) {
    throw errors.unauthorized('invalid_api_key', 'missing or invalid API key');
  }
  const row = await db
    .selectFrom('api_keys')
    .select(['id', 'tenant_id', 'mode', 'revoked_at', 'last_used_at'])
    .where('key_hash', '=', hashApiKey(token))
    .executeTakeFirst();
  if (!row || row.revoked_at !== null) {
    throw errors.unauthorized('invalid_api_key', 'missing or invalid API key');
  }
  if (row.mode !== deploymentMode) {
    throw errors.unauthorized('key_mode_mismatch', `this is a ${row.mode}-mode key; the deployment runs in ${deploymentMode} mode`);
  }
  // last_used_at is kept to the hour, so the hot path writes at most once an hour per key.
  if (!row.last_used_at || now.getTime() - row.last_used_at.getTime() >= LAST_USED_RESOLUTION_MS) {
    await db.updateTable('api_keys').set({ last_used_at: now }).where('id', '=', row.id).execute();
  }
  return { tenantId: row.tenant_id, apiKeyId: row.id, mode: row.mode };
}
