import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDatabase, onPostgresServer } from '../support/database.js';
import type { Database } from '../../src/platform/db/database.js';

/**
 * A PostgreSQL server that cuts Kosh's connections (a restart, a failover, an idle-connection
 * reaper, `pg_terminate_backend`) while requests are running must cost those requests a
 * retryable 503 — never the process. `kosh serve` runs as a child process, so a crash shows as
 * its exit; its backends are terminated several times under a write load.
 *
 * Needs a PostgreSQL server (DATABASE_URL): the embedded database has no connections to cut.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const WRITERS = 8;
const ROUNDS = 6;
const LOCK_TIMEOUT_MS = 1_000;

let database: Database & { url?: string };
let serve: ChildProcess;
let output = '';
let base: string;
let key: string;

function startServe(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    serve = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'serve'], {
      cwd: ROOT,
      env: {
        ...process.env,
        DATABASE_URL: url,
        LOG_LEVEL: 'info',
        PORT: '0',
        HOST: '127.0.0.1',
        KOSH_WORKER: 'off',
        KOSH_MODE: 'test',
        KOSH_DB_LOCK_TIMEOUT_MS: String(LOCK_TIMEOUT_MS),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const onData = (chunk: Buffer) => {
      output += chunk;
      const listening = /"address":"(http:\/\/[^"]+)"/.exec(output);
      if (listening) resolve(listening[1]!.replace('localhost', '127.0.0.1'));
    };
    serve.stdout!.on('data', onData);
    serve.stderr!.on('data', onData);
    serve.on('error', reject);
    serve.on('exit', (code) => reject(new Error(`kosh serve exited (${code}) before listening: ${output}`)));
  });
}

type Attempt = { status: number; body: { data?: { id: string }; error?: { code: string; reason?: string } }; retryAfter: string | null };

async function createCustomer(email: string, idempotencyKey: string): Promise<Attempt> {
  const res = await fetch(`${base}/v1/customers`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': idempotencyKey },
    body: JSON.stringify({ email, name: email }),
  });
  return { status: res.status, body: (await res.json()) as Attempt['body'], retryAfter: res.headers.get('retry-after') };
}

async function terminateKoshBackends(admin: pg.Client, databaseName: string): Promise<number> {
  const { rows } = await admin.query<{ n: number }>(
    'SELECT count(*) FILTER (WHERE pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
    [databaseName],
  );
  return rows[0]!.n;
}

describe.skipIf(!onPostgresServer)('kosh serve when PostgreSQL terminates its connections under load (needs DATABASE_URL)', () => {
  beforeAll(async () => {
    database = await openTestDatabase();
    base = await startServe(database.url!);
    const res = await fetch(`${base}/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Cut Off', email: 'owner@cut-off.test' }),
    });
    expect(res.status).toBe(201);
    key = ((await res.json()) as { data: { api_key: { key: string } } }).data.api_key.key;
  }, 120_000);

  afterAll(async () => {
    if (serve && serve.exitCode === null) {
      const exited = new Promise((resolve) => serve.once('exit', resolve));
      serve.kill('SIGTERM');
      await exited;
    }
    await database?.close();
  });

  it('keeps running, answers 503 database_unavailable with Retry-After while cut off, and every acknowledged write is there once', async () => {
    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    const databaseName = new URL(database.url!).pathname.slice(1);
    const attempts: (Attempt & { email: string; idempotencyKey: string })[] = [];
    let loading = true;
    const writers = Array.from({ length: WRITERS }, async (_, w) => {
      for (let i = 0; loading; i++) {
        const email = `w${w}-${i}@cut-off.test`;
        const idempotencyKey = randomUUID();
        attempts.push({ ...(await createCustomer(email, idempotencyKey)), email, idempotencyKey });
      }
    });
    let terminated = 0;
    try {
      for (let round = 0; round < ROUNDS; round++) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        terminated += await terminateKoshBackends(admin, databaseName);
      }
    } finally {
      loading = false;
      await Promise.all(writers);
    }

    expect(serve.exitCode, `kosh serve died: ${output.slice(-2000)}`).toBeNull();
    expect(terminated).toBeGreaterThan(0);
    // A cut connection costs its requests a retryable 503 in the envelope, nothing else.
    const refused = attempts.filter((a) => a.status !== 201);
    for (const a of refused) {
      expect(a.status, JSON.stringify(a.body)).toBe(503);
      expect(a.body.error).toMatchObject({ code: 'internal_error', reason: 'database_unavailable' });
      expect(a.retryAfter).toBe('1');
    }

    // Retried with the same idempotency key, each refused request lands exactly once.
    const acknowledged = new Map(attempts.filter((a) => a.status === 201).map((a) => [a.email, a.body.data!.id]));
    for (const a of refused) {
      const retry = await createCustomer(a.email, a.idempotencyKey);
      expect(retry.status, JSON.stringify(retry.body)).toBe(201);
      acknowledged.set(a.email, retry.body.data!.id);
    }
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(200);

    const { rows } = await admin.query<{ email: string; id: string }>('SELECT email, id FROM customers');
    await admin.end();
    expect(rows.length).toBe(attempts.length);
    expect(new Map(rows.map((r) => [r.email, r.id]))).toEqual(acknowledged);
  }, 120_000);

  it('answers 503 when a table lock outlasts the lock timeout, while routes that do not need that table and /readyz go on', async () => {
    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    try {
      await admin.query('BEGIN');
      await admin.query('LOCK TABLE customers IN ACCESS EXCLUSIVE MODE');
      const blocked = await createCustomer('locked-out@cut-off.test', randomUUID());
      expect(blocked.status, JSON.stringify(blocked.body)).toBe(503);
      expect(blocked.body.error).toMatchObject({ reason: 'database_unavailable' });
      const plans = await fetch(`${base}/v1/plans`, { headers: { authorization: `Bearer ${key}` } });
      expect(plans.status).toBe(200);
      expect((await fetch(`${base}/readyz`)).status).toBe(200);
    } finally {
      await admin.query('ROLLBACK');
      await admin.end();
    }
    expect((await createCustomer('after-the-lock@cut-off.test', randomUUID())).status).toBe(201);
  }, 60_000);
});
