import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { onPostgresServer } from '../support/database.js';
import { runKosh, startKoshProcess, type KoshProcess } from '../support/kosh-process.js';

/**
 * Backups of a running Kosh, restored and checked the way an operator would after losing the
 * machine: every record the API acknowledged before the backup began is in the restored database,
 * and every entity's trial balance is balanced.
 *
 * Embedded database: `kosh backup --out FILE` while `kosh serve` runs and writes go on, then
 * `kosh restore FILE`. PostgreSQL (DATABASE_URL): `pg_dump -Fc` of the running server's database,
 * `pg_restore` into a fresh database, `kosh serve` on the restored one.
 */
const SECRET = randomBytes(32).toString('base64');
const started: KoshProcess[] = [];
const cleanups: (() => Promise<void> | void)[] = [];

afterAll(async () => {
  for (const p of started) await p.stop();
  for (const c of cleanups.reverse()) await c();
});

async function serve(env: Record<string, string>): Promise<KoshProcess> {
  const p = await startKoshProcess({ KOSH_WORKER: 'off', KOSH_SECRET_KEY: SECRET, ...env });
  started.push(p);
  return p;
}

type Call = (method: string, path: string, body?: unknown) => Promise<{ status: number; body: any }>; // eslint-disable-line @typescript-eslint/no-explicit-any

function client(base: string, key?: string): Call {
  return async (method, path, body) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, body: await res.json() };
  };
}

async function register(base: string): Promise<string> {
  const res = await client(base)('POST', '/auth/register', { name: 'Backed Up', email: 'owner@backed-up.test' });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data.api_key.key;
}

type Acknowledged = { customers: string[]; invoices: string[]; payments: string[] };

/**
 * One round of business: a customer, a finalized invoice of ₹1 000.00 (no GST: the entity has no
 * GSTIN; posted to the ledger) and, every other round, an offline payment of ₹500.00 against it (posted too).
 */
async function businessRound(api: Call, i: number, into: Acknowledged): Promise<void> {
  const customer = await api('POST', '/v1/customers', { email: `c${i}@backed-up.test`, name: `Customer ${i}` });
  expect(customer.status, JSON.stringify(customer.body)).toBe(201);
  into.customers.push(customer.body.data.id);
  const invoice = await api('POST', '/v1/invoices', {
    customer_id: customer.body.data.id,
    currency: 'INR',
    lines: [{ description: 'Subscription', unit_amount: 100_000 }],
  });
  expect(invoice.status, JSON.stringify(invoice.body)).toBe(201);
  into.invoices.push(invoice.body.data.id);
  if (i % 2 === 0) {
    const payment = await api('POST', '/v1/payments/offline', {
      customer_id: customer.body.data.id,
      invoice_id: invoice.body.data.id,
      payment_type: 'bank_transfer',
      amount: 50_000,
    });
    expect(payment.status, JSON.stringify(payment.body)).toBe(201);
    into.payments.push(payment.body.data.id);
  }
}

/** Writes rounds until `stop()` is called; `acknowledged` grows as answers come back. */
function keepWriting(api: Call, from: number) {
  const acknowledged: Acknowledged = { customers: [], invoices: [], payments: [] };
  let running = true;
  const loop = (async () => {
    for (let i = from; running; i++) await businessRound(api, i, acknowledged);
  })();
  return {
    acknowledged,
    stop: async () => {
      running = false;
      await loop;
    },
  };
}

/** Every acknowledged record answers 200 from the restored Kosh, and every trial balance balances. */
async function expectRestored(api: Call, acknowledged: Acknowledged): Promise<void> {
  for (const id of acknowledged.customers) expect((await api('GET', `/v1/customers/${id}`)).status, `customer ${id}`).toBe(200);
  for (const id of acknowledged.invoices) expect((await api('GET', `/v1/invoices/${id}`)).status, `invoice ${id}`).toBe(200);
  for (const id of acknowledged.payments) expect((await api('GET', `/v1/payments/${id}`)).status, `payment ${id}`).toBe(200);
  const entities = (await api('GET', '/v1/entities')).body.data as { id: string }[];
  expect(entities.length).toBeGreaterThan(0);
  for (const entity of entities) {
    const tb = await api('GET', `/v1/ledger/trial-balance?entity_id=${entity.id}&currency=INR`);
    expect(tb.status, JSON.stringify(tb.body)).toBe(200);
    expect(tb.body.data.total_debit).toBe(tb.body.data.total_credit);
    // At least the invoices acknowledged before the backup: ₹1 000.00 receivable debited for each.
    expect(tb.body.data.total_debit).toBeGreaterThanOrEqual(acknowledged.invoices.length * 100_000);
  }
}

function merged(a: Acknowledged, b: Acknowledged): Acknowledged {
  return { customers: [...a.customers, ...b.customers], invoices: [...a.invoices, ...b.invoices], payments: [...a.payments, ...b.payments] };
}

describe('kosh backup and kosh restore (embedded database)', () => {
  it('backs up while the server runs and writes go on; the restore has every record acknowledged before the backup and a balanced ledger', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kosh-backup-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const dataDir = join(dir, 'data');
    const out = join(dir, 'kosh-backup.tar.gz');
    // The embedded database, also when the suite runs against a PostgreSQL server (DATABASE_URL set).
    const env = { KOSH_DATA_DIR: dataDir, DATABASE_URL: '' };

    let server = await serve(env);
    const key = await register(server.base);
    let api = client(server.base, key);
    const before: Acknowledged = { customers: [], invoices: [], payments: [] };
    for (let i = 0; i < 6; i++) await businessRound(api, i, before);

    // The backup is taken by the running server, between two of the writer's transactions.
    const writer = keepWriting(api, 100);
    const backup = await runKosh(['backup', '--out', out], env);
    await writer.stop();
    expect(backup.status, backup.stderr).toBe(0);
    expect(backup.stdout).toMatch(/taken by the running server/);
    expect(existsSync(out)).toBe(true);

    // Restoring under a running server is refused: it holds the data directory.
    const refused = await runKosh(['restore', out], env);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(/in use by another Kosh process/);

    // Written after the backup: gone after the restore (the restore really replaced the data).
    const after: Acknowledged = { customers: [], invoices: [], payments: [] };
    await businessRound(api, 999, after);
    await server.stop();

    const restore = await runKosh(['restore', out], env);
    expect(restore.status, restore.stderr).toBe(0);
    expect(readdirSync(dataDir).some((name) => name.startsWith('pgdata.before-restore-'))).toBe(true);

    server = await serve(env);
    api = client(server.base, key);
    await expectRestored(api, before);
    expect((await api('GET', `/v1/customers/${after.customers[0]}`)).status).toBe(404);
    await server.stop();
  }, 180_000);

  it('refuses a file that is not a backup, and keeps the database it has', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kosh-backup-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const bogus = join(dir, 'not-a-backup.tar.gz');
    execFileSync('sh', ['-c', `head -c 4096 /dev/urandom > ${bogus}`]);
    const result = await runKosh(['restore', bogus], { KOSH_DATA_DIR: join(dir, 'data'), DATABASE_URL: '' });
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/is not a usable Kosh backup/);
    expect(existsSync(join(dir, 'data', 'pgdata'))).toBe(false);
  }, 60_000);
});

describe.skipIf(!onPostgresServer)('pg_dump of a running Kosh on PostgreSQL, restored into a fresh database (needs DATABASE_URL)', () => {
  it('finds every record acknowledged before the dump began, and a balanced ledger', async () => {
    const serverUrl = process.env.DATABASE_URL!;
    const suffix = `${process.pid}_${randomBytes(3).toString('hex')}`;
    const [source, target] = [`kosh_bk_src_${suffix}`, `kosh_bk_dst_${suffix}`];
    const admin = new pg.Client({ connectionString: serverUrl });
    await admin.connect();
    cleanups.push(async () => {
      for (const name of [source, target]) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    });
    await admin.query(`CREATE DATABASE ${source}`);
    await admin.query(`CREATE DATABASE ${target}`);
    const urlOf = (name: string) => Object.assign(new URL(serverUrl), { pathname: `/${name}` }).toString();

    const server = await serve({ DATABASE_URL: urlOf(source) });
    const key = await register(server.base);
    const api = client(server.base, key);
    const before: Acknowledged = { customers: [], invoices: [], payments: [] };
    for (let i = 0; i < 6; i++) await businessRound(api, i, before);

    // pg_dump takes one snapshot while the writer goes on.
    const writer = keepWriting(api, 100);
    const dumpFile = join(mkdtempSync(join(tmpdir(), 'kosh-pgdump-')), 'kosh.dump');
    cleanups.push(() => rmSync(join(dumpFile, '..'), { recursive: true, force: true }));
    const ackedBeforeDump = {
      customers: [...writer.acknowledged.customers],
      invoices: [...writer.acknowledged.invoices],
      payments: [...writer.acknowledged.payments],
    };
    await new Promise<void>((resolve, reject) =>
      import('node:child_process').then(({ execFile }) =>
        execFile('pg_dump', ['--format=custom', '--no-owner', `--file=${dumpFile}`, urlOf(source)], (error) => (error ? reject(error) : resolve())),
      ),
    );
    await writer.stop();
    await server.stop();

    execFileSync('pg_restore', ['--no-owner', '--exit-on-error', `--dbname=${urlOf(target)}`, dumpFile]);
    const restored = await serve({ DATABASE_URL: urlOf(target) });
    await expectRestored(client(restored.base, key), merged(before, ackedBeforeDump));
    await restored.stop();
  }, 180_000);
});
