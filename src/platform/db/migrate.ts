import { readdirSync, readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type pg from 'pg';
import { isDatabaseUnavailable } from './errors.js';

export const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), '../../../migrations');

const MIGRATION_LOCK_KEY = 7_406_517; // arbitrary, constant: serializes concurrent migrators

type MigrationFile = { version: string; name: string; sql: string; checksum: string };

export function readMigrations(dir = MIGRATIONS_DIR): MigrationFile[] {
  return readdirSync(dir)
    .filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f))
    .sort()
    .map((file) => {
      const sql = readFileSync(join(dir, file), 'utf8');
      return {
        version: file.slice(0, 4),
        name: file.slice(5, -4),
        sql,
        checksum: createHash('sha256').update(sql).digest('hex'),
      };
    });
}

/**
 * The usual start: every migration of this build is recorded, unchanged. Checked with one plain
 * statement — no session settings, no advisory lock — so a process starting behind a
 * transaction-mode pooler (PgBouncer) leaves nothing behind on a shared server connection. Only
 * when something is pending does `migrate` take its session (run `kosh migrate` directly against
 * PostgreSQL for that).
 */
async function upToDate(pool: pg.Pool, log: (line: string) => void, dir: string): Promise<boolean> {
  let rows: { version: string; name: string; checksum: string }[];
  try {
    rows = (await pool.query<{ version: string; name: string; checksum: string }>('SELECT version, name, checksum FROM schema_migrations')).rows;
  } catch (error) {
    if ((error as { code?: string }).code === '42P01') return false; // no table yet: a new database
    throw error;
  }
  const done = new Map(rows.map((r) => [r.version, r.checksum]));
  const files = readMigrations(dir);
  if (!files.every((m) => done.get(m.version) === m.checksum)) return false;
  const known = new Set(files.map((m) => m.version));
  const newer = rows.filter((r) => !known.has(r.version)).map((r) => `${r.version}_${r.name}`);
  if (newer.length > 0) {
    log(`the database has migrations this build does not know (${newer.join(', ')}): a newer release migrated it; finish the upgrade`);
  }
  return true;
}

/**
 * Applies every numbered migration not yet recorded, each in its own transaction. A recorded
 * migration whose file changed is refused: migrations are never edited once landed.
 */
export async function migrate(pool: pg.Pool, log: (line: string) => void = () => {}, dir = MIGRATIONS_DIR): Promise<string[]> {
  if (await upToDate(pool, log, dir)) return [];
  const client = await pool.connect();
  const applied: string[] = [];
  try {
    // A migration (or the wait for another process's) may outlast the request limits of the
    // connection; this session alone lifts them.
    await client.query('SET statement_timeout = 0');
    await client.query('SET lock_timeout = 0');
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version text PRIMARY KEY,
      name text NOT NULL,
      checksum text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
    const { rows } = await client.query<{ version: string; name: string; checksum: string }>('SELECT version, name, checksum FROM schema_migrations');
    const done = new Map(rows.map((r) => [r.version, r.checksum]));
    const files = readMigrations(dir);
    const known = new Set(files.map((m) => m.version));
    const newer = rows.filter((r) => !known.has(r.version)).map((r) => `${r.version}_${r.name}`);
    if (newer.length > 0) {
      // Expand-then-contract keeps an older build working on a newer schema during a rolling
      // upgrade; it is said, not refused.
      log(`the database has migrations this build does not know (${newer.join(', ')}): a newer release migrated it; finish the upgrade`);
    }
    for (const m of files) {
      const recorded = done.get(m.version);
      if (recorded !== undefined) {
        if (recorded !== m.checksum) {
          throw new Error(`Migration ${m.version}_${m.name} was edited after it was applied; add a new migration instead.`);
        }
        continue;
      }
      await client.query('BEGIN');
      try {
        await client.query(m.sql);
        await client.query('INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)', [m.version, m.name, m.checksum]);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK');
        throw new Error(`Migration ${m.version}_${m.name} failed: ${(error as Error).message}`, { cause: error });
      }
      applied.push(`${m.version}_${m.name}`);
      log(`applied migration ${m.version}_${m.name}`);
    }
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => {});
    await client.query('RESET statement_timeout').catch(() => {});
    await client.query('RESET lock_timeout').catch(() => {});
    client.release();
  }
  return applied;
}

/**
 * `migrate`, retried while the database cannot be reached (a server still starting, a failover
 * in progress) for up to `waitMs`; any other failure stops at once.
 */
export async function migrateWhenReachable(pool: pg.Pool, log: (line: string) => void, waitMs: number): Promise<string[]> {
  const giveUpAt = Date.now() + waitMs;
  for (let pause = 250; ; pause = Math.min(pause * 2, 5_000)) {
    try {
      return await migrate(pool, log);
    } catch (error) {
      if (!isDatabaseUnavailable(error) || Date.now() + pause > giveUpAt) throw error;
      log(`database not reachable (${(error as Error).message}); retrying in ${pause} ms`);
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }
}

export type MigrationStatus = { version: string; name: string; state: 'applied' | 'pending' | 'unknown'; applied_at: Date | null };

/** Every migration of this build and of the database, in order: applied, pending, or unknown to this build. */
export async function migrationStatus(pool: pg.Pool, dir = MIGRATIONS_DIR): Promise<MigrationStatus[]> {
  const exists = await pool.query<{ t: string | null }>("SELECT to_regclass('schema_migrations')::text AS t");
  const rows = exists.rows[0]?.t
    ? (await pool.query<{ version: string; name: string; applied_at: Date }>('SELECT version, name, applied_at FROM schema_migrations')).rows
    : [];
  const applied = new Map(rows.map((r) => [r.version, r]));
  const files = readMigrations(dir);
  const known = new Set(files.map((m) => m.version));
  const status: MigrationStatus[] = files.map((m) => ({
    version: m.version,
    name: m.name,
    state: applied.has(m.version) ? 'applied' : 'pending',
    applied_at: applied.get(m.version)?.applied_at ?? null,
  }));
  for (const r of rows) if (!known.has(r.version)) status.push({ version: r.version, name: r.name, state: 'unknown', applied_at: r.applied_at });
  return status.sort((a, b) => a.version.localeCompare(b.version));
}
