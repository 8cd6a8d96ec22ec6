import { createHash } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { AppScope } from '../app-scope.js';
import type { DB } from '../db/schema.js';
import type { Ctx } from '../context.js';
import { errors } from '../errors.js';
import { allowSpeculation } from '../db/speculation.js';
import { deferWrite } from '../db/pipeline.js';
import type { SecretBox } from '../secrets/secrets.js';
import './idempotency.tables.js';

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
const MAX_KEY_LENGTH = 255;

const keyInUse = () => errors.conflict('a request with this Idempotency-Key is still in progress; retry shortly', 'idempotency_key_in_use');

/** The claim found a live stored response: the transaction rolls back and the response is replayed. */
class StoredResponseExists extends Error {}

/** Errors of the claim itself (not of the action), which outrank an error the action throws. */
const claimErrors = new WeakSet<object>();

function claimError(error: unknown): unknown {
  const code = (error as { code?: string } | null)?.code;
  const mapped = code === 'KI409' ? keyInUse() : code === 'KI200' ? new StoredResponseExists('idempotency key has a stored response') : error;
  if (mapped !== error) claimErrors.add(mapped as object);
  return mapped;
}

const isClaimError = (error: unknown) => typeof error === 'object' && error !== null && claimErrors.has(error);

export type ActionResult = {
  status: number;
  body: unknown;
  /** What a replay answers, when it must differ from `body` (a secret shown once is not kept). */
  replayBody?: unknown;
  /**
   * The answer holds a secret shown once that a replay must still show (a webhook signing
   * secret, a join code): it is stored sealed (platform/secrets), never in plain text.
   */
  sealReplay?: boolean;
};

/** A stored response sealed under the key's own associated data: `{ "$sealed": "v1.…" }`. */
type SealedResponse = { $sealed: string };
const replayAad = (tenantId: string, key: string) => `tenant:${tenantId}:idempotency:${key}`;

function storedResponse(result: ActionResult, tenantId: string, key: string, secrets: SecretBox | undefined): string {
  const body = result.replayBody ?? result.body;
  if (!result.sealReplay) return JSON.stringify(body);
  if (!secrets) throw new Error('a replay to seal needs the secret box');
  return JSON.stringify({ $sealed: secrets.sealJson(body, replayAad(tenantId, key)) } satisfies SealedResponse);
}

function replayedResponse(stored: unknown, tenantId: string, key: string, secrets: SecretBox | undefined): unknown {
  const sealed = stored && typeof stored === 'object' && !Array.isArray(stored) ? (stored as Partial<SealedResponse>).$sealed : undefined;
  if (typeof sealed !== 'string') return stored;
  if (!secrets) throw new Error('a sealed replay needs the secret box');
  return secrets.openJson(sealed, replayAad(tenantId, key));
}
export type ActionOutcome = ActionResult & { replayed: boolean };

export type IdempotentRequest = {
  key: string | undefined;
  method: string;
  url: string;
  body: unknown;
};

/** Canonical JSON: object keys sorted, so `{a,b}` and `{b,a}` are the same request. */
function canonical(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
}

export function fingerprint(request: Omit<IdempotentRequest, 'key'>): string {
  return createHash('sha256')
    .update(`${request.method.toUpperCase()} ${request.url}\n${canonical(request.body ?? null)}`)
    .digest('hex');
}

export function validateIdempotencyKey(key: string | string[] | undefined): string | undefined {
  if (key === undefined) return undefined;
  if (Array.isArray(key) || key.length === 0 || key.length > MAX_KEY_LENGTH || !/^[\x21-\x7e]+$/.test(key)) {
    throw errors.validation('Idempotency-Key must be 1 to 255 printable ASCII characters', [
      { field: 'header.idempotency-key', message: 'must be 1 to 255 printable ASCII characters' },
    ]);
  }
  return key;
}

/**
 * Runs one business action in one transaction. With an Idempotency-Key, the stored response is
 * written in that same transaction, so "effect happened" and "response recorded" can never
 * disagree. While a request holds the key (a transaction-scoped advisory lock), a second one gets
 * 409 `idempotency_key_in_use`; afterwards it gets the replay, or 422 if its request differs.
 *
 * The claim (lock, then "is there a stored response?") is one statement that raises instead of
 * answering (migration 0011), so nobody waits for it: it goes out with BEGIN and the action's
 * first statements. A new key — nearly every request — costs no round trip of its own. A replay
 * surfaces as the claim's error at the action's first awaited statement (or at COMMIT); the
 * transaction rolls back and the stored response is read and answered.
 */
export async function runIdempotentAction(
  db: Kysely<DB>,
  tenantId: string,
  now: Date,
  request: IdempotentRequest,
  action: (ctx: Ctx) => Promise<ActionResult>,
  /** `speculate`: the app whose hints the action may assume (platform/db/speculation.ts). */
  options: { speculate?: AppScope; secrets?: SecretBox } = {},
): Promise<ActionOutcome> {
  const key = request.key;
  if (key === undefined) {
    return db.transaction().execute(async (tx) => {
      if (options.speculate) allowSpeculation(tx, options.speculate);
      const result = await action({ tx, tenantId, now });
      return { status: result.status, body: result.body, replayed: false };
    });
  }
  const print = fingerprint(request);
  // Twice at most: a stored response that expires between the claim and the replay's read is gone,
  // and the request then runs as a new one.
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.transaction().execute(async (tx) => {
        if (options.speculate) allowSpeculation(tx, options.speculate);
        await deferWrite(tx, sql`SELECT kosh_idempotency_claim(${tenantId}, ${key}, ${now})`, claimError);
        let result: ActionResult;
        try {
          result = await action({ tx, tenantId, now });
        } catch (error) {
          // An action that fails before it waits on the database has not heard the claim's answer,
          // and a key in use or a replay outranks its error (a changed body must get 422).
          if (!isClaimError(error))
            await sql`SELECT 1`.execute(tx).catch((claimed: unknown) => {
              if (isClaimError(claimed)) throw claimed;
            });
          throw error;
        }
        const record = {
          fingerprint: print,
          status_code: result.status,
          response: storedResponse(result, tenantId, key, options.secrets),
          created_at: now,
          expires_at: new Date(now.getTime() + IDEMPOTENCY_TTL_MS),
        };
        // Nothing reads it back in this transaction: it travels with the COMMIT.
        await deferWrite(
          tx,
          tx
            .insertInto('idempotency_keys')
            .values({ tenant_id: tenantId, key, ...record })
            .onConflict((oc) => oc.columns(['tenant_id', 'key']).doUpdateSet(record)),
        );
        return { status: result.status, body: result.body, replayed: false };
      });
    } catch (error) {
      if (!(error instanceof StoredResponseExists)) throw error;
      const stored = await db
        .selectFrom('idempotency_keys')
        .select(['fingerprint', 'status_code', 'response', 'expires_at'])
        .where('tenant_id', '=', tenantId)
        .where('key', '=', key)
        .executeTakeFirst();
      if (!stored || stored.expires_at <= now) {
        if (attempt < 2) continue;
        throw keyInUse();
      }
      if (stored.fingerprint !== print) {
        throw errors.unprocessable('this Idempotency-Key was already used with a different request', 'idempotency_key_reused');
      }
      return { status: stored.status_code, body: replayedResponse(stored.response, tenantId, key, options.secrets), replayed: true };
    }
  }
}

/** Deletes expired keys; run periodically by the worker. */
export async function purgeExpiredIdempotencyKeys(db: Kysely<DB>, now: Date): Promise<number> {
  const result = await db.deleteFrom('idempotency_keys').where('expires_at', '<=', now).executeTakeFirst();
  return Number(result.numDeletedRows);
}
