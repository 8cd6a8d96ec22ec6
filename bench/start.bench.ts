/**
 * npm run bench:start — time from launching `npm start`'s command (`node bin/kosh.js serve`) to the
 * first 200 from GET /healthz, on fresh storage (every migration applies: the first start after an
 * install) and again on the same storage (a restart). Embedded database by default; a fresh
 * PostgreSQL database (dropped afterwards) when DATABASE_URL is set. The build is brought up to
 * date first and not timed (`npm install` does it). LAST line: {"start_ms":…,"restart_ms":…}.
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';

const root = join(import.meta.dirname, '..');

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

async function admin(url: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

/** Launches the server, polls /healthz every 10 ms, answers the milliseconds to the first 200. */
async function timeStart(env: Record<string, string>): Promise<number> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, [join(root, 'bin/kosh.js'), 'serve'], {
    cwd: root,
    env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1', KOSH_WORKER: 'off', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  let exited = false;
  child.on('exit', () => (exited = true));
  try {
    for (;;) {
      if (exited) throw new Error('kosh exited before answering /healthz');
      try {
        const res = await fetch(`http://127.0.0.1:${port}/healthz`);
        if (res.status === 200) return performance.now() - started;
      } catch {
        // not listening yet
      }
      if (performance.now() - started > 60_000) throw new Error('no answer from /healthz within 60 s');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => (exited ? resolve(undefined) : child.on('exit', resolve)));
  }
}

async function main() {
  const build = spawnSync(process.execPath, [join(root, 'bin/kosh.js'), '--version'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  if (build.status !== 0) throw new Error('the build failed');

  let env: Record<string, string>;
  let cleanup: () => Promise<void>;
  let label: string;
  const serverUrl = process.env.DATABASE_URL;
  if (serverUrl) {
    const name = `kosh_bench_start_${randomBytes(4).toString('hex')}`;
    await admin(serverUrl, `CREATE DATABASE ${name}`);
    const url = new URL(serverUrl);
    url.pathname = `/${name}`;
    env = { DATABASE_URL: url.toString() };
    cleanup = () => admin(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    label = `PostgreSQL (${url.host}/${name})`;
  } else {
    const dir = mkdtempSync(join(tmpdir(), 'kosh-bench-start-'));
    env = { KOSH_DATA_DIR: dir, DATABASE_URL: '' };
    cleanup = async () => rmSync(dir, { recursive: true, force: true });
    label = `embedded PGlite (${dir})`;
  }
  try {
    const first = await timeStart(env);
    console.log(`${label}: first start (fresh storage, all migrations) ${first.toFixed(0)} ms`);
    const again = await timeStart(env);
    console.log(`${label}: restart (migrated storage) ${again.toFixed(0)} ms   (target ≤ 3000 ms)`);
    console.log(JSON.stringify({ start_ms: Math.round(first), restart_ms: Math.round(again) }));
  } finally {
    await cleanup();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
