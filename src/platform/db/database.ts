import { join } from 'node:path';
import pg from 'pg';
import { Kysely, PostgresDialect } from 'kysely';
// The embedded database loads only when it is used (no DATABASE_URL).
import type { PGlite } from '@electric-sql/pglite';
import type { DB } from './schema.js';
import { acquireDataDirLock } from './datadir-lock.js';
import { PipeliningClient } from './pipeline.js';
import { shareListCounts } from './paginate.js';
import { registerPool } from './read-together.js';

export type DatabaseKind = 'pglite' | 'postgres';

/**
 * Where the change feed (change-feed.ts) holds LISTEN: a session of its own on the server (never
 * one of the pool's), or the embedded database itself, which delivers a notification in the same
 * tick as the COMMIT that sent it.
 */
export type NotificationSource =
  | { kind: 'server'; client: () => pg.Client }
  | { kind: 'embedded'; listen: (channel: string, onPayload: (payload: string) => void) => Promise<() => Promise<void>> };

export type Database = {
  db: Kysely<DB>;
  /**
   * Reports, exports and analytics read here: a streaming replica when DATABASE_READ_URL is set
   * (decision 0324), else the same as `db`. Never for money writes or read-then-write paths.
   */
  readDb: Kysely<DB>;
  pool: pg.Pool;
  kind: DatabaseKind;
  notifications: NotificationSource;
  close(): Promise<void>;
};

const INT8_OID = 20;

/** int8 columns (money, counts) arrive as numbers, checked — never as silent strings. */
function parseInt8(text: string): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n)) {
    throw new RangeError(`int8 value ${text} is outside the safe integer range`);
  }
  return n;
}

const typeOverrides = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === INT8_OID) return parseInt8;
    return pg.types.getTypeParser(oid, format);
  },
};

export type DatabaseOptions = {
  /** PostgreSQL server; when absent, the embedded PGlite database is used. */
  databaseUrl?: string;
  /** A read replica of that server for reports and analytics (DATABASE_READ_URL). */
  readUrl?: string;
  /** Embedded data directory, or `memory://` for a throwaway in-memory database. */
  dataDir?: string;
  poolSize?: number;
  /** A fresh embedded data directory starts as a copy of the build's template (default true). */
  template?: boolean;
  /** The embedded database answers `kosh backup` on `<dataDir>/kosh.sock` (default true). */
  serveBackups?: boolean;
  /** Limits on the server's connections (defaults: DEFAULT_TIMEOUTS). */
  timeouts?: Partial<DatabaseTimeouts>;
};

/**
 * Nothing waits on the database for ever: a dropped network, a held lock or an exhausted pool
 * turns into an error (answered 503, retryable) instead of a hung request.
 */
export type DatabaseTimeouts = {
  /** Opening a connection, and waiting for a free one in the pool. */
  connectMs: number;
  /** One statement on the server (`statement_timeout`). */
  statementMs: number;
  /** Waiting for a row or table lock (`lock_timeout`). */
  lockMs: number;
  /** A transaction left open with nothing running (`idle_in_transaction_session_timeout`). */
  idleInTransactionMs: number;
};

export const DEFAULT_TIMEOUTS: DatabaseTimeouts = { connectMs: 10_000, statementMs: 30_000, lockMs: 10_000, idleInTransactionMs: 60_000 };

/** Beyond the server's own limit, a statement whose answer never comes (a network black hole) is abandoned by the client. */
const CLIENT_GRACE_MS = 5_000;

/**
 * Kysely ends the pool only if it ever used it: a command that used only the pool (kosh migrate)
 * would otherwise wait out its idle connections' timers (10 s) before the process could exit.
 */
async function closePool(db: Kysely<DB>, pool: pg.Pool): Promise<void> {
  await db.destroy();
  if (!pool.ending) await pool.end();
}

function serverPool(connectionString: string, max: number, timeouts: DatabaseTimeouts): pg.Pool {
  const pool = new pg.Pool({
    connectionString,
    max,
    types: typeOverrides,
    Client: PipeliningClient, // deferred writes share round trips (pipeline.ts)
    connectionTimeoutMillis: timeouts.connectMs,
    statement_timeout: timeouts.statementMs,
    lock_timeout: timeouts.lockMs,
    idle_in_transaction_session_timeout: timeouts.idleInTransactionMs,
    query_timeout: timeouts.statementMs + CLIENT_GRACE_MS,
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  });
  // An idle connection the server drops (restart, failover, pg_terminate_backend) is reported as
  // a pool 'error' event; unhandled, that event kills the process. The pool has already discarded
  // the client and the next query opens a fresh one, so there is nothing else to do. A connection
  // that is checked out when it drops is handled by PipeliningClient itself.
  pool.on('error', () => {});
  return pool;
}

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  if (options.databaseUrl) {
    const timeouts = { ...DEFAULT_TIMEOUTS, ...options.timeouts };
    const pool = serverPool(options.databaseUrl, options.poolSize ?? 10, timeouts);
    const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
    registerPool(db, pool);
    let readDb = db;
    let readPool: pg.Pool | undefined;
    if (options.readUrl) {
      readPool = serverPool(options.readUrl, options.poolSize ?? 10, timeouts);
      readDb = new Kysely<DB>({ dialect: new PostgresDialect({ pool: readPool }) });
      registerPool(readDb, readPool);
      shareListCounts(readDb, db);
    }
    const listenerClient = () =>
      new pg.Client({
        connectionString: options.databaseUrl,
        connectionTimeoutMillis: timeouts.connectMs,
        query_timeout: timeouts.statementMs + CLIENT_GRACE_MS,
        keepAlive: true,
        keepAliveInitialDelayMillis: 10_000,
      });
    return {
      db,
      readDb,
      pool,
      kind: 'postgres',
      notifications: { kind: 'server', client: listenerClient },
      close: async () => {
        await closePool(db, pool);
        if (readPool) await closePool(readDb, readPool);
      },
    };
  }

  const dataDir = options.dataDir ?? './.kosh';
  const inMemory = dataDir.startsWith('memory://');
  const releaseLock = inMemory ? () => {} : acquireDataDirLock(dataDir);
  let pglite: PGlite;
  try {
    if (!inMemory && options.template !== false) {
      const { seedFromTemplate } = await import('./pglite-template.js');
      seedFromTemplate(join(dataDir, 'pgdata'));
    }
    const { PGlite } = await import('@electric-sql/pglite');
    pglite = await PGlite.create(inMemory ? dataDir : join(dataDir, 'pgdata'));
  } catch (error) {
    releaseLock();
    throw error;
  }
  // PGlite is one in-process connection: the pool has exactly one client, so transactions are
  // naturally serialized. Code must never need a second connection while holding one.
  const { createPgConfig } = await import('@electric-sql/pglite/node-postgres');
  const pool = new pg.Pool({ ...createPgConfig(pglite), max: 1, types: typeOverrides, Client: PipeliningClient });
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
  registerPool(db, pool);
  // `kosh backup` asks the process holding the data directory for a consistent archive (backup.ts).
  let stopBackups: () => Promise<void> = async () => {};
  if (!inMemory && options.serveBackups !== false) {
    const { dumpEmbedded, serveBackups } = await import('./backup.js');
    stopBackups = await serveBackups(dataDir, () => dumpEmbedded(pglite, pool)).catch(() => async () => {});
  }
  return {
    db,
    readDb: db,
    pool,
    kind: 'pglite',
    notifications: {
      kind: 'embedded',
      listen: async (channel, onPayload) => {
        const stop = await pglite.listen(channel, onPayload);
        return async () => {
          if (!pglite.closed) await stop();
        };
      },
    },
    close: async () => {
      await stopBackups();
      await closePool(db, pool);
      await pglite.close();
      releaseLock();
    },
  };
}
