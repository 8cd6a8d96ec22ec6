import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKosh, type Tenant, type TestKosh } from '../support/harness.js';
import { onPostgresServer } from '../support/database.js';
import { sql } from 'kysely';
import { IDEMPOTENCY_TTL_MS, runIdempotentAction } from '../../src/platform/idempotency/idempotency.js';
import { deferWrite } from '../../src/platform/db/pipeline.js';
import { errors } from '../../src/platform/errors.js';

/** DESIGN §5 through the public API: POST /v1/plans and POST /v1/developer/keys as the effects. */

let t: TestKosh;
let acme: Tenant;
let globex: Tenant;

beforeAll(async () => {
  t = await startTestKosh();
  acme = await t.registerTenant();
  globex = await t.registerTenant();
});
afterAll(() => t?.close());

let n = 0;
const planBody = (code = `idem-${++n}`) => ({ name: `Plan ${code}`, code, interval_unit: 'month' as const, amount: 10000, currency: 'INR' });

async function plansWithCode(tenant: Tenant, code: string): Promise<number> {
  const res = await tenant.http.GET('/v1/plans', { query: { q: code } });
  expect(res.status).toBe(200);
  return res.body.data.filter((p: { code: string }) => p.code === code).length;
}

async function idempotencyRows(tenantId: string): Promise<number> {
  const { rows } = await t.database.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM idempotency_keys WHERE tenant_id = $1', [tenantId]);
  return rows[0]!.n;
}

describe('idempotency', () => {
  describe('same key, same request', () => {
    it('replays the stored status and body with idempotent-replayed: true, and creates one record', async () => {
      const key = randomUUID();
      const body = planBody();
      const first = await acme.http.POST('/v1/plans', { body, headers: { 'idempotency-key': key } });
      expect(first.status).toBe(201);
      expect(first.headers['idempotent-replayed']).toBeUndefined();

      const again = await acme.http.POST('/v1/plans', { body, headers: { 'idempotency-key': key } });
      expect(again.status).toBe(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body).toEqual(first.body);
      expect(await plansWithCode(acme, body.code)).toBe(1);
    });

    it('treats the same fields in another order as the same request', async () => {
      const key = randomUUID();
      const body = planBody();
      const reordered = Object.fromEntries(Object.entries(body).reverse()) as typeof body;
      expect(JSON.stringify(reordered)).not.toBe(JSON.stringify(body));
      const first = await acme.http.POST('/v1/plans', { body, headers: { 'idempotency-key': key } });
      const again = await acme.http.POST('/v1/plans', { body: reordered, headers: { 'idempotency-key': key } });
      expect(first.status).toBe(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body.data.id).toBe(first.body.data.id);
    });

    it('runs concurrent requests with one key once: one record, every answer a 201 or 409 in progress', async () => {
      const key = randomUUID();
      const body = planBody();
      const answers = await Promise.all(Array.from({ length: 6 }, () => acme.http.POST('/v1/plans', { body, headers: { 'idempotency-key': key } })));
      for (const res of answers) {
        if (res.status === 409) expect(res.error).toMatchObject({ code: 'conflict', reason: 'idempotency_key_in_use' });
        else expect(res.status).toBe(201);
      }
      const created = answers.filter((r) => r.status === 201);
      expect(created.length).toBeGreaterThanOrEqual(1);
      expect(new Set(created.map((r) => r.body.data.id)).size).toBe(1);
      expect(created.filter((r) => r.headers['idempotent-replayed'] !== 'true')).toHaveLength(1);
      expect(await plansWithCode(acme, body.code)).toBe(1);
    });
  });

  describe('same key, different request', () => {
    it('refuses a different body with 422 validation_failed, reason idempotency_key_reused', async () => {
      const key = randomUUID();
      expect((await acme.http.POST('/v1/plans', { body: planBody(), headers: { 'idempotency-key': key } })).status).toBe(201);
      const other = planBody();
      const res = await acme.http.POST('/v1/plans', { body: other, headers: { 'idempotency-key': key } });
      expect(res.status).toBe(422);
      expect(res.error).toMatchObject({ code: 'validation_failed', reason: 'idempotency_key_reused' });
      expect(await plansWithCode(acme, other.code)).toBe(0);
    });

    it('refuses the same key on another route with 422', async () => {
      const key = randomUUID();
      expect((await acme.http.POST('/v1/developer/keys', { body: { name: 'k' }, headers: { 'idempotency-key': key } })).status).toBe(201);
      const res = await acme.http.POST('/v1/customers', { body: { email: `${key}@customer.test` }, headers: { 'idempotency-key': key } });
      expect(res.status).toBe(422);
      expect(res.error!.reason).toBe('idempotency_key_reused');
    });
  });

  describe('scope', () => {
    it("keeps keys per tenant: another tenant's use of the same key is independent", async () => {
      const key = randomUUID();
      const acmeBody = planBody();
      const globexBody = planBody();
      const a = await acme.http.POST('/v1/plans', { body: acmeBody, headers: { 'idempotency-key': key } });
      const g = await globex.http.POST('/v1/plans', { body: globexBody, headers: { 'idempotency-key': key } });
      expect(a.status).toBe(201);
      expect(g.status).toBe(201);
      expect(g.headers['idempotent-replayed']).toBeUndefined();
      expect(g.body.data.tenant_id).toBe(globex.tenantId);
      // The same body as acme's under the same key is new for globex, not acme's replay.
      const g2 = await globex.http.POST('/v1/plans', { body: acmeBody, headers: { 'idempotency-key': randomUUID() } });
      expect(g2.status).toBe(201);
      const aReplay = await acme.http.POST('/v1/plans', { body: acmeBody, headers: { 'idempotency-key': key } });
      expect(aReplay.body.data.id).toBe(a.body.data.id);
    });
  });

  describe('expiry', () => {
    it('replays until 24 h have passed, then executes the request again', async () => {
      const key = randomUUID();
      const first = await acme.http.POST('/v1/developer/keys', { body: { name: 'ttl' }, headers: { 'idempotency-key': key } });
      expect(first.status).toBe(201);

      t.clock.advance(IDEMPOTENCY_TTL_MS - 1000);
      const within = await acme.http.POST('/v1/developer/keys', { body: { name: 'ttl' }, headers: { 'idempotency-key': key } });
      expect(within.headers['idempotent-replayed']).toBe('true');
      expect(within.body.data.id).toBe(first.body.data.id);

      t.clock.advance(2000);
      const after = await acme.http.POST('/v1/developer/keys', { body: { name: 'ttl' }, headers: { 'idempotency-key': key } });
      expect(after.status).toBe(201);
      expect(after.headers['idempotent-replayed']).toBeUndefined();
      expect(after.body.data.id).not.toBe(first.body.data.id);

      // The key now holds the new answer.
      const replay = await acme.http.POST('/v1/developer/keys', { body: { name: 'ttl' }, headers: { 'idempotency-key': key } });
      expect(replay.body.data.id).toBe(after.body.data.id);
    });

    it('accepts a different request under an expired key', async () => {
      const key = randomUUID();
      expect((await acme.http.POST('/v1/plans', { body: planBody(), headers: { 'idempotency-key': key } })).status).toBe(201);
      t.clock.advance(IDEMPOTENCY_TTL_MS + 1);
      const res = await acme.http.POST('/v1/plans', { body: planBody(), headers: { 'idempotency-key': key } });
      expect(res.status).toBe(201);
      expect(res.headers['idempotent-replayed']).toBeUndefined();
    });

    it('purges expired keys in the worker', async () => {
      const tenant = await t.registerTenant();
      expect((await tenant.http.POST('/v1/developer/keys', { body: { name: 'purge' }, headers: { 'idempotency-key': randomUUID() } })).status).toBe(201);
      expect(await idempotencyRows(tenant.tenantId)).toBe(1);
      t.clock.advance(IDEMPOTENCY_TTL_MS + 3_600_000);
      await t.kosh.worker.drain();
      expect(await idempotencyRows(tenant.tenantId)).toBe(0);
    });
  });

  describe('invalid keys', () => {
    it.each([
      ['longer than 255 characters', 'k'.repeat(256)],
      ['with a space', 'has space'],
      ['with a non-ASCII character', 'clé'],
    ])('answers a key %s with 400 validation_failed and does nothing', async (_label, key) => {
      const body = planBody();
      const res = await acme.http.POST('/v1/plans', { body, headers: { 'idempotency-key': key } });
      expect(res.status).toBe(400);
      expect(res.error!.code).toBe('validation_failed');
      expect(res.error!.details).toEqual([expect.objectContaining({ field: 'header.idempotency-key' })]);
      expect(await plansWithCode(acme, body.code)).toBe(0);
    });

    it('accepts a key of exactly 255 printable characters', async () => {
      const res = await acme.api('POST', '/v1/plans', planBody(), { 'idempotency-key': `${'~'.repeat(254)}!` });
      expect(res.status).toBe(201);
    });
  });

  describe('failures', () => {
    it('stores nothing for a failed request, so a corrected retry under the same key runs', async () => {
      const taken = planBody();
      expect((await acme.http.POST('/v1/plans', { body: taken })).status).toBe(201);
      const key = randomUUID();
      const before = await idempotencyRows(acme.tenantId);

      const conflict = await acme.http.POST('/v1/plans', { body: taken, headers: { 'idempotency-key': key } });
      expect(conflict.status).toBe(409);
      expect(await idempotencyRows(acme.tenantId)).toBe(before);

      const corrected = planBody();
      const retry = await acme.http.POST('/v1/plans', { body: corrected, headers: { 'idempotency-key': key } });
      expect(retry.status).toBe(201);
      expect(retry.headers['idempotent-replayed']).toBeUndefined();
      expect(await plansWithCode(acme, corrected.code)).toBe(1);
    });

    it('stores nothing for a request refused by validation', async () => {
      const key = randomUUID();
      const bad = await acme.api('POST', '/v1/plans', { ...planBody(), amount: -1 }, { 'idempotency-key': key });
      expect(bad.status).toBe(400);
      const good = await acme.http.POST('/v1/plans', { body: planBody(), headers: { 'idempotency-key': key } });
      expect(good.status).toBe(201);
    });
  });

  // The claim is sent without waiting for its answer (migration 0011): the action runs before
  // anyone knows whether the key is new. These pin down that a replay still wins.
  describe('a replay found only after the action ran', () => {
    const request = (body: unknown, key: string) => ({ key, method: 'POST', url: '/v1/claims-test', body });
    const planRow = (code: string) =>
      sql`INSERT INTO plans (tenant_id, id, name, code, interval_unit, interval_count, created_at, updated_at)
          VALUES (${acme.tenantId}, gen_random_uuid(), ${code}, ${code}, 'month', 1, now(), now())`;
    const plansCoded = async (code: string) =>
      (await t.database.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM plans WHERE tenant_id = $1 AND code = $2', [acme.tenantId, code])).rows[0]!.n;

    it('rolls back what the action wrote and answers the stored response', async () => {
      const key = randomUUID();
      const first = await runIdempotentAction(t.database.db, acme.tenantId, t.clock.now(), request({ a: 1 }, key), async (ctx) => {
        await deferWrite(ctx.tx, planRow(`claim-first-${key}`));
        return { status: 201, body: { run: 'first' } };
      });
      expect(first).toEqual({ status: 201, body: { run: 'first' }, replayed: false });

      const again = await runIdempotentAction(t.database.db, acme.tenantId, t.clock.now(), request({ a: 1 }, key), async (ctx) => {
        await deferWrite(ctx.tx, planRow(`claim-again-${key}`));
        return { status: 201, body: { run: 'again' } };
      });
      expect(again).toEqual({ status: 201, body: { run: 'first' }, replayed: true });
      expect(await plansCoded(`claim-first-${key}`)).toBe(1);
      expect(await plansCoded(`claim-again-${key}`)).toBe(0);
    });

    it('answers 422 for a changed request even when its action fails before touching the database', async () => {
      const key = randomUUID();
      await runIdempotentAction(t.database.db, acme.tenantId, t.clock.now(), request({ a: 1 }, key), async () => ({ status: 200, body: {} }));
      const changed = runIdempotentAction(t.database.db, acme.tenantId, t.clock.now(), request({ a: 2 }, key), async () => {
        throw errors.validation('the action refuses this body');
      });
      await expect(changed).rejects.toMatchObject({ kind: 'unprocessable', reason: 'idempotency_key_reused' });
    });

    it("lets the action's own error through when the key is new", async () => {
      const failing = runIdempotentAction(t.database.db, acme.tenantId, t.clock.now(), request({ a: 1 }, randomUUID()), async () => {
        throw errors.validation('the action refuses this body');
      });
      await expect(failing).rejects.toMatchObject({ kind: 'validation_failed', message: 'the action refuses this body' });
    });
  });

  describe('in flight', () => {
    // PGlite is a single connection: a lock taken "from elsewhere" would be taken by the same
    // session the app uses, and session advisory locks are re-entrant, so the case cannot be built
    // there. On the PostgreSQL server a second connection holds the key's lock as a running
    // request's transaction would.
    it.skipIf(!onPostgresServer)('answers 409 conflict, reason idempotency_key_in_use, while another request holds the key', async () => {
      const key = randomUUID();
      const body = planBody();
      const holder = await t.database.pool.connect();
      try {
        // The same lock key as src/platform/idempotency/idempotency.ts computes.
        await holder.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [`idem:${acme.tenantId}:${key}`]);
        const busy = await acme.http.POST('/v1/plans', { body, headers: { 'idempotency-key': key } });
        expect(busy.status).toBe(409);
        expect(busy.error).toMatchObject({ code: 'conflict', reason: 'idempotency_key_in_use' });
        expect(await plansWithCode(acme, body.code)).toBe(0);
        // Another tenant's identical key is not blocked.
        expect((await globex.http.POST('/v1/plans', { body: planBody(), headers: { 'idempotency-key': key } })).status).toBe(201);
      } finally {
        await holder.query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [`idem:${acme.tenantId}:${key}`]);
        holder.release();
      }
      const done = await acme.http.POST('/v1/plans', { body, headers: { 'idempotency-key': key } });
      expect(done.status).toBe(201);
      expect(done.headers['idempotent-replayed']).toBeUndefined();
    });
  });
});
