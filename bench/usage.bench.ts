/**
 * npm run bench:usage — usage ingestion over HTTP, then the billing of usage in arrears.
 *
 * Starts Kosh on a real port (worker off, logs silent; PostgreSQL when DATABASE_URL is set, on a
 * fresh database dropped afterwards, else embedded PGlite), registers a tenant, creates a `sum`
 * billable metric and a monthly plan with a fixed price and a graduated metered price, and seeds
 * SUBS customers each with a subscription whose period [March, April) is due (bulk SQL).
 *
 * 1. Ingestion: autocannon, 10 connections, POST /v1/usage/events/batch with 1 000 events a
 *    request (unique transaction ids, customers and timestamps spread over the period) until
 *    HTTP_EVENTS events are sent → events_per_s (accepted events / wall time). Then ALERTS
 *    active `usage_threshold` alerts (notify) are added round robin over the customers, with
 *    thresholds spread so some are crossed at once, some during the phase and some never, and
 *    HTTP_EVENTS more events are sent the same way while the worker's fold runs every second (each
 *    batch queues its deltas and the fold moves the alerts, decision 0900; the rest of the worker
 *    stays off) → events_per_s_with_alerts: events stored / the time until the last request was
 *    answered AND the queue it left was folded; alert_lag_ms and alert_lag_p50_ms: the oldest
 *    queued row's age, sampled every 100 ms, at most and at the median (how late an alert
 *    triggers). Checks: every event stored once, and every crossed alert has exactly one trigger
 *    row and one `alert.triggered` event.
 * 2. Billing: the rest of the period's EVENTS events are inserted with one set-based SQL statement
 *    (sending 5 000 000 through HTTP would take minutes on this machine and measures nothing more),
 *    ANALYZE, then the billing run (`runBillingRun`) renews every subscription — one grouped usage
 *    query per batch — → billing_per_s. Checks every subscription got one renewal invoice whose
 *    usage lines add up to the price of its events' sum, recomputed here in SQL + the pure maths.
 *
 * Before all this, untimed: 2 000 renewals of another tenant and ANALYZE (see bench:billing).
 *
 * LAST line: {"events_per_s":…, "events_per_s_with_alerts":…, "alerts":…, "alert_lag_ms":…, "alert_lag_p50_ms":…, "billing_per_s":…, "peak_rss_mb":…}
 *   --subs 10000   subscriptions (one customer each)
 *   --events 5000000  events in the billed period (HTTP ones included)
 *   --http 300000  events sent over HTTP in each ingestion phase
 *   --alerts 10000 active usage alerts in the second phase (0: no second phase, null figure)
 *   --connections 10  autocannon connections
 *   --batch 200    renewals per billing transaction (as bench:billing)
 *   --sql-only     instead of 1. and 2.: the database part of ingestion ALONE, no HTTP. The --http
 *                  events, prebuilt as the JSON parser hands them over, in 1 000-event batches (as the
 *                  HTTP path), each batch in its own transaction, from 1 connection and from each
 *                  count of --sql-connections (default 1,2,4,10): (a) `insert` — only the insert
 *                  statement the ingest path sends (`insertEvents`, rows already resolved); (b) `batch`
 *                  — every statement of a batch's action through the flow (`recordUsageEvents`:
 *                  lookups, late check, insert, alert check), no HTTP, auth, audit or idempotency;
 *                  (c) `set-based` — the same events generated in SQL by one INSERT … SELECT a batch
 *                  into both tables (the ceiling with no parameters at all). Prints events/s and µs
 *                  of wall time and of this process's CPU an event.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import { pino } from 'pino';
import { createKosh, type Kosh } from '../src/app.js';
import { runBillingRun } from '../src/flows/subscriptions/run-billing.js';
import { recordUsageEvents } from '../src/flows/usage/record-usage-events.js';
import { insertEvents, metricsByCodes, type EventInsert } from '../src/modules/usage/index.js';
import { customerRefs } from '../src/modules/customers/index.js';
import { foldPendingUsageAlerts, USAGE_ALERT_FOLD_MS } from '../src/modules/alerts/index.js';
import { meteredPeriodCutoffs } from '../src/modules/subscriptions/index.js';
import type { DB } from '../src/platform/db/schema.js';
import { priceQuantity, type PricingScheme } from '../src/modules/plans/index.js';
import { loadConfig } from '../src/platform/config.js';
import { seedDueSubscriptions } from '../test/subscriptions/seed.js';
import { gstinCheckCharacter } from '../src/modules/tax/index.js';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

const SUBS = arg('subs', 10_000);
const EVENTS = arg('events', 5_000_000);
const HTTP_EVENTS = Math.min(arg('http', 300_000), EVENTS);
const BATCH = arg('batch', 200);
const ALERTS = arg('alerts', 10_000);
const PER_REQUEST = 1000;
const CONNECTIONS = arg('connections', 10);
const SQL_ONLY = process.argv.includes('--sql-only');
const SQL_CONNECTIONS = (() => {
  const i = process.argv.indexOf('--sql-connections');
  return (i >= 0 ? process.argv[i + 1]! : '1,2,4,10').split(',').map(Number);
})();
const START = new Date('2026-03-01T00:00:00Z');
const END = new Date('2026-04-01T00:00:00Z');
const PERIOD_MS = END.getTime() - START.getTime();
const TIERS = [
  { up_to: 1000, unit_amount: 10 },
  { up_to: 10_000, unit_amount: 5, flat_amount: 500 },
  { up_to: null, unit_amount: 2 },
];

type Storage = { env: Record<string, string>; label: string; cleanup: () => Promise<void> };

async function freshStorage(): Promise<Storage> {
  const serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) {
    const dir = mkdtempSync(join(tmpdir(), 'kosh-bench-'));
    return { env: { KOSH_DATA_DIR: dir }, label: `embedded PGlite (${dir})`, cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
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

async function main() {
  const storage = await freshStorage();
  let kosh: Kosh | undefined;
  try {
    const unlimited = { KOSH_RATE_LIMIT_KEY_PER_MINUTE: '1000000000', KOSH_RATE_LIMIT_IP_PER_MINUTE: '1000000000' };
    const config = loadConfig({
      KOSH_MODE: 'test',
      LOG_LEVEL: 'silent',
      KOSH_WORKER: 'off',
      PORT: '0',
      KOSH_DB_POOL_SIZE: '12',
      KOSH_DB_STATEMENT_TIMEOUT_MS: '600000',
      ...unlimited,
      ...storage.env,
    });
    kosh = await createKosh({ config, logger: pino({ level: 'silent' }) });
    const base = await kosh.app.listen({ port: 0, host: '127.0.0.1' });
    const db = kosh.deps.database.db;
    console.log(`storage: ${storage.label}`);
    // Warm-up, untimed (as bench:billing): another tenant's renewals, then ANALYZE, so the foreign-key
    // checks on the invoice and ledger tables are not planned as scans of tables known to be empty.
    if (!SQL_ONLY) {
      await seedDueSubscriptions(db, { n: 2_000, anchor: START, due: END, customers: 100 });
      await runBillingRun(db, END, { batchSize: BATCH });
    }
    await sql`ANALYZE`.execute(db);

    const registered = await fetch(`${base}/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Bench', email: 'bench@kosh.test', gstin: `29AAACA1234A1Z${gstinCheckCharacter('29AAACA1234A1Z')}` }),
    });
    if (registered.status !== 201) throw new Error(`registration failed: ${registered.status} ${await registered.text()}`);
    const reg = (await registered.json()) as { data: { api_key: { key: string }; tenant: { id: string } } };
    const key = reg.data.api_key.key;
    const tenantId = reg.data.tenant.id;
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const post = async (path: string, body: unknown) => {
      const res = await fetch(`${base}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
      if (res.status >= 300) throw new Error(`${path}: ${res.status} ${await res.text()}`);
      return ((await res.json()) as { data: Record<string, unknown> }).data;
    };
    await post('/v1/billable-metrics', { code: 'gb', name: 'Storage GB', aggregation: 'sum', field: 'gb' });
    const plan = (await post('/v1/plans', {
      name: 'Metered',
      code: 'metered',
      interval: 'month',
      hsn_code: '998314',
      prices: [
        { currency: 'INR', amount: 49900 },
        { currency: 'INR', billing_scheme: 'metered', metric_code: 'gb', tiers_mode: 'graduated', tiers: TIERS },
      ],
    })) as { id: string };

    // Customers and due subscriptions, one each (bulk SQL).
    await sql`
      INSERT INTO customers (tenant_id, id, email, name, billing_address, created_at, updated_at)
      SELECT ${tenantId}, gen_random_uuid(), 'c' || i || '@seed.test', 'Customer ' || i,
             jsonb_build_object('state_code', CASE WHEN i % 2 = 0 THEN '29' ELSE '27' END, 'country', 'IN'), ${START}, ${START}
      FROM generate_series(1, ${SUBS}) AS i`.execute(db);
    await sql`
      INSERT INTO subscriptions (tenant_id, id, customer_id, plan_id, currency, quantity, status, interval_unit, interval_count,
                                 billing_anchor, period_index, current_period_start, current_period_end, created_at, updated_at)
      SELECT ${tenantId}, gen_random_uuid(), c.id, ${plan.id}, 'INR', 1, 'active', 'month', 1, ${START}, 0, ${START}, ${END}, ${START}, ${START}
      FROM customers c WHERE c.tenant_id = ${tenantId}`.execute(db);
    await sql`ANALYZE customers, subscriptions, plans, prices`.execute(db);
    const customerIds = (await sql<{ id: string }>`SELECT id FROM customers WHERE tenant_id = ${tenantId} ORDER BY id`.execute(db)).rows.map((r) => r.id);

    if (SQL_ONLY) {
      await measureSqlOnly(db, tenantId, customerIds);
      return;
    }

    // 1. Ingestion over HTTP: without alerts, then (--alerts N) with N active usage alerts.
    let sent = 0;
    const body = () => {
      const parts: string[] = [];
      for (let i = 0; i < PER_REQUEST; i += 1) {
        const n = sent + i;
        const ts = new Date(START.getTime() + ((n * 7919) % PERIOD_MS)).toISOString();
        parts.push(
          `{"transaction_id":"h${n}","customer_id":"${customerIds[n % SUBS]}","metric_code":"gb","timestamp":"${ts}","properties":{"gb":${(n % 5) + 1}}}`,
        );
      }
      sent += PER_REQUEST;
      return `{"events":[${parts.join(',')}]}`;
    };
    const countStored = async () =>
      Number((await sql<{ n: string }>`SELECT count(*) AS n FROM usage_events WHERE tenant_id = ${tenantId}`.execute(db)).rows[0]!.n);
    /** Resolves once the usage alerts' queue is empty (the worker folded what ingestion left). */
    const folded = async () => {
      const queued = async () => Number((await sql<{ n: string }>`SELECT count(*) AS n FROM usage_alert_pending`.execute(db)).rows[0]!.n);
      while ((await queued()) > 0) await new Promise((r) => setTimeout(r, 20));
    };
    const ingest = async (label: string, settle?: () => Promise<void>): Promise<number> => {
      const before = await countStored();
      const requests = Math.ceil(HTTP_EVENTS / PER_REQUEST);
      const dbCpuBefore = await databaseCpuTicks(db);
      const ingestStarted = performance.now();
      const appCpuBefore = process.cpuUsage();
      const result = await new Promise<autocannon.Result>((resolve, reject) =>
        autocannon(
          {
            url: `${base}/v1/usage/events/batch`,
            method: 'POST',
            connections: CONNECTIONS,
            amount: requests,
            timeout: 60,
            headers,
            requests: [{ method: 'POST', setupRequest: (request) => ({ ...request, body: body() }) }],
          },
          (error, r) => (error ? reject(error) : resolve(r)),
        ),
      );
      await settle?.();
      const ingestSeconds = (performance.now() - ingestStarted) / 1000;
      const appCpu = process.cpuUsage(appCpuBefore);
      const dbCpu = await databaseCpuSince(db, dbCpuBefore);
      const stored = (await countStored()) - before;
      const eventsPerS = Math.round(stored / ingestSeconds);
      console.log(
        `ingestion ${label}: ${result.requests.total} requests (${result.non2xx} non-2xx, ${result.errors} errors), ${stored} events stored in ${ingestSeconds.toFixed(1)} s = ${eventsPerS} events/s; ` +
          `request latency p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms; app CPU ${(((appCpu.user + appCpu.system) / 1000 / Math.max(stored, 1)) * 1000).toFixed(1)} µs per event (autocannon's body building included), ` +
          `PostgreSQL CPU ${((dbCpu * 1e6) / Math.max(stored, 1)).toFixed(1)} µs per event`,
      );
      if (result.non2xx > 0 || result.errors > 0 || stored !== requests * PER_REQUEST)
        failures.push(`ingestion ${label}: ${stored} of ${requests * PER_REQUEST} events stored`);
      return eventsPerS;
    };
    const failures: string[] = [];
    const eventsPerS = await ingest('without alerts');

    let eventsPerSWithAlerts: number | null = null;
    let alertLagMs = 0;
    let alertLagP50Ms = 0;
    if (ALERTS > 0) {
      // N notify alerts on the metric, round robin over the customers, thresholds spread so that some
      // are crossed by what is already stored, some during this phase and some never.
      await sql`
        INSERT INTO alerts (tenant_id, id, customer_id, subscription_id, type, metric_code, currency, threshold, action, recurring, status, created_at, updated_at)
        SELECT ${tenantId}, gen_random_uuid(), c.id, NULL, 'usage_threshold', 'gb', NULL, 50 + (i * 37) % 400, 'notify', true, 'active', ${START}, ${START}
          FROM generate_series(0, ${ALERTS - 1}) AS i
          JOIN (SELECT id, row_number() OVER (ORDER BY id) - 1 AS k FROM customers WHERE tenant_id = ${tenantId}) AS c ON c.k = i % ${SUBS}`.execute(db);
      await sql`ANALYZE alerts`.execute(db);
      // The worker's fold of the alerts' queue, every USAGE_ALERT_FOLD_MS as the worker runs it (the
      // rest of the worker stays off: its billing sweep would renew the subscriptions phase 2 bills).
      let sampling = true;
      const { deps } = kosh;
      const foldEnv = { db, clock: deps.clock, config: deps.config, logger: deps.logger, secrets: deps.secrets, scope: deps.scope };
      const foldMs: number[] = [];
      const folder = (async () => {
        while (sampling) {
          const started = performance.now();
          await foldPendingUsageAlerts(foldEnv);
          const took = performance.now() - started;
          foldMs.push(took);
          // As the worker's ticker: started every USAGE_ALERT_FOLD_MS, at once again after a longer fold.
          if (took < USAGE_ALERT_FOLD_MS) await new Promise((r) => setTimeout(r, USAGE_ALERT_FOLD_MS - took));
        }
      })();
      const lags: number[] = [];
      const lagSampler = (async () => {
        while (sampling) {
          const { rows } = await sql<{ lag: number | null }>`
            SELECT (extract(epoch FROM clock_timestamp() - min(created_at)) * 1000)::float8 AS lag FROM usage_alert_pending`.execute(db);
          lags.push(Math.round(rows[0]?.lag ?? 0));
          await new Promise((r) => setTimeout(r, 100));
        }
      })();
      eventsPerSWithAlerts = await ingest(`with ${ALERTS} active alerts`, folded);
      sampling = false;
      await Promise.all([lagSampler, folder]);
      const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
      const at = (xs: number[], q: number) => xs[Math.min(xs.length - 1, Math.floor(q * xs.length))] ?? 0;
      alertLagMs = Math.max(0, ...lags);
      alertLagP50Ms = at(sorted(lags), 0.5);
      const folds = sorted(foldMs);
      console.log(
        `alerts' queue: the oldest queued row's age, sampled every 100 ms: p50 ${alertLagP50Ms} ms, max ${alertLagMs} ms; ` +
          `${folds.length} folds every ${USAGE_ALERT_FOLD_MS} ms: p50 ${Math.round(at(folds, 0.5))} ms, max ${Math.round(folds.at(-1) ?? 0)} ms ` +
          `(the first seeds every alert's total by measuring its period); RSS after the phase ${Math.round(process.memoryUsage().rss / 1048576)} MB`,
      );
      // Each alert triggered once exactly when the period's quantity reached its threshold.
      const check = await sql<{ crossed: string; triggers: string; events: string }>`
        SELECT (SELECT count(*) FROM alerts a
                  JOIN (SELECT customer_id, ceil(sum(value)) AS q FROM usage_events WHERE tenant_id = ${tenantId} AND ts >= ${START} AND ts < ${END} GROUP BY customer_id) u
                    ON u.customer_id = a.customer_id
                 WHERE a.tenant_id = ${tenantId} AND u.q >= a.threshold)::text AS crossed,
               (SELECT count(*) FROM alert_triggers WHERE tenant_id = ${tenantId})::text AS triggers,
               (SELECT count(*) FROM events WHERE tenant_id = ${tenantId} AND type = 'alert.triggered')::text AS events`.execute(db);
      const { crossed, triggers, events } = check.rows[0]!;
      console.log(`alerts: ${crossed} of ${ALERTS} crossed, ${triggers} trigger rows, ${events} alert.triggered events`);
      if (crossed !== triggers || triggers !== events) failures.push(`alerts: ${crossed} crossed, ${triggers} triggers, ${events} events`);
    }

    // 2. The rest of the period's events, set-based, then bill.
    const seedStarted = performance.now();
    const rest = EVENTS - (await countStored());
    if (rest > 0) {
      await sql`
        INSERT INTO usage_events (tenant_id, transaction_id, customer_id, metric_id, ts, value, properties, created_at)
        SELECT ${tenantId}, 's' || i, c.id, m.id, ${START}::timestamptz + ((i::bigint * 7919) % ${PERIOD_MS}::bigint) * interval '1 millisecond', (i % 5) + 1,
               jsonb_build_object('gb', (i % 5) + 1), ${START}
          FROM generate_series(1, ${rest}) AS i
          JOIN (SELECT id, row_number() OVER (ORDER BY id) - 1 AS k FROM customers WHERE tenant_id = ${tenantId}) AS c ON c.k = i % ${SUBS}
          CROSS JOIN (SELECT id FROM billable_metrics WHERE tenant_id = ${tenantId}) AS m`.execute(db);
    }
    await sql`VACUUM ANALYZE usage_events`.execute(db);
    console.log(`seeded ${rest} more events in SQL (${((performance.now() - seedStarted) / 1000).toFixed(1)} s): ${EVENTS} in the billed period`);

    const billingStarted = performance.now();
    const report = await runBillingRun(db, END, { batchSize: BATCH });
    const billingSeconds = (performance.now() - billingStarted) / 1000;
    const billingPerS = Math.round(report.renewed / billingSeconds);

    // Check: one renewal per subscription; usage lines = the tiers applied to each customer's sum.
    const sums = await sql<{ customer_id: string; total: string }>`
      SELECT customer_id, sum(value)::text AS total FROM usage_events WHERE tenant_id = ${tenantId} AND ts >= ${START} AND ts < ${END} GROUP BY customer_id`.execute(
      db,
    );
    const billed = await sql<{ customer_id: string; usage: string; invoices: string }>`
      SELECT i.customer_id, coalesce(sum(l.amount) FILTER (WHERE l.period_end = ${END}), 0)::text AS usage, count(DISTINCT i.id)::text AS invoices
        FROM invoices i JOIN invoice_lines l ON l.tenant_id = i.tenant_id AND l.invoice_id = i.id
       WHERE i.tenant_id = ${tenantId} AND i.billing_reason = 'subscription_cycle'
       GROUP BY i.customer_id`.execute(db);
    const scheme: PricingScheme = { amount: 0, tiers_mode: 'graduated', tiers: TIERS };
    const expected = new Map(sums.rows.map((r) => [r.customer_id, priceQuantity(scheme, Math.ceil(Number(r.total))).amount]));
    let mismatches = 0;
    for (const r of billed.rows) if (Number(r.invoices) !== 1 || Number(r.usage) !== (expected.get(r.customer_id) ?? 0)) mismatches += 1;
    const ok = report.renewed === SUBS && report.failed === 0 && billed.rows.length === SUBS && mismatches === 0 && failures.length === 0;
    for (const failure of failures) console.log(`CHECK FAILED: ${failure}`);
    const peakRssMb = Math.round(process.resourceUsage().maxRSS / 1024);
    console.log(
      `billing: ${report.renewed} renewed (${report.failed} failed) in ${billingSeconds.toFixed(2)} s = ${billingPerS} subscriptions/s, batch ${BATCH}; ` +
        `usage lines checked against SQL sums: ${mismatches} mismatches — ${ok ? 'checks passed' : 'CHECKS FAILED'}; peak RSS ${peakRssMb} MB`,
    );
    console.log(
      JSON.stringify({
        events_per_s: eventsPerS,
        events_per_s_with_alerts: eventsPerSWithAlerts,
        alerts: ALERTS,
        alert_lag_ms: ALERTS > 0 ? alertLagMs : null,
        alert_lag_p50_ms: ALERTS > 0 ? alertLagP50Ms : null,
        billing_per_s: billingPerS,
        peak_rss_mb: peakRssMb,
      }),
    );
    if (!ok) process.exitCode = 1;
  } finally {
    await kosh?.close();
    await storage.cleanup();
  }
}

/**
 * The CPU ticks (1/100 s) each PostgreSQL backend of this database has used (utime + stime from
 * /proc, the server being local): PostgreSQL's share of an event whatever else the shared machine
 * runs. `databaseCpuSince` counts a backend's ticks since the first reading (all of them for one
 * started since); backends that ended are missed (the pool's stay open while it is busy).
 */
async function databaseCpuTicks(db: Kysely<DB>): Promise<Map<number, number>> {
  const { rows } = await sql<{ pid: number }>`SELECT pid FROM pg_stat_activity WHERE datname = current_database()`.execute(db);
  const ticks = new Map<number, number>();
  for (const { pid } of rows) {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      ticks.set(pid, Number(fields[11]) + Number(fields[12]));
    } catch {
      // A backend that ended, or a server on another machine: not counted.
    }
  }
  return ticks;
}

async function databaseCpuSince(db: Kysely<DB>, before: Map<number, number>): Promise<number> {
  let ticks = 0;
  for (const [pid, now] of await databaseCpuTicks(db)) ticks += now - (before.get(pid) ?? 0);
  return ticks / 100;
}

/** An event as the HTTP path's JSON parser hands it over (the same shape and values as its bodies). */
function plainEvent(n: number, customerIds: string[], prefix: string) {
  return {
    transaction_id: `${prefix}${n}`,
    customer_id: customerIds[n % customerIds.length]!,
    metric_code: 'gb',
    timestamp: new Date(START.getTime() + ((n * 7919) % PERIOD_MS)).toISOString(),
    properties: { gb: (n % 5) + 1 },
  };
}

/** --sql-only: the database part of ingestion alone (see the header), from 1 and N connections. */
async function measureSqlOnly(db: Kysely<DB>, tenantId: string, customerIds: string[]) {
  const [metric] = await metricsByCodes(db, tenantId, ['gb']);
  const now = START;
  const batches = Math.ceil(HTTP_EVENTS / PER_REQUEST);
  let round = 0;
  const run = async (label: string, connections: number, batch: (events: ReturnType<typeof plainEvent>[], b: number) => Promise<number>) => {
    round += 1;
    const prefix = `q${round}_`;
    const all = Array.from({ length: batches }, (_, b) => Array.from({ length: PER_REQUEST }, (_, i) => plainEvent(b * PER_REQUEST + i, customerIds, prefix)));
    let next = 0;
    let stored = 0;
    const dbCpuBefore = await databaseCpuTicks(db);
    const started = performance.now();
    const cpuBefore = process.cpuUsage();
    await Promise.all(
      Array.from({ length: connections }, async () => {
        for (let b = next++; b < batches; b = next++) {
          const n = await batch(all[b]!, b);
          stored += n;
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const cpu = process.cpuUsage(cpuBefore);
    const dbCpu = await databaseCpuSince(db, dbCpuBefore);
    const perS = Math.round(stored / seconds);
    console.log(
      `sql-only ${label}, ${connections} connection${connections === 1 ? '' : 's'}: ${stored} events in ${seconds.toFixed(2)} s = ${perS} events/s; ` +
        `${((seconds * 1e6) / stored).toFixed(2)} µs wall, ${((cpu.user + cpu.system) / stored).toFixed(2)} µs this process's CPU, ` +
        `${((dbCpu * 1e6) / stored).toFixed(2)} µs PostgreSQL's CPU an event`,
    );
    if (stored !== batches * PER_REQUEST) throw new Error(`sql-only ${label}: ${stored} of ${batches * PER_REQUEST} events stored`);
    return perS;
  };
  const figures: Record<string, number> = {};
  for (const connections of SQL_CONNECTIONS) {
    figures[`insert_${connections}`] = await run('insert (rows resolved)', connections, (events) =>
      db.transaction().execute((tx) => {
        const rows: EventInsert[] = events.map((e) => ({
          transaction_id: e.transaction_id,
          customer_id: e.customer_id,
          metric_id: metric!.id,
          ts: e.timestamp,
          at: Date.parse(e.timestamp),
          value: e.properties.gb,
          value_key: null,
          properties: e.properties,
        }));
        return insertEvents(tx, tenantId, rows, now);
      }),
    );
    figures[`batch_${connections}`] = await run('batch (every statement of the flow)', connections, (events) =>
      db.transaction().execute(async (tx) => (await recordUsageEvents({ tx, tenantId, now }, events)).accepted),
    );
    figures[`set_based_${connections}`] = await run('set-based (generated in SQL)', connections, (_events, b) =>
      db.transaction().execute(async (tx) => {
        const from = b * PER_REQUEST;
        const prefix = `g${round}_`;
        await sql`
          INSERT INTO usage_event_keys (tenant_id, transaction_id, ts)
          SELECT ${tenantId}::uuid, ${prefix} || i, ${START}::timestamptz + ((i::bigint * 7919) % ${PERIOD_MS}::bigint) * interval '1 millisecond'
            FROM generate_series(${from}::int, ${from + PER_REQUEST - 1}::int) AS i`.execute(tx);
        const r = await sql`
          INSERT INTO usage_events (tenant_id, transaction_id, customer_id, metric_id, ts, value, properties, created_at)
          SELECT ${tenantId}::uuid, ${prefix} || i, (${customerIds}::uuid[])[1 + i % ${customerIds.length}], ${metric!.id}::uuid,
                 ${START}::timestamptz + ((i::bigint * 7919) % ${PERIOD_MS}::bigint) * interval '1 millisecond', (i % 5) + 1,
                 jsonb_build_object('gb', (i % 5) + 1), ${now}::timestamptz
            FROM generate_series(${from}::int, ${from + PER_REQUEST - 1}::int) AS i`.execute(tx);
        return Number(r.numAffectedRows ?? 0);
      }),
    );
  }
  // Each lookup of the flow alone, from the first connection count, to see which one costs.
  const distinctCustomers = (events: ReturnType<typeof plainEvent>[]) => [...new Set(events.map((e) => e.customer_id))];
  const lookups: [
    string,
    (tx: Parameters<Parameters<ReturnType<Kysely<DB>['transaction']>['execute']>[0]>[0], events: ReturnType<typeof plainEvent>[]) => Promise<unknown>,
  ][] = [
    ['customer check (customerRefs)', (tx, events) => customerRefs(tx, tenantId, distinctCustomers(events), [])],
    [
      'late check (meteredPeriodCutoffs)',
      (tx, events) =>
        meteredPeriodCutoffs(
          tx,
          tenantId,
          distinctCustomers(events).map((c) => ({ customerId: c, metricCode: 'gb', oldest: START })),
        ),
    ],
  ];
  for (const [label, lookup] of lookups)
    await run(label, SQL_CONNECTIONS[0]!, (events) =>
      db.transaction().execute(async (tx) => {
        await lookup(tx, events);
        return events.length;
      }),
    );
  console.log(JSON.stringify({ sql_only_events_per_s: figures, peak_rss_mb: Math.round(process.resourceUsage().maxRSS / 1024) }));
}

await main();
