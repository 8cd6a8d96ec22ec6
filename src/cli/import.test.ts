import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerTenant } from '../flows/tenants/register-tenant.js';
import { openDatabase, type Database } from '../platform/db/database.js';
import { migrate } from '../platform/db/migrate.js';
import { onPostgresServer, openTestDatabase } from '../../test/support/database.js';

/**
 * `kosh import` end to end, as a child process: on the embedded database (a data directory in a
 * temp dir) or, with DATABASE_URL, on a fresh database of that server. The service itself is tested
 * in src/modules/importer; this checks the command: options, exit codes, stdout/stderr, the lock.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const FIXTURES = join(ROOT, 'test/fixtures/import');

type Run = { code: number | null; stdout: string; stderr: string };

function kosh(args: string[], env: Record<string, string>): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
      cwd: ROOT,
      env: { ...process.env, LOG_LEVEL: 'silent', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** `kosh serve` on the embedded database, resolved once it listens. */
function startServe(env: Record<string, string>): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'serve'], {
      cwd: ROOT,
      // The start-up line is a log line: keep the info level to see it.
      env: { ...process.env, LOG_LEVEL: 'info', PORT: '0', HOST: '127.0.0.1', KOSH_WORKER: 'off', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const onData = (chunk: Buffer) => {
      output += chunk;
      if (output.includes(' listening on ')) resolve(child);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('error', reject);
    child.on('exit', (code) => reject(new Error(`kosh serve exited (${code}) before listening: ${output}`)));
  });
}

let dataDir: string;
let database: (Database & { url?: string }) | null;
let env: Record<string, string>;
let tenantId: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'kosh-import-cli-'));
  database = onPostgresServer ? await openTestDatabase() : await openDatabase({ dataDir });
  if (!onPostgresServer) await migrate(database.pool);
  env = onPostgresServer ? { DATABASE_URL: database.url! } : { DATABASE_URL: '', KOSH_DATA_DIR: dataDir };
  const { tenant } = await registerTenant(
    database.db,
    new Date(),
    { name: 'Importer', email: 'owner@importer.test', base_currency: 'INR', data_region: 'in', country_code: 'IN', invoice_prefix: 'IMP-' } as never,
    'test',
  );
  tenantId = tenant.id;
  if (!onPostgresServer) {
    // The embedded data directory belongs to one process: free it for the commands under test.
    await database.close();
    database = null;
  }
});

afterAll(async () => {
  await database?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('kosh import', () => {
  it.skipIf(onPostgresServer)(
    'stops with the data-dir-lock message while kosh serve runs on the embedded database',
    async () => {
      const serve = await startServe(env);
      try {
        const run = await kosh(['import', '--tenant', tenantId, '--file', join(FIXTURES, 'valid.json')], env);
        expect(run.code).toBe(1);
        expect(run.stderr).toContain(`is in use by another Kosh process (pid ${serve.pid})`);
        expect(run.stderr).toContain("Stop that process first (for example the running 'kosh serve'), or point DATABASE_URL at a PostgreSQL server");
        expect(run.stdout).toBe('');
      } finally {
        const exited = once(serve, 'exit');
        serve.kill('SIGTERM');
        await exited;
      }
    },
    120_000,
  );

  it('imports a JSON file, printing only the report on stdout and progress on stderr', async () => {
    const run = await kosh(['import', '--tenant', tenantId, '--file', join(FIXTURES, 'valid.json'), '--json'], env);
    expect(run.stderr).toContain('kosh import: importing subscriptions: done, 7 rows');
    expect(run.code, run.stderr).toBe(0);
    // All created: on the embedded database, the import refused above wrote nothing.
    expect(JSON.parse(run.stdout)).toEqual({
      dry_run: false,
      created: { plans: 3, customers: 6, subscriptions: 7 },
      skipped: { plans: 0, customers: 0, subscriptions: 0 },
      failed: [],
    });
  }, 120_000);

  it('compares: exit 0 when ready, 1 with the issues when not', async () => {
    const ready = await kosh(
      [
        'import',
        'compare',
        '--tenant',
        tenantId,
        '--plans',
        join(FIXTURES, 'plans.csv'),
        '--customers',
        join(FIXTURES, 'customers.csv'),
        '--subscriptions',
        join(FIXTURES, 'subscriptions.csv'),
      ],
      env,
    );
    expect(ready.code, ready.stderr).toBe(0);
    expect(ready.stdout).toMatch(/^READY: the source and Kosh agree\./);

    const notReady = await kosh(['import', 'compare', '--tenant', tenantId, '--file', join(FIXTURES, 'broken.json'), '--json'], env);
    expect(notReady.code, notReady.stderr).toBe(1);
    const report = JSON.parse(notReady.stdout);
    expect(report.ready).toBe(false);
    expect(report.issues).toContainEqual({ kind: 'plan', key: 'basic-monthly', field: 'record', expected: 'absent', found: 'present' });
  }, 120_000);

  it('exits 2 on a usage error: a missing option, or a tenant that does not exist', async () => {
    const missing = await kosh(['import', '--file', join(FIXTURES, 'valid.json')], env);
    expect([missing.code, missing.stderr.trim()]).toEqual([2, 'kosh import: --tenant <uuid> is required']);
    const ghost = await kosh(['import', 'compare', '--tenant', '0190a4c8-0000-7000-8000-000000000000', '--file', join(FIXTURES, 'valid.json')], env);
    expect(ghost.code).toBe(2);
    expect(ghost.stderr).toContain('tenant not found: --tenant must name an existing tenant');
  }, 120_000);
});
