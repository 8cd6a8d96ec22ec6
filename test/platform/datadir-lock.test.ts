import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/platform/db/database.js';
import { DataDirLockedError } from '../../src/platform/db/datadir-lock.js';

/**
 * DESIGN §2: the embedded data directory belongs to one process at a time; a second opener stops
 * with a message naming the fix, and never opens the data.
 */

const root = join(import.meta.dirname, '../..');
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'kosh-lock-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs `kosh migrate` on the data directory in a separate process, as an operator would. */
function koshMigrateInChild(dataDir: string): Promise<{ code: number | null; stderr: string; stdout: string }> {
  return new Promise((resolve, reject) => {
    const env: NodeJS.ProcessEnv = { ...process.env, KOSH_DATA_DIR: dataDir, LOG_LEVEL: 'silent' };
    delete env.DATABASE_URL; // the embedded database is the subject, even in the server pass
    const child = spawn(process.execPath, [join(root, 'bin/kosh.js'), 'migrate'], { cwd: root, env });
    let stderr = '';
    let stdout = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr, stdout }));
  });
}

/** A pid that belonged to a process that has exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
  return Number(child.stdout.toString());
}

describe('embedded data directory lock', () => {
  describe('while a process holds the directory', () => {
    let holder: Database;
    beforeAll(async () => {
      holder = await openDatabase({ dataDir: dir });
    });
    afterAll(() => holder?.close());

    it('writes the holder pid to kosh.lock', () => {
      expect(readFileSync(join(dir, 'kosh.lock'), 'utf8')).toBe(String(process.pid));
    });

    it('refuses a second open in the same process with DataDirLockedError naming the fix', async () => {
      const second = openDatabase({ dataDir: dir });
      await expect(second).rejects.toBeInstanceOf(DataDirLockedError);
      await expect(openDatabase({ dataDir: dir })).rejects.toThrow(/in use by another Kosh process \(pid \d+\).*Stop that process.*DATABASE_URL/s);
      // The holder is unharmed.
      expect((await holder.pool.query('SELECT 1 AS ok')).rows).toEqual([{ ok: 1 }]);
    });

    it('refuses the same directory reached by another path', async () => {
      await expect(openDatabase({ dataDir: join(dir, '..', dir.split('/').pop()!) })).rejects.toBeInstanceOf(DataDirLockedError);
    });

    it('stops another process (kosh migrate) with the message and a non-zero exit', async () => {
      const child = await koshMigrateInChild(dir);
      expect(child.code).not.toBe(0);
      expect(child.stderr).toContain(`is in use by another Kosh process (pid ${process.pid})`);
      expect(child.stderr).toContain('DATABASE_URL');
      expect(child.stdout).not.toContain('migration');
      expect(readFileSync(join(dir, 'kosh.lock'), 'utf8')).toBe(String(process.pid));
    });
  });

  describe('after the holder is gone', () => {
    it('opens again once the holder has closed, and removes the lock on close', async () => {
      expect(existsSync(join(dir, 'kosh.lock'))).toBe(false);
      const again = await openDatabase({ dataDir: dir });
      await again.close();
      expect(existsSync(join(dir, 'kosh.lock'))).toBe(false);
    });

    it.each([
      ['a dead pid', () => String(deadPid())],
      ['garbage', () => 'not a pid'],
      // An earlier incarnation with our pid (a container restarted as pid 1) that never unlocked.
      ['our own pid from an earlier process', () => String(process.pid)],
    ])('takes over a stale lock file holding %s', async (_label, content) => {
      writeFileSync(join(dir, 'kosh.lock'), content());
      const db = await openDatabase({ dataDir: dir });
      try {
        expect(readFileSync(join(dir, 'kosh.lock'), 'utf8')).toBe(String(process.pid));
        expect((await db.pool.query('SELECT 1 AS ok')).rows).toEqual([{ ok: 1 }]);
      } finally {
        await db.close();
      }
    });
  });
});
