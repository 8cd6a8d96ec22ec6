import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The repository root: child processes run `src/cli/main.ts` through tsx from here. */
export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export type KoshProcess = { child: ChildProcess; base: string; output: () => string; stop: () => Promise<void> };

/** Starts `kosh <command>` (serve by default) as a child process and answers once it listens. */
export function startKoshProcess(env: Record<string, string>, command = 'serve'): Promise<KoshProcess> {
  return new Promise((resolve, reject) => {
    let output = '';
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', command], {
      cwd: ROOT,
      env: { ...process.env, LOG_LEVEL: 'info', PORT: '0', HOST: '127.0.0.1', KOSH_MODE: 'test', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const stop = async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((done) => child.once('exit', done));
      child.kill('SIGTERM');
      await exited;
    };
    const onData = (chunk: Buffer) => {
      output += chunk;
      const listening = /"address":"(http:\/\/[^"]+)"/.exec(output);
      if (listening) resolve({ child, base: listening[1]!.replace('localhost', '127.0.0.1'), output: () => output, stop });
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('error', reject);
    child.on('exit', (code) => reject(new Error(`kosh ${command} exited (${code}) before listening: ${output}`)));
  });
}

/** Runs a short `kosh …` command to its end (asynchronously: the test's own requests go on meanwhile). */
export function runKosh(args: string[], env: Record<string, string>): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
      cwd: ROOT,
      env: { ...process.env, LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
    child.on('error', reject);
    child.on('exit', (status) => resolve({ status, stdout, stderr }));
  });
}
