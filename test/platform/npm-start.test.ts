import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * `npm start` is how the README starts Kosh, and a supervisor stops it by signalling npm. The
 * signal must reach the server: no process may be left serving the port.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const dataDir = mkdtempSync(join(tmpdir(), 'kosh-npm-start-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

async function refusesConnections(url: string): Promise<boolean> {
  try {
    await fetch(`${url}/healthz`, { headers: { connection: 'close' } });
    return false;
  } catch {
    return true;
  }
}

describe('npm start', () => {
  it('passes SIGTERM to the server: npm exits and nothing is left listening on the port', async () => {
    const npm = spawn('npm', ['start', '--silent'], {
      cwd: ROOT,
      // The embedded database in a scratch directory: the server needs no other service.
      env: { ...process.env, DATABASE_URL: '', KOSH_DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', KOSH_WORKER: 'off', LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const address = await new Promise<string>((resolve, reject) => {
      const onData = (chunk: Buffer) => {
        output += chunk;
        const listening = /"address":"(http:\/\/[^"]+)"/.exec(output);
        if (listening) resolve(listening[1]!.replace('localhost', '127.0.0.1'));
      };
      npm.stdout!.on('data', onData);
      npm.stderr!.on('data', onData);
      npm.on('exit', (code) => reject(new Error(`npm start exited (${code}) before listening: ${output}`)));
    });
    expect((await fetch(`${address}/healthz`)).status).toBe(200);

    const exited = once(npm, 'exit');
    npm.kill('SIGTERM');
    await exited;
    // The server's graceful shutdown has closed the port by the time npm itself has exited.
    let refused = false;
    for (let i = 0; i < 100 && !refused; i++) {
      refused = await refusesConnections(address);
      if (!refused) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(refused, `still serving after npm exited: ${output.slice(-1000)}`).toBe(true);
  }, 120_000);
});
