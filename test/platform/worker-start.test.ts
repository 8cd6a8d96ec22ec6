import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

/** An operator reads from a worker's first lines what it runs, and whether it has anyone to run it for. */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const dataDir = mkdtempSync(join(tmpdir(), 'kosh-worker-start-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

type LogLine = { level: number; msg: string; mode?: string; concurrency?: number; lease_ms?: number; kinds?: string[]; tenants?: number };

describe('kosh worker', () => {
  it('logs its mode, concurrency, lease and job kinds at start, and warns when no tenant is in its mode', async () => {
    const worker = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'worker'], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: '', KOSH_DATA_DIR: dataDir, KOSH_MODE: 'test', KOSH_WORKER_CONCURRENCY: '7', LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    await new Promise<void>((resolve, reject) => {
      worker.stdout!.on('data', (chunk) => {
        output += chunk;
        if (output.includes('worker running')) resolve();
      });
      worker.stderr!.on('data', (chunk) => (output += chunk));
      worker.on('exit', (code) => reject(new Error(`kosh worker exited (${code}): ${output}`)));
    });
    const exited = once(worker, 'exit');
    worker.kill('SIGTERM');
    await exited;

    const lines = output
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as LogLine);
    const started = lines.find((l) => l.msg === 'worker started in test mode');
    expect(started).toMatchObject({ mode: 'test', concurrency: 7, lease_ms: 60_000, tenants: 0 });
    expect(started!.kinds).toEqual(expect.arrayContaining(['analytics.mrr_snapshot', 'platform.purge_finished_jobs']));
    const warning = lines.find((l) => l.msg.startsWith('no tenant is in test mode'));
    expect(warning?.level).toBe(40);
  }, 120_000);
});
