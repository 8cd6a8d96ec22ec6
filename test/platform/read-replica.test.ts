import { spawnSync, type SpawnSyncOptions } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKosh, type Kosh } from '../../src/app.js';
import { ManualClock } from '../../src/platform/clock.js';
import { loadConfig } from '../../src/platform/config.js';
import { toResponse } from '../support/harness.js';

/**
 * DATABASE_READ_URL (decision 0324) against a real streaming replica on loopback: a primary made
 * with initdb and a standby made with `pg_basebackup -R`, PostgreSQL 15 from Debian. Reports read
 * from the replica — shown by pausing its replay: the trial balance stays where the replica is
 * while the invoice itself (read from the primary) is there — and every write goes to the primary.
 *
 * Needs /usr/lib/postgresql/15/bin and to run as root (the servers run as `postgres`) or as postgres.
 */
const BIN = '/usr/lib/postgresql/15/bin';
const asRoot = process.getuid?.() === 0;
const pgUser = asRoot ? spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }) : null;
const runnable = existsSync(join(BIN, 'initdb')) && (!asRoot || pgUser?.status === 0);
const [PRIMARY_PORT, REPLICA_PORT] = [5461 + (process.pid % 200) * 2, 5462 + (process.pid % 200) * 2];

let dir: string;
let kosh: Kosh;
let key: string;
let replica: pg.Client;
let primary: pg.Client;

function asPostgres(command: string, args: string[]): void {
  const options: SpawnSyncOptions = { encoding: 'utf8', timeout: 60_000 };
  if (asRoot)
    Object.assign(options, {
      uid: Number(pgUser!.stdout.toString().trim()),
      gid: Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout.trim()),
    });
  const result = spawnSync(join(BIN, command), args, options);
  if (result.status !== 0) throw new Error(`${command} failed: ${String(result.stderr)}`);
}

async function api(method: string, url: string, body?: unknown) {
  return toResponse(
    await kosh.app.inject({
      method: method as 'GET',
      url,
      headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { payload: JSON.stringify(body) } : {}),
    }),
  );
}

/** Waits until the replica has replayed everything the primary has written so far. */
async function caughtUp(): Promise<void> {
  const { rows } = await primary.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn');
  for (let i = 0; i < 200; i++) {
    const r = await replica.query<{ behind: boolean }>('SELECT pg_last_wal_replay_lsn() < $1::pg_lsn AS behind', [rows[0]!.lsn]);
    if (!r.rows[0]!.behind) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('the replica did not catch up');
}

describe.skipIf(!runnable)('DATABASE_READ_URL with a streaming replica (PostgreSQL 15 on loopback)', () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kosh-replica-'));
    if (asRoot) chownSync(dir, Number(pgUser!.stdout.toString().trim()), Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout.trim()));
    const server = (data: string, port: number) => [
      '-D',
      join(dir, data),
      '-l',
      join(dir, `${data}.log`),
      '-w',
      '-o',
      `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`,
      'start',
    ];
    asPostgres('initdb', ['-D', join(dir, 'primary'), '-U', 'postgres', '--auth=trust', '--no-sync']);
    asPostgres('pg_ctl', server('primary', PRIMARY_PORT));
    asPostgres('pg_basebackup', ['-h', '127.0.0.1', '-p', String(PRIMARY_PORT), '-U', 'postgres', '-D', join(dir, 'replica'), '-R', '-X', 'stream']);
    asPostgres('pg_ctl', server('replica', REPLICA_PORT));
    const primaryUrl = `postgres://postgres@127.0.0.1:${PRIMARY_PORT}/postgres`;
    const replicaUrl = `postgres://postgres@127.0.0.1:${REPLICA_PORT}/postgres`;
    primary = new pg.Client({ connectionString: primaryUrl });
    replica = new pg.Client({ connectionString: replicaUrl });
    await primary.connect();
    await replica.connect();
    const config = loadConfig({
      KOSH_MODE: 'test',
      LOG_LEVEL: 'silent',
      KOSH_SECRET_KEY: randomBytes(32).toString('base64'),
      DATABASE_URL: primaryUrl,
      DATABASE_READ_URL: replicaUrl,
    });
    kosh = await createKosh({ config, clock: new ManualClock('2026-04-01T00:00:00Z'), logger: pino({ level: 'silent' }) });
    const reg = await api('POST', '/auth/register', { name: 'Replicated', email: 'owner@replicated.test' });
    expect(reg.status, reg.text).toBe(201);
    key = reg.body.data.api_key.key;
  }, 120_000);

  afterAll(async () => {
    await kosh?.close();
    await primary?.end();
    await replica?.end();
    for (const data of ['replica', 'primary']) {
      try {
        asPostgres('pg_ctl', ['-D', join(dir, data), '-m', 'immediate', 'stop']);
      } catch {
        // not started
      }
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('reads the trial balance from the replica (it lags while replay is paused) and writes to the primary', async () => {
    const customer = await api('POST', '/v1/customers', { email: 'c@replicated.test', name: 'C' });
    expect(customer.status, customer.text).toBe(201);
    const invoice = (amount: number) =>
      api('POST', '/v1/invoices', { customer_id: customer.body.data.id, currency: 'INR', lines: [{ description: 'Plan', unit_amount: amount }] });
    expect((await invoice(100_000)).status).toBe(201);
    const entity = (await api('GET', '/v1/entities')).body.data[0].id as string;
    const debits = async () => (await api('GET', `/v1/ledger/trial-balance?entity_id=${entity}&currency=INR`)).body.data.total_debit as number;

    await caughtUp();
    // ₹1 000.00 receivable (no GST: the entity has no GSTIN).
    expect(await debits()).toBe(100_000);

    // Replay paused: a second invoice of ₹500.00 commits on the primary (the write path never
    // touches the read-only replica) but the report, read from the replica, does not see it yet.
    await replica.query('SELECT pg_wal_replay_pause()');
    const second = await invoice(50_000);
    expect(second.status, second.text).toBe(201);
    expect((await api('GET', `/v1/invoices/${second.body.data.id}`)).status).toBe(200);
    expect(await debits()).toBe(100_000);

    await replica.query('SELECT pg_wal_replay_resume()');
    await caughtUp();
    expect(await debits()).toBe(150_000);
  }, 60_000);
});
