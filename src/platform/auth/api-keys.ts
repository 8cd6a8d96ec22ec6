import { createHash, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import { scopeKey, type AppScope } from '../app-scope.js';
import './auth.tables.js';
import { errors } from '../errors.js';
import type { Actor, Role } from './actor.js';

export type KeyMode = 'test' | 'live';

export type Principal = {
  tenantId: string;
  /** The API key of the request; null when an operator's session authenticated it. */
  apiKeyId: string | null;
  mode: KeyMode;
  /** Who acts: the key or the signed-in operator, and the role it acts with. */
  actor: Actor;
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

const LAST_USED_RESOLUTION_MS = 60 * 60 * 1000;
const MAX_CACHED_KEYS = 10_000;
type KeyRow = { id: string; tenant_id: string; name: string; prefix: string; mode: KeyMode; role: Role; tenant_mode: KeyMode; last_used_at: Date | null };

/** What an API key cache needs of the change feed (platform/db/change-feed.ts). */
export type KeyChanges = {
  isFresh(): boolean;
  /** Fresh now or after a short wait for the feed's proof; false: read the database. */
  fresh(): Promise<boolean>;
  readonly epoch: number;
  on(topic: string, handler: (subject: string) => void): void;
  onReset(handler: () => void): void;
};

/**
 * The app's caches (platform/app-scope.ts), so that a revocation committed by the app reaches
 * them at once. Another app — in another process or in this one — hears of it from the change feed.
 */
const cachesKey = scopeKey('auth.api_key_caches', () => new Set<ApiKeyCache>());

/**
 * Keys an app has verified, by hash: every `/v1` request starts with this lookup, and its round
 * trip costs more than the rest of a simple read (decisions 0015, 0420). An entry is trusted while
 * it is younger than `ttlMs` (KOSH_API_KEY_CACHE_SECONDS, default 10 s) AND the change feed is
 * fresh: a key revoked, changed or deleted by any process — or a tenant whose mode changed — is
 * notified by a trigger and forgotten here, so it is refused within a second everywhere. When the
 * feed is not fresh (its session dropped, a pooler without LISTEN) every request looks its key up.
 * Unknown and revoked keys are never cached, so a new key works at once everywhere.
 */
export class ApiKeyCache {
  private readonly verified = new Map<string, { row: KeyRow; checkedAt: number; epoch: number }>();
  /** Bumped by every forget: a lookup that started before a revocation must not cache its row. */
  generation = 0;

  constructor(
    readonly ttlMs: number,
    private readonly changes?: KeyChanges,
    private readonly scope?: AppScope,
  ) {
    if (ttlMs <= 0) return;
    scope?.get(cachesKey).add(this);
    changes?.on('api_key', (id) => this.forget((row) => row.id === id));
    changes?.on('tenant', (id) => this.forget((row) => row.tenant_id === id));
    changes?.onReset(() => this.forget(() => true));
  }

  /** Has the change feed proved itself current? True without a feed. */
  isCurrent(): boolean {
    return !this.changes || this.changes.isFresh();
  }

  /** The same, after waiting one beat of the feed's for it (under load its round trips lag). */
  async waitCurrent(): Promise<boolean> {
    return !this.changes || this.changes.fresh();
  }

  /** The verified row, if it may be trusted without a lookup now (the caller has checked the feed is current). */
  get(hash: string, now: Date): KeyRow | undefined {
    const cached = this.verified.get(hash);
    if (!cached) return undefined;
    const age = now.getTime() - cached.checkedAt;
    if (age < 0 || age >= this.ttlMs) return undefined;
    if (this.changes && cached.epoch !== this.changes.epoch) return undefined;
    return cached.row;
  }

  remember(hash: string, row: KeyRow, now: Date, startedIn: number, epoch: number): void {
    if (this.ttlMs <= 0 || startedIn !== this.generation) return;
    if (this.verified.size >= MAX_CACHED_KEYS) this.verified.delete(this.verified.keys().next().value!);
    this.verified.set(hash, { row, checkedAt: now.getTime(), epoch });
  }

  epochNow(): number {
    return this.changes?.epoch ?? 0;
  }

  delete(hash: string): void {
    this.verified.delete(hash);
  }

  forget(which: (row: KeyRow) => boolean): void {
    this.generation += 1;
    for (const [hash, entry] of this.verified) if (which(entry.row)) this.verified.delete(hash);
  }

  /** The app is closing. */
  close(): void {
    this.scope?.get(cachesKey).delete(this);
    this.verified.clear();
  }
}

/**
 * Drops a key from every cache of the app. Call it after the revoking transaction has
 * committed, so that no lookup can read the key as valid after it is forgotten (other apps and
 * processes hear of it from the trigger's notification).
 */
export function forgetApiKey(scope: AppScope, apiKeyId: string): void {
  for (const cache of scope.get(cachesKey)) cache.forget((row) => row.id === apiKeyId);
}

/**
 * Resolves `Authorization: Bearer sk_…` to a tenant. Unknown, malformed and revoked keys all answer
 * `invalid_api_key`; a valid key of the other mode, or of a tenant of the other mode, answers
 * `key_mode_mismatch`.
 */
export async function authenticateApiKey(
  db: Kysely<DB>,
  header: string | undefined,
  deploymentMode: KeyMode,
  now: Date,
  cache?: ApiKeyCache,
): Promise<Principal> {
  const token = bearerToken(header);
  if (!token || !KEY_PATTERN.test(token)) {
    throw errors.unauthorized('invalid_api_key', 'missing or invalid API key');
  }
  const hash = hashApiKey(token);
  const current = !cache || cache.isCurrent() || (await cache.waitCurrent());
  let row = cache && current ? cache.get(hash, now) : undefined;
  if (!row) {
    const startedIn = cache?.generation ?? 0;
    // Taken before the lookup: a reconnection of the feed during it voids what it reads.
    const epoch = cache?.epochNow() ?? 0;
    const found = await db
      .selectFrom('api_keys')
      .innerJoin('tenants', 'tenants.id', 'api_keys.tenant_id')
      .select([
        'api_keys.id',
        'api_keys.tenant_id',
        'api_keys.name',
        'api_keys.prefix',
        'api_keys.mode',
        'api_keys.role',
        'tenants.mode as tenant_mode',
        'api_keys.revoked_at',
        'api_keys.last_used_at',
      ])
      .where('api_keys.key_hash', '=', hash)
      .executeTakeFirst();
    if (!found || found.revoked_at !== null) {
      cache?.delete(hash);
      throw errors.unauthorized('invalid_api_key', 'missing or invalid API key');
    }
    row = found;
    // last_used_at is kept to the hour, so the hot path writes at most once an hour per key.
    if (!row.last_used_at || now.getTime() - row.last_used_at.getTime() >= LAST_USED_RESOLUTION_MS) {
      await db.updateTable('api_keys').set({ last_used_at: now }).where('id', '=', row.id).execute();
      row = { ...row, last_used_at: now };
    }
    cache?.remember(hash, row, now, startedIn, epoch);
  }
  if (row.mode !== deploymentMode) {
    throw errors.unauthorized('key_mode_mismatch', `this is a ${row.mode}-mode key; the deployment runs in ${deploymentMode} mode`);
  }
  // A key is only as live as its tenant: a test-mode tenant's key is refused by a live deployment
  // sharing its database, whatever the key's own prefix says.
  if (row.tenant_mode !== deploymentMode) {
    throw errors.unauthorized('key_mode_mismatch', `this key belongs to a ${row.tenant_mode}-mode tenant; the deployment runs in ${deploymentMode} mode`);
  }
  const label = row.name ? `${row.name} (${row.prefix}…)` : `${row.prefix}…`;
  return { tenantId: row.tenant_id, apiKeyId: row.id, mode: row.mode, actor: { type: 'api_key', id: row.id, label, role: row.role } };
}
