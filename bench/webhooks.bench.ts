/**
 * npm run bench:webhooks — webhook delivery throughput and lag, over real HTTP to E receivers on
 * 127.0.0.1 (in a child process, each verifying every request with the `standardwebhooks`
 * library). PostgreSQL when DATABASE_URL is set (a fresh database, dropped afterwards), else the
 * embedded database. The worker runs on the real clock, as `kosh worker` does.
 *   1. backlog: N events (plan.created, one object each) emitted with the worker stopped — their
 *      N × E deliveries and jobs commit with them — then the worker delivers them all:
 *      `deliveries`, `seconds`, `deliveries_per_s`.
 *   2. steady: events emitted at half that delivery rate for S seconds while the worker runs:
 *      `p99_delivery_lag_ms` = delivered_at − the event's created_at.
 *   --events 20000    N
 *   --endpoints 5     E, all subscribed to every type
 *   --batch 500       events per emitting transaction in phase 1
 *   --concurrency 200 worker slots per worker process (KOSH_WORKER_CONCURRENCY)
 *   --workers 1       worker processes (PostgreSQL only): the first in this process, the others
 *                     forked, as several `kosh worker` would run
 *   --steady-seconds 10
 *   --poll-ms 500     KOSH_WORKER_POLL_MS: how long an idle worker waits before looking again
 * Last line: {"deliveries", "seconds", "deliveries_per_s", "p99_delivery_lag_ms"}.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { pino } from 'pino';
import { createKosh } from '../src/app.js';
import { loadConfig } from '../src/platform/config.js';
import { emitEvent, emitEvents } from '../src/platform/events/events.js';
import { openTestDatabase } from '../test/support/database.js';
import { startWebhookReceiver, type WebhookReceiver } from '../test/support/webhook-receiver.js';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

type FromReceivers = { urls: string[] } | { ready: true } | { verified: number; failed: number };
type ToReceivers = { secrets: string[] } | { report: true };

/** The child process: E receivers, reporting counts to the parent when asked. */
async function runReceivers(count: number): Promise<void> {
  const receivers: WebhookReceiver[] = [];
  for (let i = 0; i < count; i++) receivers.push(await startWebhookReceiver({ record: false }));
  process.on('message', (message: ToReceivers) => {
    if ('secrets' in message) {
      message.secrets.forEach((s, i) => receivers[i]!.setSecrets([s]));
      process.send!({ ready: true } satisfies FromReceivers);
    }
    if ('report' in message) {
      const verified = receivers.reduce((n, r) => n + r.verifiedCount(), 0);
      const arrived = receivers.reduce((n, r) => n + r.count(), 0);
      process.send!({ verified, failed: arrived - verified } satisfies FromReceivers);
    }
  });
  process.on('disconnect', () => process.exit(0));
  process.send!({ urls: receivers.map((r) => r.url) } satisfies FromReceivers);
}

/** A forked extra worker process: the same app on the same database, only its worker running. */
async function runWorker(databaseUrl: string, concurrency: number, pollMs: number): Promise<void> {
  const kosh = await createKosh({
    config: loadConfig({
      DATABASE_URL: databaseUrl,
      LOG_LEVEL: 'silent',
      KOSH_OUTBOUND_ALLOW_PRIVATE: '1',
      KOSH_WORKER_CONCURRENCY: String(concurrency),
      KOSH_WORKER_POLL_MS: String(pollMs),
    }),
    logger: pino({ level: 'silent' }),
  });
  process.on('message', (message: { start?: true; stop?: true }) => {
    if (message.start) kosh.worker.start();
    if (message.stop) void kosh.close().then(() => process.send!({ stopped: true }));
  });
  process.send!({ ready: true });
}

function ask(child: ChildProcess, message: ToReceivers): Promise<FromReceivers> {
  return new Promise((resolve) => {
    child.once('message', (m: FromReceivers) => resolve(m));
    child.send(message);
  });
}

async function main(): Promise<void> {
  const EVENTS = arg('events', 20_000);
  const ENDPOINTS = arg('endpoints', 5);
  const BATCH = arg('batch', 500);
  const CONCURRENCY = arg('concurrency', 200);
  const WORKERS = arg('workers', 1);
  const POLL_MS = arg('poll-ms', 500);
  const STEADY = arg('steady-seconds', 10);
  const deliveries = EVENTS * ENDPOINTS;

  const child = fork(fileURLToPath(import.meta.url), ['--receivers', String(ENDPOINTS)], { execArgv: process.execArgv });
  const { urls } = (await new Promise<FromReceivers>((resolve) => child.once('message', resolve))) as { urls: string[] };

  const database = await openTestDatabase();
  if (WORKERS > 1 && !database.url) throw new Error('--workers needs PostgreSQL (DATABASE_URL)');
  const extraWorkers = await Promise.all(
    Array.from({ length: WORKERS - 1 }, async () => {
      const worker = fork(fileURLToPath(import.meta.url), ['--worker', database.url!, String(CONCURRENCY), String(POLL_MS)], { execArgv: process.execArgv });
      await new Promise((resolve) => worker.once('message', resolve));
      return worker;
    }),
  );
  const kosh = await createKosh({
    config: loadConfig({
      LOG_LEVEL: 'silent',
      KOSH_OUTBOUND_ALLOW_PRIVATE: '1',
      KOSH_WORKER_CONCURRENCY: String(CONCURRENCY),
      KOSH_WORKER_POLL_MS: String(POLL_MS),
    }),
    database,
    logger: pino({ level: 'silent' }),
  });
  const api = async (method: 'POST', url: string, body: unknown, key?: string) => {
    const res = await kosh.app.inject({ method, url, payload: body as object, headers: key ? { authorization: `Bearer ${key}` } : {} });
    if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
    return res.json().data;
  };
  try {
    const registered = await api('POST', '/auth/register', { name: 'Bench', email: 'bench@kosh.test' });
    const tenantId: string = registered.tenant.id;
    const key: string = registered.api_key.key;
    const secrets: string[] = [];
    for (const url of urls) secrets.push((await api('POST', '/v1/webhooks', { url }, key)).secret);
    await ask(child, { secrets });

    const db = kosh.deps.db;
    /** Phase 1 emits with emitEvents (one INSERT per batch), as the billing run does: it is only the set-up. */
    const emitBacklog = async (count: number, perTransaction: number) => {
      for (let done = 0; done < count; done += perTransaction) {
        const n = Math.min(perTransaction, count - done);
        await db.transaction().execute((tx) =>
          emitEvents(
            { tx, tenantId, now: new Date() },
            Array.from({ length: n }, (_, i) => ({
              type: 'plan.created',
              object: { id: randomUUID(), code: `bench-${done + i}`, name: 'Bench plan', amount: 49_900, currency: 'INR' },
            })),
          ),
        );
      }
    };
    /** Phase 2 emits one event per emitEvent call, as API actions do. */
    const emit = async (count: number, perTransaction: number) => {
      for (let done = 0; done < count;) {
        const n = Math.min(perTransaction, count - done);
        await db.transaction().execute(async (tx) => {
          const ctx = { tx, tenantId, now: new Date() };
          for (let i = 0; i < n; i++) {
            await emitEvent(ctx, 'plan.created', { id: randomUUID(), code: `bench-${done + i}`, name: 'Bench plan', amount: 49_900, currency: 'INR' });
          }
        });
        done += n;
      }
    };
    const deliveredCount = async () =>
      Number(
        (
          await db
            .selectFrom('webhook_deliveries')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('delivered_at', 'is not', null)
            .executeTakeFirstOrThrow()
        ).n,
      );
    const waitForDeliveries = async (total: number, label: string, since: number) => {
      let lastPrint = performance.now();
      for (;;) {
        const { verified, failed } = (await ask(child, { report: true })) as { verified: number; failed: number };
        if (failed > 0) throw new Error(`${failed} requests failed verification at the receivers`);
        if (verified >= total && (await deliveredCount()) >= total) return;
        if (performance.now() - lastPrint > 5000) {
          lastPrint = performance.now();
          console.log(`  ${label}: ${verified} delivered (${Math.round(verified / ((lastPrint - since) / 1000))}/s so far)`);
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    };

    // Phase 1 — backlog: EVENTS events emitted with the worker stopped, then delivered.
    console.log(
      `${database.kind}: ${EVENTS} events × ${ENDPOINTS} endpoints = ${deliveries} deliveries, ${WORKERS} worker process(es) × ${CONCURRENCY} slots, poll ${POLL_MS} ms`,
    );
    let t0 = performance.now();
    await emitBacklog(EVENTS, BATCH);
    const emitSeconds = (performance.now() - t0) / 1000;
    console.log(
      `emitted ${EVENTS} events (with their ${deliveries} deliveries and jobs) in ${emitSeconds.toFixed(1)} s: ${Math.round(EVENTS / emitSeconds)} events/s`,
    );
    t0 = performance.now();
    kosh.worker.start();
    for (const w of extraWorkers) w.send({ start: true });
    await waitForDeliveries(deliveries, 'backlog', t0);
    const seconds = (performance.now() - t0) / 1000;
    const perSecond = Math.round(deliveries / seconds);
    console.log(`delivered ${deliveries} in ${seconds.toFixed(1)} s: ${perSecond} deliveries/s`);

    // Phase 2 — steady load at half that rate for STEADY seconds: how long an event waits.
    const perTick = Math.max(1, Math.round(perSecond / 2 / ENDPOINTS / 10)); // events per 100 ms
    const steadyEvents = perTick * STEADY * 10;
    const steadyFrom = new Date();
    t0 = performance.now();
    for (let tick = 0; tick < STEADY * 10; tick++) {
      await emit(perTick, perTick);
      const wait = t0 + (tick + 1) * 100 - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    }
    await waitForDeliveries(deliveries + steadyEvents * ENDPOINTS, 'steady', t0);
    await kosh.worker.stop();
    await Promise.all(
      extraWorkers.map(
        (w) =>
          new Promise((resolve) => {
            w.once('message', resolve);
            w.send({ stop: true });
          }),
      ),
    );
    const stats = await sql<{ p50: number; p99: number; max: number; n: number }>`
      SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM delivered_at - created_at)) * 1000 AS p50,
             percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM delivered_at - created_at)) * 1000 AS p99,
             max(extract(epoch FROM delivered_at - created_at)) * 1000 AS max, count(*) AS n
      FROM webhook_deliveries WHERE tenant_id = ${tenantId} AND created_at >= ${steadyFrom}`.execute(db);
    const { p50, p99, max, n } = stats.rows[0]!;
    console.log(
      `steady ${perTick * 10 * ENDPOINTS} deliveries/s offered for ${STEADY} s (${steadyEvents} events, ${Number(n)} deliveries): ` +
        `lag (delivered_at − event created_at) p50 ${Math.round(Number(p50))} ms, p99 ${Math.round(Number(p99))} ms, max ${Math.round(Number(max))} ms`,
    );
    console.log(
      JSON.stringify({
        deliveries,
        seconds: Number(seconds.toFixed(2)),
        deliveries_per_s: perSecond,
        p99_delivery_lag_ms: Math.round(Number(p99)),
      }),
    );
  } finally {
    for (const w of extraWorkers) w.kill();
    await kosh.close();
    await database.close();
    child.disconnect();
  }
}

const receiversArg = process.argv.indexOf('--receivers');
const workerArg = process.argv.indexOf('--worker');
if (receiversArg >= 0) {
  void runReceivers(Number(process.argv[receiversArg + 1]));
} else if (workerArg >= 0) {
  void runWorker(process.argv[workerArg + 1]!, Number(process.argv[workerArg + 2]), Number(process.argv[workerArg + 3]));
} else {
  main().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}
