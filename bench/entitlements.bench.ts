/**
 * npm run bench:entitlements — GET /v1/customers/{id}/entitlements, the read an application makes on
 * every request (DESIGN §23).
 *
 * Starts Kosh on a real port (worker off, logs silent), registers a tenant with three features and a
 * plan granting them, BENCH_CUSTOMERS customers (default 10 000; inserted in bulk, every tenth
 * subscribed to the plan through the API), then with autocannon (10 connections, BENCH_SECONDS,
 * default 10, after a warm-up that reads every customer once) requests the customers round robin,
 * from BENCH_WORKERS load threads (default 1; 0: on the server's own thread).
 * Embedded database by default; PostgreSQL when DATABASE_URL is set (a fresh database, dropped
 * afterwards). Prints the figures, then LAST one JSON line:
 *   {"entitlements_rps", "p50_ms", "p99_ms", "db_statements_per_request", "customers", "connections", "load_threads",
 *    "target_rps", "target_p99_ms", "met"}
 * (db_statements_per_request: every statement any client sent during the run — the rate-limit flushes
 * and the change feed's beats included — over the requests answered.)
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import pg from 'pg';
import { pino } from 'pino';
import { createKosh, type Kosh } from '../src/app.js';
import { loadConfig } from '../src/platform/config.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CUSTOMERS = Number(process.env.BENCH_CUSTOMERS ?? 10_000);
const CONNECTIONS = 10;
/**
 * Threads generating the load (BENCH_WORKERS, default 1): autocannon's client then runs beside the
 * server's event loop instead of on it. 0 runs it on the server's thread, as a single-threaded
 * client would share a core.
 */
const WORKERS = Number(process.env.BENCH_WORKERS ?? 1);

// Every statement sent to the database (the pool's and the change feed's), to report how many a request costs.
let statements = 0;
const clientQuery = pg.Client.prototype.query;
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  statements += 1;
  return (clientQuery as (...a: unknown[]) => unknown).apply(this, args);
} as typeof clientQuery;

async function freshStorage(): Promise<{ env: Record<string, string>; label: string; cleanup: () => Promise<void> }> {
  const serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) {
    const dir = mkdtempSync(join(tmpdir(), 'kosh-bench-'));
    return { env: { KOSH_DATA_DIR: dir }, label: 'embedded PGlite', cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const name = `kosh_bench_${randomBytes(4).toString('hex')}`;
  const admin = async (statement: string) => {
    const client = new pg.Client({ connectionString: serverUrl });
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    env: { DATABASE_URL: url.toString() },
    label: `PostgreSQL (${url.host}/${name})`,
    cleanup: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}

function run(title: string, options: autocannon.Options): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    autocannon({ connections: CONNECTIONS, ...options, title }, (error, result) => (error ? reject(error) : resolve(result)));
  });
}

async function main() {
  const storage = await freshStorage();
  let kosh: Kosh | undefined;
  try {
    const unlimited = { KOSH_RATE_LIMIT_KEY_PER_MINUTE: '1000000000', KOSH_RATE_LIMIT_IP_PER_MINUTE: '1000000000' };
    const config = loadConfig({ KOSH_MODE: 'test', LOG_LEVEL: 'silent', KOSH_WORKER: 'off', PORT: '0', ...unlimited, ...storage.env });
    kosh = await createKosh({ config, logger: pino({ level: 'silent' }) });
    const base = await kosh.app.listen({ port: 0, host: '127.0.0.1' });
    const registered = await fetch(`${base}/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Bench', email: 'bench@kosh.test' }),
    });
    if (registered.status !== 201) throw new Error(`registration failed: ${registered.status}`);
    const body = (await registered.json()) as { data: { api_key: { key: string }; tenant: { id: string } } };
    const tenantId = body.data.tenant.id;
    const headers = { authorization: `Bearer ${body.data.api_key.key}`, 'content-type': 'application/json' };
    const api = async (method: string, path: string, payload?: unknown) => {
      const res = await fetch(`${base}${path}`, { method, headers, body: payload === undefined ? undefined : JSON.stringify(payload) });
      if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
      return ((await res.json()) as { data: { id: string } }).data;
    };
    for (const f of [
      { key: 'sso', name: 'SSO', type: 'boolean' },
      { key: 'seats', name: 'Seats', type: 'quantity' },
      { key: 'support', name: 'Support', type: 'enum', values: ['email', 'phone'] },
    ])
      await api('POST', '/v1/features', f);
    const plan = await api('POST', '/v1/plans', { name: 'Pro', code: 'pro', interval_unit: 'month', amount: 49_900, currency: 'INR' });
    await api('PUT', `/v1/plans/${plan.id}/entitlements`, [
      { feature_key: 'sso', value: true },
      { feature_key: 'seats', value: 10 },
      { feature_key: 'support', value: 'phone' },
    ]);

    const ids = Array.from({ length: CUSTOMERS }, () => randomUUID());
    const db = kosh.deps.database.db;
    const now = new Date();
    for (let i = 0; i < ids.length; i += 1_000) {
      await db
        .insertInto('customers')
        .values(
          ids.slice(i, i + 1_000).map((id, k) => ({
            tenant_id: tenantId,
            id,
            email: `c${i + k}@bench.test`,
            name: `Customer ${i + k}`,
            external_id: null,
            phone: null,
            gstin: null,
            sez: false,
            billing_address: null,
            metadata: '{}',
            created_at: now,
            updated_at: now,
          })),
        )
        .execute();
    }
    const subscribed = Math.min(200, Math.ceil(CUSTOMERS / 10));
    for (let i = 0; i < subscribed; i++) await api('POST', '/v1/subscriptions', { customer_id: ids[i * 10]!, plan_id: plan.id });
    console.log(
      `${storage.label}: ${CUSTOMERS} customers (${subscribed} subscribed), ${CONNECTIONS} connections, ${SECONDS} s, load from ${WORKERS > 0 ? `${WORKERS} worker thread(s)` : "the server's thread"}`,
    );

    // Each connection reads the customers in turn (a fixed list: it can be handed to a worker thread).
    const requests = ids.map((id) => ({ method: 'GET' as const, path: `/v1/customers/${id}/entitlements` }));
    const options = { url: base, headers: { authorization: headers.authorization }, requests, ...(WORKERS > 0 ? { workers: WORKERS } : {}) };
    // Warm-up: every customer read once on one connection (the cache fills), then the measured run.
    // (autocannon starts every connection at the top of the list: a 10-connection warm-up of N
    // requests reads only the first N/10 customers, and the run then measures first reads.)
    await run('warm-up', { ...options, connections: 1, amount: CUSTOMERS });
    const before = statements;
    const result = await run('entitlements', { ...options, duration: SECONDS });
    const perRequest = (statements - before) / Math.max(1, result.requests.total);
    const bad = result.non2xx + result.errors + result.timeouts;
    if (bad > 0) throw new Error(`${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts — the figure is not valid`);
    const rps = Math.round(result.requests.average);
    console.log(`GET entitlements ${rps} req/s  latency p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms  (${result.requests.total} requests)`);
    console.log(`database statements during the run: ${statements - before} (${perRequest.toFixed(4)} per request, background work included)`);
    console.log(
      JSON.stringify({
        entitlements_rps: rps,
        p50_ms: result.latency.p50,
        p99_ms: result.latency.p99,
        db_statements_per_request: Number(perRequest.toFixed(4)),
        customers: CUSTOMERS,
        connections: CONNECTIONS,
        load_threads: WORKERS,
        target_rps: 5_000,
        target_p99_ms: 2,
        met: rps >= 5_000 && result.latency.p99 <= 2,
      }),
    );
  } finally {
    await kosh?.close();
    await storage.cleanup();
  }
}

await main();
