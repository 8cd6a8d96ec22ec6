import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKosh, type Tenant, type TestKosh } from '../../../test/support/harness.js';
import { onPostgresServer } from '../../../test/support/database.js';

let t: TestKosh;
let acme: Tenant;

beforeAll(async () => {
  t = await startTestKosh();
  acme = await t.registerTenant();
});
afterAll(() => t.close());

// PGlite is one in-process connection with nothing to drop; only a server can cut connections.
describe.skipIf(!onPostgresServer)('database pool on a PostgreSQL server', () => {
  it('survives the server terminating its idle connections (restart, failover, admin kill)', async () => {
    // Fill the pool with several idle connections.
    await Promise.all(Array.from({ length: 5 }, () => acme.api('GET', '/v1/settings')));
    const pool = t.database.pool;
    expect(pool.idleCount).toBeGreaterThan(1);

    const killer = await pool.connect();
    try {
      await killer.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()');
    } finally {
      killer.release();
    }
    // Wait (bounded) until the pool has seen the dead connections and dropped them; without an
    // 'error' listener on the pool each of those is an uncaught exception that kills the process.
    for (let i = 0; i < 100 && pool.totalCount > 1; i++) await sleep(20);
    expect(pool.totalCount).toBe(1);

    const res = await acme.api('GET', '/v1/settings');
    expect(res.status).toBe(200);
  });
});
