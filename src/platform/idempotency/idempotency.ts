import { createHash } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import type { Ctx } from '../context.js';
import { errors } from '../errors.js';
import { deferWrite } from '../db/pipeline.js';
import './idempotency.tables.js';

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
const MAX_KEY_LENGTH = 255;

function keyInUse(error: unknown): unknown {
  return (error as { code?: string } | null)?.code === 'KI409'
    ? errors.conflict('a request with this Idempotency-Key is still in progress; retry shortly', 'idempotency_key_in_use')
    : error;
}

export type ActionResult = {
  status: number;
  body: unknown;
  /** What a replay answers, when it must differ from `body` (a secret shown once is not kept). */
  replayBody?: unknown;
};
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
 */
export async function runIdempotentAction(
  db: Kysely<DB>,
  tenantId: string,
  now: Date,
  request: IdempotentRequest,
  action: (ctx: Ctx) => Promise<ActionResult>,
): Promise<ActionOutcome> {
  return db.transaction().execute(async (tx) => {
    const ctx: Ctx = { tx, tenantId, now };
    if (request.key === undefined) {
      const result = await action(ctx);
      return { status: result.status, body: result.body, replayed: false };
    }
    const print = fingerprint(request);
    // The lock goes out with BEGIN and the read below, in one round trip (deferWrite): when
    // another request holds the key, the function raises KI409 and the read reports it.
    await deferWrite(tx, sql`SELECT kosh_idempotency_lock(${`idem:${tenantId}:${request.key}`})`, keyInUse);
    const existing = await tx
      .selectFrom('idempotency_keys')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('key', '=', request.key)
      .executeTakeFirst();
    if (existing && existing.expires_at > now) {
      if (existing.fingerprint !== print) {
        throw errors.unprocessable(
          'this Idempotency-Key was already used with a different request',
          'idempotency_key_reused',
        );
      }
      return { status: existing.status_code, body: existing.response, replayed: true };
    }
    const result = await action(ctx);
    const record = {
      fingerprint: print,
      status_code: result.status,
      response: JSON.stringify(result.replayBody ?? result.body),
      created_at: now,
      expires_at: new Date(now.getTime() + IDEMPOTENCY_TTL_MS),
    };
    // Nothing reads it back in this transaction: it travels with the COMMIT.
    await deferWrite(
      tx,
      tx
        .insertInto('idempotency_keys')
        .values({ tenant_id: tenantId, key: request.key, ...record })
        .onConflict((oc) => oc.columns(['tenant_id', 'key']).doUpdateSet(record)),
    );
    return { status: result.status, body: result.body, replayed: false };
  });
}

/** Deletes expired keys; run periodically by the worker. */
export async function purgeExpiredIdempotencyKeys(db: Kysely<DB>, now: Date): Promise<number> {
  const result = await db.deleteFrom('idempotency_keys').where('expires_at', '<=', now).executeTakeFirst();
  return Number(result.numDeletedRows);
}
