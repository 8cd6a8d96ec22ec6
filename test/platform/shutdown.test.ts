import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { onPostgresServer } from '../support/database.js';
import { startTestKosh, type Tenant, type TestKosh } from '../support/harness.js';

/**
 * Graceful shutdown on a real listening server: `kosh.close()` (what SIGTERM runs) stops taking
 * connections but lets every request already received finish with its real answer.
 */

let t: TestKosh;
let acme: Tenant;
let base: string;
let koshClosed: boolean;

beforeEach(async () => {
  t = await startTestKosh();
  acme = await t.registerTenant();
  await t.kosh.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(t.kosh.app.server.address() as AddressInfo).port}`;
  koshClosed = false;
});
afterEach(async () => {
  if (!koshClosed) await t.kosh.close();
  await t.database.close();
});

function createPlan(code: string): Promise<Response> {
  return fetch(`${base}/v1/plans`, {
    method: 'POST',
    headers: { authorization: `Bearer ${acme.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: code, code, interval_unit: 'month', amount: 100, currency: 'INR' }),
  });
}

/** Resolves once the HTTP server has received `count` requests (the raw server's own event). */
function received(count: number): Promise<void> {
  return new Promise((resolve) => {
    let seen = 0;
    const onRequest = () => {
      seen += 1;
      if (seen === count) {
        t.kosh.app.server.off('request', onRequest);
        resolve();
      }
    };
    t.kosh.app.server.on('request', onRequest);
  });
}

async function refusesConnections(): Promise<boolean> {
  try {
    await fetch(`${base}/healthz`, { headers: { connection: 'close' } });
    return false;
  } catch {
    return true;
  }
}

describe('graceful shutdown', () => {
  it('finishes every request in flight with its real answer, then stops listening', async () => {
    const count = 20;
    const arrived = received(count);
    const responses = Array.from({ length: count }, (_, i) => createPlan(`inflight-${i}-${randomUUID().slice(0, 8)}`));
    await arrived;

    const closing = t.kosh.close();
    koshClosed = true;
    const answers = await Promise.all(responses);
    expect(answers.map((r) => r.status)).toEqual(Array(count).fill(201));
    const bodies = await Promise.all(answers.map((r) => r.json() as Promise<{ data: { id: string } }>));
    expect(new Set(bodies.map((b) => b.data.id)).size).toBe(count);
    await closing;

    expect(await refusesConnections()).toBe(true);
    const { rows } = await t.database.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM plans WHERE tenant_id = $1 AND code LIKE 'inflight-%'`, [
      acme.tenantId,
    ]);
    expect(rows[0]!.n).toBe(count);
  });

  // A request made slow for real: its INSERT waits on a row lock held by another connection.
  // (PGlite has one connection, so nothing can hold a lock beside the app there.)
  it.skipIf(!onPostgresServer)('waits for a request blocked in the database, refusing new connections meanwhile', async () => {
    const code = `slow-${randomUUID().slice(0, 8)}`;
    const blocker = await t.database.pool.connect();
    let pending: Promise<Response> | undefined;
    try {
      await blocker.query('BEGIN');
      await blocker.query(
        `INSERT INTO plans (tenant_id, id, name, code, interval_unit, interval_count, created_at, updated_at)
         VALUES ($1, $2, 'blocker', $3, 'month', 1, now(), now())`,
        [acme.tenantId, randomUUID(), code],
      );
      pending = createPlan(code);
      // The request is inside its transaction, waiting for the blocker's row lock. (Asked on a
      // fresh connection: inside a transaction pg_stat_activity is a snapshot.)
      await expect
        .poll(
          async () =>
            (
              await t.database.pool.query<{ n: number }>(
                `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
              )
            ).rows[0]!.n,
          { timeout: 10_000 },
        )
        .toBe(1);

      const closing = t.kosh.close();
      koshClosed = true;
      await expect.poll(refusesConnections, { timeout: 10_000 }).toBe(true);
      let closed = false;
      void closing.then(() => (closed = true));
      await new Promise((resolve) => setImmediate(resolve));
      expect(closed).toBe(false); // still waiting for the blocked request

      await blocker.query('ROLLBACK'); // the blocker gives way; the request completes
      const res = await pending;
      expect(res.status).toBe(201);
      // Its keep-alive connection ends with it, so close() need not wait for the client.
      expect(res.headers.get('connection')).toBe('close');
      expect(((await res.json()) as { data: { code: string } }).data.code).toBe(code);
      await closing;
    } finally {
      await blocker.query('ROLLBACK').catch(() => {});
      blocker.release();
      await pending?.catch(() => {});
    }
  });
});
