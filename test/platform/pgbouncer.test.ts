import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKosh, type Kosh } from '../../src/app.js';
import { ManualClock } from '../../src/platform/clock.js';
import { loadConfig } from '../../src/platform/config.js';
import type { Database } from '../../src/platform/db/database.js';
import { onPostgresServer, openTestDatabase } from '../support/database.js';
import { toResponse } from '../support/harness.js';

/**
 * Kosh behind PgBouncer in transaction mode (docs/operations.md, "Connection poolers"): Debian's
 * pgbouncer on loopback with 2 server connections for Kosh's 10 client connections, the
 * guide's settings (`ignore_startup_parameters` for the timeouts Kosh passes at connect). Concurrent
 * writes all commit with their ledger entries; a process starting behind the pooler on an
 * up-to-date database leaves no advisory lock and no session setting behind.
 *
 * Needs DATABASE_URL (a PostgreSQL server reachable on 127.0.0.1), /usr/sbin/pgbouncer and root
 * (pgbouncer runs as `postgres`) or the postgres user.
 */
const runnable = onPostgresServer && existsSync('/usr/sbin/pgbouncer');
const asRoot = process.getuid?.() === 0;
const PORT = 6500 + (process.pid % 400);

let database: Database & { url?: string };
let bouncer: ChildProcess;
let dir: string;
const kosh: Kosh[] = [];

async function start(): Promise<Kosh> {
  const url = new URL(database.url!);
  const config = loadConfig({
    KOSH_MODE: 'test',
    LOG_LEVEL: 'silent',
    KOSH_SECRET_KEY: randomBytes(32).toString('base64'),
    DATABASE_URL: `postgres://${url.username || 'postgres'}@127.0.0.1:${PORT}/kosh`,
  });
  const k = await createKosh({ config, clock: new ManualClock('2026-04-01T00:00:00Z'), logger: pino({ level: 'silent' }) });
  kosh.push(k);
  return k;
}

describe.skipIf(!runnable)('behind PgBouncer in transaction mode (needs DATABASE_URL and pgbouncer)', () => {
  beforeAll(async () => {
    database = await openTestDatabase(); // migrated directly, as the guide says
    const url = new URL(database.url!);
    dir = mkdtempSync(join(tmpdir(), 'kosh-pgbouncer-'));
    writeFileSync(
      join(dir, 'pgbouncer.ini'),
      `[databases]
kosh = host=127.0.0.1 port=${url.port || 5432} dbname=${url.pathname.slice(1)} user=${url.username || 'postgres'}
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = ${PORT}
unix_socket_dir =
auth_type = trust
auth_file = ${join(dir, 'users.txt')}
pool_mode = transaction
default_pool_size = 2
max_client_conn = 100
ignore_startup_parameters = statement_timeout,lock_timeout,idle_in_transaction_session_timeout,extra_float_digits
logfile = ${join(dir, 'pgbouncer.log')}
`,
    );
    writeFileSync(join(dir, 'users.txt'), `"${url.username || 'postgres'}" ""\n`);
    const ids = asRoot
      ? {
          uid: Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout),
          gid: Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout),
        }
      : {};
    if (asRoot) for (const f of ['', 'pgbouncer.ini', 'users.txt']) chownSync(join(dir, f), ids.uid!, ids.gid!);
    bouncer = spawn('/usr/sbin/pgbouncer', [join(dir, 'pgbouncer.ini')], { stdio: 'ignore', ...ids });
    for (let i = 0; i < 100; i++) {
      const c = new pg.Client({ connectionString: `postgres://${url.username || 'postgres'}@127.0.0.1:${PORT}/kosh` });
      const ok = await c.connect().then(
        () => true,
        () => false,
      );
      await c.end().catch(() => {});
      if (ok) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }, 60_000);

  afterAll(async () => {
    for (const k of kosh) await k.close();
    bouncer?.kill('SIGTERM');
    await database?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('commits concurrent writes with balanced books through 2 shared server connections, and starts again without leaving a lock behind', async () => {
    const k = await start();
    const call = async (method: string, url: string, key?: string, body?: unknown) =>
      toResponse(
        await k.app.inject({
          method: method as 'GET',
          url,
          headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...(body ? { 'content-type': 'application/json' } : {}) },
          ...(body ? { payload: JSON.stringify(body) } : {}),
        }),
      );
    const reg = await call('POST', '/auth/register', undefined, { name: 'Pooled', email: 'owner@pooled.test' });
    expect(reg.status, reg.text).toBe(201);
    const key = reg.body.data.api_key.key as string;

    // 20 customers, each with a ₹1 000.00 invoice (no GST: the entity has no GSTIN), 20 at once.
    const results = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const customer = await call('POST', '/v1/customers', key, { email: `c${i}@pooled.test`, name: `C ${i}` });
        const invoice = await call('POST', '/v1/invoices', key, {
          customer_id: customer.body.data?.id,
          currency: 'INR',
          lines: [{ description: 'Plan', unit_amount: 100_000 }],
        });
        return [customer.status, invoice.status];
      }),
    );
    expect(results.flat().filter((s) => s !== 201)).toEqual([]);
    const entity = (await call('GET', '/v1/entities', key)).body.data[0].id as string;
    const tb = await call('GET', `/v1/ledger/trial-balance?entity_id=${entity}&currency=INR`, key);
    expect(tb.body.data.total_debit).toBe(20 * 100_000);
    expect(tb.body.data.total_credit).toBe(20 * 100_000);

    // A second process starting behind the pooler: nothing pending, so no session lock or SET.
    await start();
    const direct = new pg.Client({ connectionString: database.url });
    await direct.connect();
    const locks = await direct.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory'`);
    await direct.end();
    expect(locks.rows[0]!.n).toBe(0);
  }, 120_000);
});
