/**
 * npm run test:ha — a failover drill on loopback with Debian's packages (docs/operations.md,
 * "High availability"; decision 0323).
 *
 * Starts a 3-member etcd, a Patroni cluster of a primary and a synchronous standby (PostgreSQL 15
 * from /usr/lib/postgresql/15), HAProxy routing port 5440 to the leader by Patroni's REST check
 * (`GET /primary`), and Kosh through HAProxy: two API processes and one worker. Writers create
 * customers, invoices and offline payments through both API processes, each request with an
 * Idempotency-Key and retried with the same key until it is acknowledged (what a client does).
 * Then the primary is killed (its Patroni and PostgreSQL, SIGKILL: a machine lost). The drill
 * goes on until writes have succeeded again for a while, then checks through the new leader:
 *
 * - rto_ms: from the first failing write after the kill to the first write acknowledged after it;
 * - acknowledged: records the API acknowledged (2xx); lost: acknowledged but not in the database;
 * - doubled: records stored more than once for one idempotency key (customers by e-mail, payments
 *   by reference number) — retries must replay, never repeat;
 * - the ledger balances (every journal entry's debits equal its credits);
 * - Kosh processes still alive (they reconnect by themselves; nothing restarts them).
 *
 * Billing during the failover: subscription writers create customers with a saved test-gateway
 * card (`tok_visa`) and `charge_automatically` daily subscriptions backdated 2–4 days, so every
 * minute's billing run (the worker's `subscriptions.billing_run`) has periods to catch up and
 * charges to queue. The kill is timed a few seconds after a minute boundary, while that run
 * renews. Kosh sends e-mail to a local SMTP server (test/support/mail-sink.ts), webhooks to a
 * local receiver (test/support/webhook-receiver.ts; the once-per-object events of WEBHOOK_EVENTS), and the test gateway keeps its
 * journal in a file. After the load the drill waits until everything has settled (no period due,
 * no open automatic invoice, no pending attempt, no queued charge, notice or delivery), then counts:
 *
 * - renewals (subscription_cycle invoices), missed_renewals (periods elapsed without one),
 *   doubled_renewals (a subscription period invoiced twice);
 * - charges (gateway journal), doubled_charges (a key in the journal twice, or an invoice charged
 *   under two keys), unrecorded_charges (money taken with no succeeded attempt), unpaid_automatic;
 * - emails (payment receipts, distinct Message-IDs), email_redeliveries (the same Message-ID again:
 *   the documented at-least-once window between the server's 250 and Kosh recording it),
 *   doubled_emails (two Message-IDs receipting one invoice to one customer), unreceipted_payments;
 * - webhooks (distinct event ids), webhook_redeliveries (same webhook-id again, allowed by the
 *   at-least-once contract), doubled_webhooks (two event ids for one business fact: the same type
 *   and object, or for subscription.renewed the same subscription period), undelivered_webhooks
 *   (events stored but never received);
 * - reconciliation_discrepancies from POST /v1/finance/reconciliation/runs after recovery.
 *
 * Last line: {"rto_ms":…,"acknowledged":…,"lost":…,"doubled":…,"ledger_balanced":…,"kosh_alive":…,
 *   "subscriptions":…,"renewals":…,…,"reconciliation_discrepancies":…}
 * Exit code 0 when nothing is lost or doubled (redeliveries with the same id are allowed), the
 * ledger balances, reconciliation finds nothing and rto_ms ≤ 30 000.
 * Runs as root (PostgreSQL and Patroni run as the `postgres` user) or as `postgres`.
 *   --seconds-before 30   least load before the kill (then on to a minute boundary + --kill-offset)
 *   --kill-offset 3       seconds after the minute boundary (the billing run's slot) to kill
 *   --seconds-after 15    load after the first write acknowledged after the kill
 *   --writers 6
 *   --subscription-writers 3
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { startMailSink, type MailSink } from '../test/support/mail-sink.js';
import { startWebhookReceiver, type WebhookReceiver } from '../test/support/webhook-receiver.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
};
const SECONDS_BEFORE = arg('seconds-before', 30);
const SECONDS_AFTER = arg('seconds-after', 15);
const WRITERS = arg('writers', 6);
const SUBSCRIPTION_WRITERS = arg('subscription-writers', 3);
const KILL_OFFSET = arg('kill-offset', 3);
const DAY_MS = 86_400_000;
const PG_BIN = '/usr/lib/postgresql/15/bin';
const HAPROXY_PORT = 5440;
const NODES = [
  { name: 'pg1', port: 5441, rest: 8041 },
  { name: 'pg2', port: 5442, rest: 8042 },
];
const ETCD = [1, 2, 3].map((i) => ({ name: `etcd${i}`, client: 2390 + i, peer: 2480 + i }));

const log = (message: string) => process.stderr.write(`[test:ha +${((performance.now() - t0) / 1000).toFixed(1)}s] ${message}\n`);
const t0 = performance.now();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const children: { name: string; child: ChildProcess }[] = [];
const dir = mkdtempSync(join(tmpdir(), 'kosh-ha-'));
const asRoot = process.getuid?.() === 0;
const pgUid = asRoot ? Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout.trim()) : undefined;
const pgGid = asRoot ? Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout.trim()) : undefined;

function start(
  name: string,
  command: string,
  args: string[],
  options: { env?: Record<string, string>; asPostgres?: boolean; cwd?: string } = {},
): ChildProcess {
  const child = spawn(command, args, {
    cwd: options.cwd ?? dir,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(options.asPostgres && asRoot ? { uid: pgUid, gid: pgGid } : {}),
  });
  let tail = '';
  const keep = (chunk: Buffer) => {
    tail = (tail + chunk.toString()).slice(-4000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  child.on('exit', (code, signal) => {
    if (!stopping) log(`${name} exited (${code ?? signal})${code ? `: ${tail.slice(-600)}` : ''}`);
  });
  children.push({ name, child });
  return child;
}

let stopping = false;
let mailSink: MailSink | undefined;
let receiver: WebhookReceiver | undefined;
async function stopAll(): Promise<void> {
  stopping = true;
  for (const { child } of [...children].reverse()) if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  await sleep(1500);
  for (const { child } of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  // Patroni's postmasters are its children; a killed Patroni leaves them to us.
  for (const node of NODES) spawnSync(`${PG_BIN}/pg_ctl`, ['-D', join(dir, node.name), 'stop', '-m', 'immediate'], asRoot ? { uid: pgUid, gid: pgGid } : {});
  await mailSink?.close().catch(() => undefined);
  await receiver?.close().catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 90_000): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch {
      // not yet
    }
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(250);
  }
}

function patroniConfig(node: (typeof NODES)[number]): string {
  const dataDir = join(dir, node.name);
  return `scope: kosh-ha
name: ${node.name}
restapi:
  listen: 127.0.0.1:${node.rest}
  connect_address: 127.0.0.1:${node.rest}
etcd3:
  hosts: ${ETCD.map((e) => `127.0.0.1:${e.client}`).join(',')}
bootstrap:
  dcs:
    ttl: 10
    loop_wait: 1
    retry_timeout: 3
    maximum_lag_on_failover: 1048576
    synchronous_mode: true
    postgresql:
      use_pg_rewind: false
      parameters:
        max_connections: 200
        wal_level: replica
        hot_standby: 'on'
        max_wal_senders: 10
        max_replication_slots: 10
        wal_keep_size: 128MB
  initdb:
    - encoding: UTF8
    - locale: C.UTF-8
  pg_hba:
    - local all all trust
    - host all all 127.0.0.1/32 trust
    - host replication all 127.0.0.1/32 trust
postgresql:
  listen: 127.0.0.1:${node.port}
  connect_address: 127.0.0.1:${node.port}
  data_dir: ${dataDir}
  bin_dir: ${PG_BIN}
  pgpass: ${join(dir, `${node.name}.pgpass`)}
  authentication:
    superuser:
      username: postgres
      password: postgres
    replication:
      username: replicator
      password: replicator
  parameters:
    unix_socket_directories: '${dir}'
    fsync: 'off'
`;
}

function haproxyConfig(): string {
  return `global
    maxconn 1000
defaults
    mode tcp
    timeout connect 2s
    timeout client 30m
    timeout server 30m
    timeout check 2s
listen postgres_primary
    bind 127.0.0.1:${HAPROXY_PORT}
    option httpchk GET /primary
    http-check expect status 200
    default-server inter 500ms fall 2 rise 2 on-marked-down shutdown-sessions
${NODES.map((n) => `    server ${n.name} 127.0.0.1:${n.port} check port ${n.rest}`).join('\n')}
`;
}

async function leader(): Promise<string | undefined> {
  for (const node of NODES) {
    const res = await fetch(`http://127.0.0.1:${node.rest}/primary`, { signal: AbortSignal.timeout(2000) }).catch(() => null);
    if (res?.status === 200) return node.name;
  }
  return undefined;
}

async function syncStandby(): Promise<boolean> {
  const res = await fetch(`http://127.0.0.1:${NODES[0]!.rest}/cluster`, { signal: AbortSignal.timeout(2000) }).catch(() => null);
  if (!res?.ok) return false;
  const cluster = (await res.json()) as { members: { role: string; state: string }[] };
  return cluster.members.some((m) => m.role === 'sync_standby' && (m.state === 'running' || m.state === 'streaming'));
}

function startKosh(name: string, command: 'serve' | 'worker', env: Record<string, string>): Promise<{ child: ChildProcess; base: string }> {
  return new Promise((resolve, reject) => {
    let output = '';
    const child = start(name, process.execPath, ['--import', 'tsx', 'src/cli/main.ts', command], { cwd: ROOT, env });
    const onData = (chunk: Buffer) => {
      output += chunk;
      const listening = /"address":"(http:\/\/[^"]+)"/.exec(output);
      if (command === 'serve' && listening) resolve({ child, base: listening[1]!.replace('localhost', '127.0.0.1') });
      if (command === 'worker' && /worker running/.test(output)) resolve({ child, base: '' });
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code) => reject(new Error(`${name} exited (${code}) before it was ready: ${output.slice(-1500)}`)));
  });
}

type Outcome = { ok: boolean; at: number };
const outcomes: Outcome[] = [];

/** One request, retried with the same Idempotency-Key until it is acknowledged (or the drill ends). */
async function acknowledged(base: string, key: string, path: string, body: unknown, deadline: () => boolean): Promise<{ id: string } | null> {
  const idempotencyKey = randomUUID();
  while (!deadline()) {
    try {
      const res = await fetch(`${base}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': idempotencyKey },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(20_000),
      });
      const json = (await res.json()) as { data?: { id: string } };
      outcomes.push({ ok: res.ok, at: performance.now() });
      if (res.ok) return json.data!;
    } catch {
      outcomes.push({ ok: false, at: performance.now() });
    }
    await sleep(200);
  }
  return null;
}

async function api(base: string, key: string, method: string, path: string, body?: unknown): Promise<{ status: number; data: Record<string, unknown> }> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  const json = (await res.json()) as { data?: Record<string, unknown> };
  if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${JSON.stringify(json)}`);
  return { status: res.status, data: json.data! };
}

/** A daily plan, payment receipts by e-mail, and a webhook endpoint (WEBHOOK_EVENTS) pointing at the local receiver. */
async function billingSetup(base: string, key: string): Promise<{ planId: string; webhookSince: Date }> {
  const plan = await api(base, key, 'POST', '/v1/plans', { name: 'Daily', code: 'daily', interval_unit: 'day', amount: 50_000, currency: 'INR' });
  // A receipt for every payment: a charge taken twice would be receipted twice.
  await api(base, key, 'PATCH', '/v1/notification-settings', { payment_receipt: true });
  const endpoint = await api(base, key, 'POST', '/v1/webhooks', { url: receiver!.url, events: WEBHOOK_EVENTS });
  receiver!.setSecrets([endpoint.data.secret as string]);
  return { planId: plan.data.id as string, webhookSince: new Date(endpoint.data.created_at as string) };
}

/**
 * Customer → saved test card → a charge_automatically daily subscription started 2–4 days ago:
 * the first period is invoiced and charged at once, the elapsed ones by the next billing run.
 */
async function subscriptionWriter(
  apis: string[],
  key: string,
  planId: string,
  w: number,
  subscribed: Map<string, { start: number }>,
  over: () => boolean,
): Promise<void> {
  for (let i = 0; !over(); i++) {
    const base = apis[(w + i) % apis.length]!;
    const email = `s${w}-${i}@ha-drill.test`;
    const customer = await acknowledged(base, key, '/v1/customers', { email, name: email }, over);
    if (!customer) return;
    const card = await acknowledged(base, key, `/v1/customers/${customer.id}/payment-methods`, { token: 'tok_visa' }, over);
    if (!card) return;
    const start = Date.now() - (2 + (i % 3)) * DAY_MS;
    const body = { customer_id: customer.id, plan_id: planId, collection_method: 'charge_automatically', start_at: new Date(start).toISOString() };
    const subscription = await acknowledged(base, key, '/v1/subscriptions', body, over);
    if (!subscription) return;
    subscribed.set(subscription.id, { start });
  }
}

const SETTLING_KINDS = ['subscriptions.billing_run', 'collections.charge_invoices', 'notifications.send', 'mail.send', 'webhooks.deliver'];

/** Waits until no period is due, no automatic invoice is open, no attempt is pending and no charge, notice or delivery is queued. */
async function settle(databaseUrl: string, timeoutMs = 600_000): Promise<boolean> {
  const c = new pg.Client({ connectionString: databaseUrl });
  await c.connect();
  try {
    const deadline = performance.now() + timeoutMs;
    let last = '';
    while (performance.now() < deadline) {
      const { rows } = await c.query<{ due: number; open: number; pending: number; queued: number }>(
        `SELECT (SELECT count(*)::int FROM subscriptions WHERE status IN ('active', 'past_due') AND current_period_end <= now()) AS due,
                (SELECT count(*)::int FROM invoices WHERE collection_method = 'charge_automatically' AND status = 'open' AND amount_due > 0) AS open,
                (SELECT count(*)::int FROM payment_attempts WHERE status = 'pending') AS pending,
                (SELECT count(*)::int FROM jobs WHERE state IN ('pending', 'running') AND kind = ANY($1)) AS queued`,
        [SETTLING_KINDS],
      );
      const r = rows[0]!;
      last = JSON.stringify(r);
      if (r.due + r.open + r.pending + r.queued === 0) return true;
      await sleep(2000);
    }
    log(`not settled after ${timeoutMs / 1000} s: ${last}`);
    return false;
  } finally {
    await c.end();
  }
}

type JournalLine = { kind: string; key: string; outcome: { status: string } };

/** Renewals per subscription period, and the gateway journal against the attempts and invoices. */
async function billingChecks(databaseUrl: string, journalFile: string, subscribed: Map<string, { start: number }>) {
  const c = new pg.Client({ connectionString: databaseUrl });
  await c.connect();
  const now = Date.now();
  const invoices = (
    await c.query<{ id: string; subscription_id: string; period_start: Date; billing_reason: string; status: string }>(
      'SELECT id, subscription_id, period_start, billing_reason, status FROM invoices WHERE subscription_id IS NOT NULL',
    )
  ).rows;
  const attempts = (await c.query<{ id: string; invoice_id: string; status: string }>('SELECT id, invoice_id, status FROM payment_attempts')).rows;
  const subscriptions = new Set((await c.query<{ id: string }>('SELECT id FROM subscriptions')).rows.map((r) => r.id));
  const unpaidAutomatic = (
    await c.query<{ n: number }>("SELECT count(*)::int AS n FROM invoices WHERE collection_method = 'charge_automatically' AND status <> 'paid'")
  ).rows[0]!.n;
  // Money jobs the failover cut and the queue ran again (a billing run or charge that had to retry).
  const retriedMoneyJobs = (
    await c.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM jobs WHERE kind IN ('subscriptions.billing_run', 'collections.charge_invoices', 'collections.resolve_attempts') AND attempts > 1",
    )
  ).rows[0]!.n;
  await c.end();

  const periods = new Map<string, number>();
  const cycles = new Map<string, number>();
  for (const inv of invoices) {
    const k = `${inv.subscription_id}@${new Date(inv.period_start).toISOString()}`;
    periods.set(k, (periods.get(k) ?? 0) + 1);
    if (inv.billing_reason === 'subscription_cycle') cycles.set(inv.subscription_id, (cycles.get(inv.subscription_id) ?? 0) + 1);
  }
  let missed = 0;
  for (const [id, { start }] of subscribed) missed += Math.max(0, Math.floor((now - start) / DAY_MS) - (cycles.get(id) ?? 0));

  const journal: JournalLine[] = existsSync(journalFile)
    ? readFileSync(journalFile, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as JournalLine)
        .filter((e) => e.kind === 'charge')
    : [];
  const keys = new Map<string, number>();
  for (const e of journal) keys.set(e.key, (keys.get(e.key) ?? 0) + 1);
  const attemptById = new Map(attempts.map((a) => [a.id, a]));
  const chargedInvoices = new Map<string, number>();
  let unrecorded = 0;
  for (const e of journal.filter((j) => j.outcome.status === 'succeeded')) {
    const attempt = attemptById.get(e.key.replace(/^kosh_att_/, ''));
    if (!attempt || attempt.status !== 'succeeded') unrecorded += 1;
    if (attempt) chargedInvoices.set(attempt.invoice_id, (chargedInvoices.get(attempt.invoice_id) ?? 0) + 1);
  }
  return {
    subscriptions: subscribed.size,
    retried_money_jobs: retriedMoneyJobs,
    lost_subscriptions: [...subscribed.keys()].filter((id) => !subscriptions.has(id)).length,
    renewals: [...cycles.values()].reduce((a, b) => a + b, 0),
    missed_renewals: missed,
    doubled_renewals: [...periods.values()].filter((n) => n > 1).length,
    charges: journal.length,
    doubled_charges: [...keys.values()].filter((n) => n > 1).length + [...chargedInvoices.values()].filter((n) => n > 1).length,
    unrecorded_charges: unrecorded,
    unpaid_automatic: unpaidAutomatic,
  };
}

/**
 * The events the drill's endpoint subscribes to: facts that happen once per object (per period
 * for subscription.renewed), so two event ids for one of them is a doubled business delivery.
 */
const WEBHOOK_EVENTS = ['invoice.paid', 'payment.recorded', 'subscription.created', 'subscription.renewed'];

function businessKey(event: { type: string; data: { object: Record<string, unknown> } }): string {
  const o = event.data.object;
  return event.type === 'subscription.renewed' ? `${event.type}:${String(o.id)}:${String(o.current_period_start)}` : `${event.type}:${String(o.id)}`;
}

/** E-mails by Message-ID and by content; webhooks by event id and by business fact; events never delivered. */
async function deliveryChecks(databaseUrl: string, since: Date) {
  const byMessageId = new Map<string, number>();
  const byContent = new Map<string, Set<string>>();
  const receipted = new Set<string>();
  for (const m of mailSink!.messages) {
    const id = m.headers['message-id'] ?? '';
    byMessageId.set(id, (byMessageId.get(id) ?? 0) + 1);
    // A receipt names its invoice: two receipts for one invoice are one payment told twice, or two payments.
    const text = m.text ?? m.html ?? '';
    const invoice = /for invoice (\S+)\./.exec(text)?.[1];
    const content = `${m.envelope.to.join(',')}|${m.subject}|${invoice ?? text}`;
    for (const id of text.match(/Receipt: ([0-9a-f-]{36})/g) ?? []) receipted.add(id.slice('Receipt: '.length));
    byContent.set(content, (byContent.get(content) ?? new Set()).add(id));
  }
  const byEventId = new Map<string, number>();
  const byFact = new Map<string, Set<string>>();
  for (const r of receiver!.received.filter((x) => x.verified && x.event)) {
    byEventId.set(r.event!.id, (byEventId.get(r.event!.id) ?? 0) + 1);
    const fact = businessKey(r.event!);
    byFact.set(fact, (byFact.get(fact) ?? new Set()).add(r.event!.id));
  }
  const c = new pg.Client({ connectionString: databaseUrl });
  await c.connect();
  const events = (await c.query<{ id: string }>('SELECT id FROM events WHERE created_at > $1 AND type = ANY($2)', [since, WEBHOOK_EVENTS])).rows;
  const payments = (await c.query<{ id: string }>('SELECT id FROM payments WHERE created_at > $1', [since])).rows;
  const missing = events.filter((e) => !byEventId.has(e.id)).map((e) => e.id);
  if (missing.length) {
    const { rows } = await c.query(
      `SELECT e.type, e.object_id, e.created_at, d.id AS delivery, d.attempts, d.next_retry_at, d.delivered_at, d.successor_waiting, d.last_error,
              j.state AS job_state, j.attempts AS job_attempts, j.last_error AS job_error
         FROM events e LEFT JOIN webhook_deliveries d ON d.event_id = e.id LEFT JOIN jobs j ON j.unique_key = 'webhooks.deliver:' || d.id
        WHERE e.id = ANY($1) ORDER BY e.created_at LIMIT 8`,
      [missing],
    );
    log(`events never received (first ${rows.length} of ${missing.length}): ${JSON.stringify(rows)}`);
  }
  await c.end();
  const sum = (values: Iterable<number>) => [...values].reduce((a, b) => a + b, 0);
  return {
    emails: byMessageId.size,
    email_redeliveries: sum([...byMessageId.values()].map((n) => n - 1)),
    doubled_emails: sum([...byContent.values()].map((ids) => ids.size - 1)),
    unreceipted_payments: payments.filter((p) => !receipted.has(p.id)).length,
    webhooks: byEventId.size,
    webhook_redeliveries: sum([...byEventId.values()].map((n) => n - 1)),
    doubled_webhooks: sum([...byFact.values()].map((ids) => ids.size - 1)),
    undelivered_webhooks: events.filter((e) => !byEventId.has(e.id)).length,
  };
}

/** POST /v1/finance/reconciliation/runs and wait for its verdict. */
async function reconcile(base: string, key: string): Promise<number> {
  const started = await api(base, key, 'POST', '/v1/finance/reconciliation/runs', {});
  const run = await until(
    'the reconciliation run',
    async () => {
      const r = await api(base, key, 'GET', `/v1/finance/reconciliation/runs/${String(started.data.id)}`);
      return r.data.status === 'running' ? undefined : r.data;
    },
    180_000,
  );
  if (run.status !== 'completed') log(`reconciliation ${String(run.status)}: ${String(run.failure)}`);
  const discrepancies = (run.discrepancies as { kind?: string; type?: string }[] | undefined) ?? [];
  if (discrepancies.length) log(`reconciliation found: ${JSON.stringify(discrepancies.slice(0, 5))}`);
  return run.status === 'completed' ? (run.total_discrepancies as number) : -1;
}

async function main(): Promise<void> {
  if (asRoot) chownSync(dir, pgUid!, pgGid!);
  log(`working in ${dir}`);

  // 1. etcd, three members.
  const cluster = ETCD.map((e) => `${e.name}=http://127.0.0.1:${e.peer}`).join(',');
  const token = `kosh-ha-${randomBytes(3).toString('hex')}`;
  for (const e of ETCD) {
    start(e.name, 'etcd', [
      '--name', e.name, '--data-dir', join(dir, e.name),
      '--listen-client-urls', `http://127.0.0.1:${e.client}`, '--advertise-client-urls', `http://127.0.0.1:${e.client}`,
      '--listen-peer-urls', `http://127.0.0.1:${e.peer}`, '--initial-advertise-peer-urls', `http://127.0.0.1:${e.peer}`,
      '--initial-cluster', cluster, '--initial-cluster-state', 'new', '--initial-cluster-token', token,
    ]); // prettier-ignore
  }
  await until('etcd', async () => ((await fetch(`http://127.0.0.1:${ETCD[0]!.client}/health`, { signal: AbortSignal.timeout(2000) })).ok ? true : undefined));
  log('etcd up (3 members)');

  // 2. Patroni: the first node bootstraps, the second joins as the synchronous standby.
  for (const node of NODES) {
    const file = join(dir, `${node.name}.yml`);
    writeFileSync(file, patroniConfig(node));
    if (asRoot) chownSync(file, pgUid!, pgGid!);
    start(`patroni ${node.name}`, 'patroni', [file], { asPostgres: true });
    if (node === NODES[0]) await until('the first leader', leader, 120_000);
  }
  await until('a synchronous standby', async () => ((await syncStandby()) ? true : undefined), 120_000);
  const firstLeader = (await leader())!;
  log(`Patroni up: leader ${firstLeader}, synchronous standby streaming`);

  // 3. HAProxy in front, routing to the leader by Patroni's REST check.
  writeFileSync(join(dir, 'haproxy.cfg'), haproxyConfig());
  start('haproxy', 'haproxy', ['-db', '-f', join(dir, 'haproxy.cfg')]);
  const adminUrl = `postgres://postgres:postgres@127.0.0.1:${HAPROXY_PORT}/postgres`;
  await until('HAProxy to the leader', async () => {
    const c = new pg.Client({ connectionString: adminUrl });
    await c.connect();
    await c.query('CREATE DATABASE kosh').catch(() => undefined);
    await c.end();
    return true;
  });
  const databaseUrl = `postgres://postgres:postgres@127.0.0.1:${HAPROXY_PORT}/kosh`;

  // 4. Where Kosh's e-mail, webhooks and test-gateway charges go: all on loopback, all counted.
  mailSink = await startMailSink();
  receiver = await startWebhookReceiver({ record: true });
  const journalFile = join(dir, 'gateway-journal.jsonl');

  // 5. Kosh: two API processes and one worker, all through HAProxy.
  const env = {
    SMTP_URL: mailSink.url,
    KOSH_TEST_GATEWAY_JOURNAL: journalFile,
    KOSH_OUTBOUND_ALLOW_PRIVATE: '1',
    // The drill's one endpoint may take every slot the tenant has: the backlog drains sooner.
    KOSH_WORKER_ENDPOINT_CONCURRENCY: '20',
    DATABASE_URL: databaseUrl,
    KOSH_MODE: 'test',
    KOSH_SECRET_KEY: randomBytes(32).toString('base64'),
    LOG_LEVEL: 'info',
    HOST: '127.0.0.1',
    PORT: '0',
    KOSH_RATE_LIMIT_KEY_PER_MINUTE: '1000000',
    KOSH_RATE_LIMIT_IP_PER_MINUTE: '1000000',
  };
  const first = await startKosh('kosh api 1', 'serve', { ...env, KOSH_WORKER: 'off' }); // migrates
  const [second] = await Promise.all([startKosh('kosh api 2', 'serve', { ...env, KOSH_WORKER: 'off' }), startKosh('kosh worker', 'worker', env)]);
  const apis = [first.base, second!.base];
  log(`Kosh up: API ${apis.join(', ')} and a worker`);

  const reg = await fetch(`${apis[0]}/auth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'HA Drill', email: 'owner@ha-drill.test' }),
  });
  const key = ((await reg.json()) as { data: { api_key: { key: string } } }).data.api_key.key;
  const setup = await billingSetup(apis[0]!, key);

  // 6. Load: customer → invoice → (every other round) payment, through both API processes;
  // beside it, customers with a saved card on automatically charged daily subscriptions.
  const acked = { customers: new Map<string, string>(), invoices: new Set<string>(), payments: new Map<string, string>() };
  let killedAt = Infinity;
  let recoveredAt = Infinity;
  let stopAt = Infinity;
  const over = () => performance.now() > stopAt;
  const writers = Array.from({ length: WRITERS }, async (_, w) => {
    for (let i = 0; !over(); i++) {
      const base = apis[(w + i) % apis.length]!;
      const email = `w${w}-${i}@ha-drill.test`;
      const customer = await acknowledged(base, key, '/v1/customers', { email, name: email }, over);
      if (!customer) return;
      acked.customers.set(email, customer.id);
      const invoice = await acknowledged(
        base,
        key,
        '/v1/invoices',
        { customer_id: customer.id, currency: 'INR', lines: [{ description: 'Plan', unit_amount: 100_000 }] },
        over,
      );
      if (!invoice) return;
      acked.invoices.add(invoice.id);
      if (i % 2 === 0) {
        const reference = `ref-${w}-${i}`;
        const payment = await acknowledged(base, key, '/v1/payments/offline', { customer_id: customer.id, invoice_id: invoice.id, payment_type: 'bank_transfer', amount: 40_000, reference_number: reference }, over); // prettier-ignore
        if (!payment) return;
        acked.payments.set(reference, payment.id);
      }
    }
  });

  const subscribed = new Map<string, { start: number }>();
  const subscribers = Array.from({ length: SUBSCRIPTION_WRITERS }, (_, w) => subscriptionWriter(apis, key, setup.planId, w, subscribed, over));

  // Kill a few seconds into a minute: the billing run of that minute's slot is renewing then.
  const killTarget = Math.ceil((Date.now() + SECONDS_BEFORE * 1000) / 60_000) * 60_000 + KILL_OFFSET * 1000;
  await sleep(killTarget - Date.now());
  const victim = NODES.find((n) => n.name === firstLeader)!;
  const victimPatroni = children.find((c) => c.name === `patroni ${victim.name}`)!.child;
  const postmasterPid = Number(spawnSync('head', ['-1', join(dir, victim.name, 'postmaster.pid')], { encoding: 'utf8' }).stdout.trim());
  log(`killing the primary ${victim.name} (Patroni pid ${victimPatroni.pid}, postmaster pid ${postmasterPid}) with ${outcomes.length} requests done`);
  killedAt = performance.now();
  victimPatroni.kill('SIGKILL');
  process.kill(postmasterPid, 'SIGKILL');

  // Writes fail, then succeed through the new leader; keep going SECONDS_AFTER beyond that.
  await until(
    'a write acknowledged after the failover',
    async () => {
      const firstFailure = outcomes.find((o) => o.at > killedAt && !o.ok);
      const success = firstFailure && outcomes.find((o) => o.at > firstFailure.at && o.ok);
      return success ? success.at : undefined;
    },
    120_000,
  ).then((at) => (recoveredAt = at));
  log(`writes acknowledged again; new leader ${await leader()}`);
  stopAt = performance.now() + SECONDS_AFTER * 1000;
  await Promise.all([...writers, ...subscribers]);
  log(`load over; ${subscribed.size} subscriptions acknowledged; waiting for renewals, charges and deliveries to settle`);
  const settled = await settle(databaseUrl);
  const billing = await billingChecks(databaseUrl, journalFile, subscribed);
  const deliveries = await deliveryChecks(databaseUrl, setup.webhookSince);
  const reconciliationDiscrepancies = await reconcile(apis[1]!, key);

  // 7. Checks through the new leader.
  const firstFailure = outcomes.find((o) => o.at > killedAt && !o.ok)!;
  const rto = Math.round(recoveredAt - firstFailure.at);
  const check = new pg.Client({ connectionString: databaseUrl });
  await check.connect();
  const customers = (await check.query<{ id: string; email: string }>('SELECT id, email FROM customers')).rows;
  const invoices = new Set((await check.query<{ id: string }>('SELECT id FROM invoices')).rows.map((r) => r.id));
  const payments = (await check.query<{ id: string; reference_number: string }>('SELECT id, reference_number FROM payments')).rows;
  const unbalanced = (
    await check.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM (SELECT entry_id FROM journal_lines GROUP BY tenant_id, entry_id HAVING sum(debit) <> sum(credit)) AS e',
    )
  ).rows[0]!.n;
  await check.end();

  const customerIds = new Set(customers.map((c) => c.id));
  const paymentIds = new Set(payments.map((p) => p.id));
  const lost =
    [...acked.customers.values()].filter((id) => !customerIds.has(id)).length +
    [...acked.invoices].filter((id) => !invoices.has(id)).length +
    [...acked.payments.values()].filter((id) => !paymentIds.has(id)).length;
  const count = (values: string[]) => values.reduce((m, v) => m.set(v, (m.get(v) ?? 0) + 1), new Map<string, number>());
  const doubled =
    [...count(customers.map((c) => c.email)).values()].filter((n) => n > 1).length +
    [...count(payments.map((p) => p.reference_number)).values()].filter((n) => n > 1).length;
  const koshAlive = children.filter((c) => c.name.startsWith('kosh')).every((c) => c.child.exitCode === null && c.child.signalCode === null);
  const acknowledgedCount = acked.customers.size + acked.invoices.size + acked.payments.size;
  const failed = outcomes.filter((o) => !o.ok).length;
  log(`${outcomes.length} requests, ${failed} refused or cut during the failover (all retried with their key)`);
  const result = {
    rto_ms: rto,
    acknowledged: acknowledgedCount,
    lost,
    doubled,
    ledger_balanced: unbalanced === 0,
    kosh_alive: koshAlive,
    settled,
    ...billing,
    ...deliveries,
    reconciliation_discrepancies: reconciliationDiscrepancies,
  };
  await stopAll();
  console.log(JSON.stringify(result));
  const clean =
    billing.lost_subscriptions +
      billing.missed_renewals +
      billing.doubled_renewals +
      billing.doubled_charges +
      billing.unrecorded_charges +
      billing.unpaid_automatic ===
      0 &&
    deliveries.doubled_emails + deliveries.unreceipted_payments + deliveries.doubled_webhooks + deliveries.undelivered_webhooks === 0 &&
    reconciliationDiscrepancies === 0;
  process.exitCode = lost === 0 && doubled === 0 && unbalanced === 0 && koshAlive && clean && settled && rto <= 30_000 ? 0 : 1;
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => void stopAll().then(() => process.exit(130)));
main().catch(async (error: unknown) => {
  log(`failed: ${error instanceof Error ? error.message : String(error)}`);
  await stopAll();
  process.exitCode = 1;
});
