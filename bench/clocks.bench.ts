/**
 * npm run bench:clocks — a year of billing simulated with test clocks (DESIGN §24, decision 0440).
 *
 * Over the HTTP API (in-process inject), on PostgreSQL when DATABASE_URL is set (a fresh database,
 * dropped afterwards), else the embedded database:
 *   1. One customer on its own clock: a monthly ₹1,000 plan plus ₹0.10 a call (120 calls over the
 *      year, recorded up front), paying with a card that is always declined, so every renewal's
 *      charge fails and the default dunning campaign runs its five steps. The clock advances
 *      twelve months in one call: 12 renewals with their usage, 12 declined charges, 56 dunning
 *      steps (five for each of the first eleven invoices; the twelfth, issued at the year's last
 *      instant, has had its first). The target: at most 2 s.
 *   2. N customers (default 1 000) on one clock, each with a monthly ₹1,000 subscription; the clock
 *      advances a year in one call: 12 × N renewals.
 * Checks the invoice counts, then prints the figures and LAST one JSON line:
 *   {"customers":N,"renewals":…,"seconds":…,"renewals_per_s":…,"ms_per_customer":…,
 *    "one_customer_year_seconds":…,"one_customer_invoices":…,"one_customer_dunning_actions":…,
 *    "one_customer_statements":…,"statements":…} — statements sent on the wire during each advance
 *   --n 1000   customers on the shared clock
 * BENCH_STATEMENTS_TIMING=N prints the one customer's statement time by statement shape (top N);
 * BENCH_SERVER_LOG=1 (PostgreSQL) has the server log every statement of the bench's database with
 * its duration (log_min_duration_statement, set on that database only), the one customer's advance
 * between the statements 'bench-mark-start' and 'bench-mark-end'.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { pino } from 'pino';
import { createKosh } from '../src/app.js';
import { ManualClock } from '../src/platform/clock.js';
import { loadConfig } from '../src/platform/config.js';
import { PipeliningClient } from '../src/platform/db/pipeline.js';
import { gstinCheckCharacter } from '../src/modules/tax/index.js';
import { openTestDatabase } from '../test/support/database.js';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

const N = arg('n', 1_000);
const START = '2026-01-01T00:00:00.000Z';
const YEAR_LATER = '2027-01-01T00:00:00.000Z';
const gstin = (first14: string) => first14 + gstinCheckCharacter(first14);

/**
 * Statements sent on the wire while `work` runs: every statement leaves through
 * pg.Client.prototype.query (the pipelining client's deferred writes included), on PostgreSQL and
 * on the embedded database alike. Counts BEGINs too, so the transactions show.
 * BENCH_STATEMENTS_LOG=file writes the one customer's statements there, one a line.
 */
const seenTexts: string[] = [];
/**
 * BENCH_STATEMENTS_TIMING=1: the one customer's statements timed on the client, per statement
 * shape (literals and parameters folded), each statement charged from when the connection was
 * free for it to its answer — round trip plus execution, not the app's own time.
 */
let timing: Map<string, { count: number; ms: number }> | undefined;
const connectionFree = new WeakMap<object, number>();
const heldBack = new WeakMap<object, { at: number }[]>();
const deferring = new WeakSet<object>();
const statementShape = (text: string) =>
  text
    .replace(/\s+/g, ' ')
    .replace(/\$\d+(, \$\d+)*/g, '$n')
    .replace(/\(\$n\)(, \(\$n\))+/g, '($n), …')
    .replace(/'[^']*'/g, "'…'")
    .replace(/\b\d+\b/g, 'N')
    .slice(0, 200);
async function countingStatements<T>(work: () => Promise<T>): Promise<{ result: T; statements: number; transactions: number }> {
  const original = pg.Client.prototype.query;
  let statements = 0;
  let transactions = 0;
  const outer = PipeliningClient.prototype.query;
  if (timing) {
    PipeliningClient.prototype.query = function (this: PipeliningClient, ...args: unknown[]) {
      const [text, values] = args;
      const last: unknown = Array.isArray(values) ? values[values.length - 1] : undefined;
      if ((typeof text === 'string' && /^\s*begin\b/i.test(text)) || (last as object | undefined)?.constructor?.name === 'DeferredWrite') deferring.add(this);
      return outer.apply(this, args);
    } as typeof outer;
  }
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const text = typeof args[0] === 'string' ? args[0] : String((args[0] as { text?: string } | undefined)?.text ?? '');
    // The change feed's heartbeat runs on its own timer, not for the advance: left out.
    if (/^SELECT pg_notify\(/.test(text)) return (original as (...a: unknown[]) => unknown).apply(this, args);
    statements += 1;
    if (process.env.BENCH_STATEMENTS_LOG) seenTexts.push(text.replace(/\s+/g, ' ').slice(0, 160));
    if (/^\s*begin/i.test(text)) transactions += 1;
    const answer = (original as (...a: unknown[]) => unknown).apply(this, args);
    const shapes = timing;
    if (shapes && answer && typeof (answer as Promise<unknown>).then === 'function') {
      // A deferred write (and BEGIN) waits in the socket buffer until the connection's next awaited
      // statement: it leaves, and its time starts, with that one.
      const held = heldBack.get(this) ?? [];
      const sent: { at: number } = { at: Number.POSITIVE_INFINITY };
      if (deferring.has(this)) {
        deferring.delete(this);
        held.push(sent);
        heldBack.set(this, held);
      } else {
        sent.at = performance.now();
        for (const h of held) h.at = sent.at;
        heldBack.set(this, []);
      }
      const done = () => {
        // Answers come back in order on a connection: a statement's own time starts when the one
        // before it on the same connection answered (or when it was sent, if later).
        const now = performance.now();
        const own = now - Math.max(Math.min(sent.at, now), connectionFree.get(this) ?? 0);
        connectionFree.set(this, now);
        const shape = statementShape(text);
        const entry = shapes.get(shape) ?? { count: 0, ms: 0 };
        entry.count += 1;
        entry.ms += own;
        shapes.set(shape, entry);
      };
      (answer as Promise<unknown>).then(done, done);
    }
    return answer;
  } as typeof original;
  try {
    return { result: await work(), statements, transactions };
  } finally {
    pg.Client.prototype.query = original;
    PipeliningClient.prototype.query = outer;
  }
}

type Answer = { status: number; body: { data: Record<string, unknown> & { id: string } } & Record<string, unknown>; text: string };

async function main() {
  const database = await openTestDatabase();
  if (process.env.BENCH_SERVER_LOG && database.kind === 'postgres') {
    const held = await Promise.all(Array.from({ length: 10 }, () => database.pool.connect()));
    await Promise.all(held.map((c) => c.query('SET log_min_duration_statement = 0')));
    await held[0]!.query(`ALTER DATABASE ${new URL(database.url!).pathname.slice(1)} SET log_min_duration_statement = 0`);
    held.forEach((c) => c.release());
    console.log('SERVERLOG', database.url);
  }
  // The real time is past the simulated year: usage dated in 2026 is not in the future.
  const clock = new ManualClock('2027-06-01T00:00:00Z');
  const kosh = await createKosh({
    config: loadConfig({ LOG_LEVEL: 'silent', KOSH_MODE: 'test', KOSH_SECRET_KEY: randomBytes(32).toString('base64'), KOSH_DB_POOL_SIZE: '4' }),
    database,
    clock,
    logger: pino({ level: 'silent' }),
  });
  let key = '';
  const api = async (method: string, url: string, body?: unknown): Promise<Answer> => {
    const res = await kosh.app.inject({
      method: method as 'GET',
      url,
      headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
    return { status: res.statusCode, body: (res.body ? res.json() : { data: {} }) as Answer['body'], text: res.body };
  };
  const ok = async (method: string, url: string, body?: unknown, status = 201) => {
    const res = await api(method, url, body);
    if (res.status !== status) throw new Error(`${method} ${url}: ${res.status} ${res.text}`);
    return res.body.data;
  };
  try {
    const registered = await api('POST', '/auth/register', { name: 'Clock bench', email: 'owner@clocks.bench', gstin: gstin('29AAACA1234A1Z') });
    key = (registered.body.data.api_key as { key: string }).key;
    const customerGstin = gstin('29BBBBB2222B1Z');

    // 1. One customer, a year: renewals with usage, every charge declined, dunning at each.
    const metric = await ok('POST', '/v1/billable-metrics', { name: 'Calls', code: 'calls', aggregation: 'count' });
    const meteredPlan = await ok('POST', '/v1/plans', {
      name: 'Metered',
      code: 'metered',
      interval: 'month',
      hsn_code: '998314',
      prices: [
        { currency: 'INR', amount: 100_000 },
        { currency: 'INR', billing_scheme: 'metered', metric_code: metric.code, amount: 10 },
      ],
    });
    const soloClock = await ok('POST', '/v1/test-clocks', { frozen_time: START, name: 'one customer' });
    const solo = await ok('POST', '/v1/customers', { email: 'solo@clocks.bench', gstin: customerGstin, test_clock_id: soloClock.id });
    await ok('POST', `/v1/customers/${solo.id}/payment-methods`, { token: 'tok_chargeDeclined' });
    const soloSub = await ok('POST', '/v1/subscriptions', { customer_id: solo.id, plan_id: meteredPlan.id, collection_method: 'charge_automatically' });
    const events = [];
    for (let month = 0; month < 12; month += 1) {
      for (let call = 0; call < 10; call += 1) {
        const ts = new Date(Date.UTC(2026, month, 2 + call, 12)).toISOString();
        events.push({ transaction_id: `solo-${month}-${call}`, customer_id: solo.id, metric_code: metric.code, timestamp: ts });
      }
    }
    await ok('POST', '/v1/usage/events/batch', { events }, 202);
    if (process.env.BENCH_STATEMENTS_TIMING) timing = new Map();
    if (process.env.BENCH_SERVER_LOG) await database.pool.query("SELECT 'bench-mark-start'");
    const soloStarted = performance.now();
    const soloWire = await countingStatements(() => ok('POST', `/v1/test-clocks/${soloClock.id}/advance`, { to: YEAR_LATER }, 200));
    const soloSeconds = (performance.now() - soloStarted) / 1000;
    if (process.env.BENCH_SERVER_LOG) await database.pool.query("SELECT 'bench-mark-end'");
    if (timing) {
      const shapes = [...timing.entries()].sort((a, b) => b[1].ms - a[1].ms);
      const total = shapes.reduce((sum, [, e]) => sum + e.ms, 0);
      console.log(`statement time (one customer-year): ${total.toFixed(0)} ms of ${(soloSeconds * 1000).toFixed(0)} ms, by shape:`);
      for (const [shape, e] of shapes.slice(0, Number(process.env.BENCH_STATEMENTS_TIMING) > 1 ? Number(process.env.BENCH_STATEMENTS_TIMING) : 40)) {
        console.log(`${((100 * e.ms) / total).toFixed(1).padStart(5)} % ${e.ms.toFixed(0).padStart(6)} ms ${String(e.count).padStart(5)}× ${shape}`);
      }
      timing = undefined;
    }
    if (process.env.BENCH_STATEMENTS_LOG) {
      const { writeFileSync } = await import('node:fs');
      writeFileSync(process.env.BENCH_STATEMENTS_LOG, seenTexts.join('\n'));
    }
    const soloInvoices = (await api('GET', `/v1/invoices?subscription_id=${soloSub.id}&limit=100`)).body.data as unknown as {
      id: string;
      billing_reason: string;
    }[];
    let dunningActions = 0;
    for (const invoice of soloInvoices) {
      const runs = (await api('GET', `/v1/dunning-executions?invoice_id=${invoice.id}`)).body.data as unknown as { actions: unknown[] }[];
      dunningActions += runs.reduce((n, r) => n + r.actions.length, 0);
    }
    console.log(
      `one customer, 12 months (usage, declined charges, dunning): ${soloSeconds.toFixed(2)} s; ${soloInvoices.length} invoices, ${dunningActions} dunning actions; ` +
        `${soloWire.statements} statements on the wire (${soloWire.transactions} transactions)`,
    );

    // 2. N customers on one clock, a year.
    const plan = await ok('POST', '/v1/plans', { name: 'Monthly', code: 'monthly', interval_unit: 'month', amount: 100_000, currency: 'INR' });
    const shared = await ok('POST', '/v1/test-clocks', { frozen_time: START, name: `${N} customers` });
    const seedStarted = performance.now();
    const subscriptions: string[] = [];
    for (let i = 0; i < N; i += 1) {
      const customer = await ok('POST', '/v1/customers', { email: `c${i}@clocks.bench`, gstin: customerGstin, test_clock_id: shared.id });
      subscriptions.push((await ok('POST', '/v1/subscriptions', { customer_id: customer.id, plan_id: plan.id })).id);
    }
    console.log(`seeded ${N} customers and subscriptions on one clock over HTTP in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s`);
    const started = performance.now();
    const sharedWire = await countingStatements(() => ok('POST', `/v1/test-clocks/${shared.id}/advance`, { to: YEAR_LATER }, 200));
    const advanced = sharedWire.result;
    const seconds = (performance.now() - started) / 1000;
    const sample = (await api('GET', `/v1/invoices?subscription_id=${subscriptions[N - 1]}&limit=100`)).body.data as unknown as unknown[];
    const renewals = N * 12;
    const checks = advanced.status === 'ready' && sample.length === 13 && soloInvoices.length === 13 && dunningActions === 56;
    console.log(
      `${N} customers, a year: ${renewals} renewals in ${seconds.toFixed(2)} s: ${(renewals / seconds).toFixed(0)} renewals/s, ` +
        `${((seconds * 1000) / N).toFixed(1)} ms per customer-year — ${checks ? 'checks passed' : 'CHECKS FAILED'} (last customer: ${sample.length} invoices); ` +
        `${sharedWire.statements} statements on the wire (${sharedWire.transactions} transactions)`,
    );
    console.log(
      JSON.stringify({
        customers: N,
        renewals,
        seconds: Number(seconds.toFixed(2)),
        renewals_per_s: Math.round(renewals / seconds),
        ms_per_customer: Number(((seconds * 1000) / N).toFixed(1)),
        one_customer_year_seconds: Number(soloSeconds.toFixed(2)),
        one_customer_invoices: soloInvoices.length,
        one_customer_dunning_actions: dunningActions,
        one_customer_statements: soloWire.statements,
        statements: sharedWire.statements,
        storage: database.kind,
      }),
    );
    if (!checks) process.exitCode = 1;
  } finally {
    await kosh.close();
    await database.close();
  }
}

await main();
