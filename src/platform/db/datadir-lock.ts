import { closeSync, mkdirSync, openSync, readFileSync, realpathSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The embedded data directory belongs to one process at a time: PGlite has no server to arbitrate
 * between two writers, so a second process would corrupt or silently fork the data. A lock file
 * holding the owner's pid guards it; a lock left by a dead process is taken over.
 */
export class DataDirLockedError extends Error {
  constructor(dir: string, pid: number) {
    super(
      `The embedded database in ${dir} is in use by another Kosh process (pid ${pid}). ` +
        `Stop that process first (for example the running 'kosh serve'), or point DATABASE_URL at a PostgreSQL server ` +
        `so several processes can share it.`,
    );
    this.name = 'DataDirLockedError';
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Directories this process holds. A lock file naming our own pid is ours only if it is listed
 * here; otherwise it was left by an earlier process that had the same pid (a restarted container
 * is pid 1 again) and is stale.
 */
const heldHere = new Set<string>();

export function acquireDataDirLock(dir: string): () => void {
  mkdirSync(dir, { recursive: true });
  const held = realpathSync(dir);
  // A second open in this very process would run two PGlite instances on one directory.
  if (heldHere.has(held)) throw new DataDirLockedError(dir, process.pid);
  const lockPath = join(dir, 'kosh.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lockPath, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      heldHere.add(held);
      return () => {
        heldHere.delete(held);
        rmSync(lockPath, { force: true });
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const owner = Number.parseInt(readFileSync(lockPath, 'utf8'), 10);
      if (Number.isInteger(owner) && owner !== process.pid && isAlive(owner)) {
        throw new DataDirLockedError(dir, owner);
      }
      rmSync(lockPath, { force: true }); // stale: its owner is gone
    }
  }
  throw new Error(`Could not lock ${dir}`);
}
