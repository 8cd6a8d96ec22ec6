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
 * Last line: {"rto_ms":…,"acknowledged":…,"lost":…,"doubled":…,"ledger_balanced":…,"kosh_alive":…}
 * Exit code 0 when lost = 0, doubled = 0, the ledger balances and rto_ms ≤ 30 000.
 * Runs as root (PostgreSQL and Patroni run as the `postgres` user) or as `postgres`.
 *   --seconds-before 10   load before the kill
 *   --seconds-after 15    load after the first write acknowledged after the kill
 *   --writers 6
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { chownSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
};
const SECONDS_BEFORE = arg('seconds-before', 10);
const SECONDS_AFTER = arg('seconds-after', 15);
const WRITERS = arg('writers', 6);
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
async function stopAll(): Promise<void> {
  stopping = true;
  for (const { child } of [...children].reverse()) if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  await sleep(1500);
  for (const { child } of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  // Patroni's postmasters are its children; a killed Patroni leaves them to us.
  for (const node of NODES) spawnSync(`${PG_BIN}/pg_ctl`, ['-D', join(dir, node.name), 'stop', '-m', 'immediate'], asRoot ? { uid: pgUid, gid: pgGid } : {});
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

  // 4. Kosh: two API processes and one worker, all through HAProxy.
  const env = {
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

  // 5. Load: customer → invoice → (every other round) payment, through both API processes.
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

  await sleep(SECONDS_BEFORE * 1000);
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
  await Promise.all(writers);

  // 6. Checks through the new leader.
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
  const result = { rto_ms: rto, acknowledged: acknowledgedCount, lost, doubled, ledger_balanced: unbalanced === 0, kosh_alive: koshAlive };
  await stopAll();
  console.log(JSON.stringify(result));
  process.exitCode = lost === 0 && doubled === 0 && unbalanced === 0 && koshAlive && rto <= 30_000 ? 0 : 1;
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => void stopAll().then(() => process.exit(130)));
main().catch(async (error: unknown) => {
  log(`failed: ${error instanceof Error ? error.message : String(error)}`);
  await stopAll();
  process.exitCode = 1;
});
