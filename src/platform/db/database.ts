import { join } from 'node:path';
import pg from 'pg';
import { Kysely, PostgresDialect } from 'kysely';
// The embedded database loads only when it is used (no DATABASE_URL).
import type { PGlite } from '@electric-sql/pglite';
import type { DB } from './schema.js';
import { acquireDataDirLock } from './datadir-lock.js';
import { PipeliningClient } from './pipeline.js';
import { registerPool } from './read-together.js';

export type DatabaseKind = 'pglite' | 'postgres';

export type Database = {
  db: Kysely<DB>;
  pool: pg.Pool;
  kind: DatabaseKind;
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
  /** Embedded data directory, or `memory://` for a throwaway in-memory database. */
  dataDir?: string;
  poolSize?: number;
  /** A fresh embedded data directory starts as a copy of the build's template (default true). */
  template?: boolean;
};

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  if (options.databaseUrl) {
    const pool = new pg.Pool({
      connectionString: options.databaseUrl,
      max: options.poolSize ?? 10,
      types: typeOverrides,
      Client: PipeliningClient, // deferred writes share round trips (pipeline.ts)
    });
    // An idle connection the server drops (restart, failover, pg_terminate_backend) is reported as
    // a pool 'error' event; unhandled, that event kills the process. The pool has already discarded
    // the client and the next query opens a fresh one, so there is nothing else to do.
    pool.on('error', () => {});
    const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
    registerPool(db, pool);
    return {
      db,
      pool,
      kind: 'postgres',
      close: async () => {
        await db.destroy();
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
  return {
    db,
    pool,
    kind: 'pglite',
    close: async () => {
      await db.destroy();
      await pglite.close();
      releaseLock();
    },
  };
}
