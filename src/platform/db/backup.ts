import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createConnection, createServer, type Server } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import type pg from 'pg';
import { systemClock } from '../clock.js';
import { acquireDataDirLock, DataDirLockedError } from './datadir-lock.js';

/**
 * Backups of the embedded database (decision 0320). A backup is PGlite's data directory as a
 * gzipped tar, taken between transactions: the single connection is checked out of the pool (so
 * no transaction is half done), a CHECKPOINT flushes the buffers, and the directory is archived.
 *
 * The data directory belongs to one process (datadir-lock.ts). While `kosh serve` holds it, the
 * server answers backups on a Unix socket inside the data directory (`kosh.sock`, reachable only
 * by whoever may read the data directory itself) and streams the archive to `kosh backup`; when
 * no process holds it, `kosh backup` opens the directory itself.
 */
export const BACKUP_SOCKET = 'kosh.sock';

/** Archives an open embedded database between transactions. */
export async function dumpEmbedded(pglite: PGlite, pool: pg.Pool): Promise<Buffer> {
  const client = await pool.connect();
  try {
    await client.query('CHECKPOINT');
    const blob = await pglite.dumpDataDir('gzip');
    return Buffer.from(await blob.arrayBuffer());
  } finally {
    client.release();
  }
}

/**
 * The server's side: answers each connection on `<dataDir>/kosh.sock` with a header line
 * (`{"bytes":N}` or `{"error":"…"}`) followed by the archive. Returns a function that closes it.
 */
export async function serveBackups(dataDir: string, dump: () => Promise<Buffer>): Promise<() => Promise<void>> {
  const path = join(dataDir, BACKUP_SOCKET);
  rmSync(path, { force: true }); // left by a process that died (the data directory lock is ours now)
  const server: Server = createServer((socket) => {
    socket.on('error', () => {});
    dump()
      .then((archive) => {
        socket.write(`${JSON.stringify({ bytes: archive.length })}\n`);
        socket.end(archive);
      })
      .catch((error: unknown) => socket.end(`${JSON.stringify({ error: error instanceof Error ? error.message : String(error) })}\n`));
  });
  await new Promise<void>((ok, fail) => {
    server.once('error', fail);
    server.listen(path, ok);
  });
  server.on('error', () => {});
  return () =>
    new Promise<void>((ok) => {
      server.close(() => ok());
      rmSync(path, { force: true });
    });
}

function askServer(dataDir: string): Promise<Buffer> {
  return new Promise((ok, fail) => {
    const chunks: Buffer[] = [];
    const socket = createConnection(join(dataDir, BACKUP_SOCKET));
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', (error) =>
      fail(
        new Error(
          `The Kosh process holding ${dataDir} did not answer the backup request (${error.message}). Is it an older Kosh? Stop it and run kosh backup again.`,
        ),
      ),
    );
    socket.on('end', () => {
      const all = Buffer.concat(chunks);
      const newline = all.indexOf(10);
      if (newline < 0) return fail(new Error('The running Kosh closed the backup connection without an answer'));
      const header = JSON.parse(all.subarray(0, newline).toString('utf8')) as { bytes?: number; error?: string };
      if (header.error !== undefined) return fail(new Error(`The running Kosh could not take the backup: ${header.error}`));
      const archive = all.subarray(newline + 1);
      if (archive.length !== header.bytes) return fail(new Error(`The backup was cut short (${archive.length} of ${header.bytes} bytes)`));
      ok(archive);
    });
  });
}

/** Writes the file whole or not at all (a temporary file renamed into place). */
function writeWhole(out: string, archive: Buffer): void {
  mkdirSync(dirname(resolve(out)), { recursive: true });
  const partial = `${out}.partial`;
  writeFileSync(partial, archive, { mode: 0o600 });
  renameSync(partial, out);
}

/** `kosh backup --out FILE`: from the running server if one holds the directory, else directly. */
export async function backupEmbedded(dataDir: string, out: string): Promise<{ bytes: number; via: 'server' | 'direct' }> {
  if (!existsSync(join(dataDir, 'pgdata', 'PG_VERSION'))) throw new Error(`There is no embedded database in ${dataDir} (KOSH_DATA_DIR) to back up`);
  let release: () => void;
  try {
    release = acquireDataDirLock(dataDir);
  } catch (error) {
    if (!(error instanceof DataDirLockedError)) throw error;
    const archive = await askServer(dataDir);
    writeWhole(out, archive);
    return { bytes: archive.length, via: 'server' };
  }
  try {
    const { PGlite } = await import('@electric-sql/pglite');
    const pglite = await PGlite.create(join(dataDir, 'pgdata'));
    try {
      await pglite.exec('CHECKPOINT');
      const archive = Buffer.from(await (await pglite.dumpDataDir('gzip')).arrayBuffer());
      writeWhole(out, archive);
      return { bytes: archive.length, via: 'direct' };
    } finally {
      await pglite.close();
    }
  } finally {
    release();
  }
}

/**
 * `kosh restore FILE`: only with no process on the data directory. The current database is kept
 * beside it (`pgdata.before-restore-<time>`) rather than deleted; the archive is unpacked into a
 * fresh `pgdata` and opened once, so a damaged archive is refused before anything is replaced.
 */
export async function restoreEmbedded(dataDir: string, file: string): Promise<{ keptAs: string | null }> {
  if (!existsSync(file) || !statSync(file).isFile()) throw new Error(`No backup file at ${file}`);
  const release = acquireDataDirLock(dataDir);
  try {
    const { PGlite } = await import('@electric-sql/pglite');
    const staging = join(dataDir, `pgdata.restoring`);
    rmSync(staging, { recursive: true, force: true });
    const blob = new Blob([readFileSync(file)]);
    try {
      const pglite = await PGlite.create({ dataDir: staging, loadDataDir: blob });
      await pglite.query('SELECT 1 FROM schema_migrations LIMIT 1');
      await pglite.close();
    } catch (error) {
      rmSync(staging, { recursive: true, force: true });
      throw new Error(`${file} is not a usable Kosh backup: ${error instanceof Error ? error.message : String(error)}`);
    }
    const pgdata = join(dataDir, 'pgdata');
    let keptAs: string | null = null;
    if (existsSync(pgdata)) {
      keptAs = join(dataDir, `pgdata.before-restore-${systemClock.now().toISOString().replace(/[:.]/g, '-')}`);
      renameSync(pgdata, keptAs);
    }
    renameSync(staging, pgdata);
    return { keptAs };
  } finally {
    release();
  }
}
