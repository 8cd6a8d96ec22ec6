import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import pg from 'pg';
import { openTestDatabase, onPostgresServer } from '../support/database.js';
import { migrate, migrationStatus, readMigrations } from '../../src/platform/db/migrate.js';
import { openDatabase, type Database } from '../../src/platform/db/database.js';

/** DESIGN §2: numbered SQL files, applied once, recorded, never edited once landed. */

let database: Database;
let dir: string;

beforeAll(async () => {
  database = await openTestDatabase(); // already migrated with the real migrations/
});
let closed = false;
afterAll(() => (closed ? undefined : database?.close()));
// Test migrations live in a scratch directory, numbered far above the real ones.
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'kosh-migrations-'));
  return () => rmSync(dir, { recursive: true, force: true });
});

async function tableExists(name: string): Promise<boolean> {
  const { rows } = await database.pool.query<{ t: string | null }>('SELECT to_regclass($1)::text AS t', [name]);
  return rows[0]!.t !== null;
}

async function recorded(version: string): Promise<number> {
  const { rows } = await database.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM schema_migrations WHERE version = $1', [version]);
  return rows[0]!.n;
}

describe('migrations', () => {
  it('applies nothing when run again on a migrated database', async () => {
    const lines: string[] = [];
    expect(await migrate(database.pool, (l) => lines.push(l))).toEqual([]);
    expect(lines).toEqual([]);
    const { rows } = await database.pool.query<{ version: string }>('SELECT version FROM schema_migrations ORDER BY version');
    expect(rows.map((r) => r.version)).toEqual(expect.arrayContaining(readMigrations().map((m) => m.version)));
  });

  it('applies a new migration once and records it', async () => {
    writeFileSync(join(dir, '9901_widgets.sql'), 'CREATE TABLE test_widgets (tenant_id uuid NOT NULL, id uuid NOT NULL, PRIMARY KEY (tenant_id, id));');
    writeFileSync(join(dir, 'README.md'), 'not a migration');
    writeFileSync(join(dir, '12_misnumbered.sql'), 'SELECT 1/0;');
    expect(await migrate(database.pool, () => {}, dir)).toEqual(['9901_widgets']);
    expect(await tableExists('test_widgets')).toBe(true);
    expect(await migrate(database.pool, () => {}, dir)).toEqual([]);
    expect(await recorded('9901')).toBe(1);
  });

  it('refuses to run when an applied migration was edited, and applies nothing after it', async () => {
    writeFileSync(join(dir, '9911_gadgets.sql'), 'CREATE TABLE test_gadgets (id int);');
    expect(await migrate(database.pool, () => {}, dir)).toEqual(['9911_gadgets']);

    writeFileSync(join(dir, '9911_gadgets.sql'), 'CREATE TABLE test_gadgets (id int, extra text);');
    writeFileSync(join(dir, '9912_later.sql'), 'CREATE TABLE test_later (id int);');
    await expect(migrate(database.pool, () => {}, dir)).rejects.toThrow('Migration 9911_gadgets was edited after it was applied; add a new migration instead.');
    expect(await tableExists('test_later')).toBe(false);
    expect(await recorded('9912')).toBe(0);
  });

  it('rolls a failing migration back entirely and does not record it', async () => {
    writeFileSync(join(dir, '9921_broken.sql'), 'CREATE TABLE test_half_done (id int);\nSELECT 1/0;');
    await expect(migrate(database.pool, () => {}, dir)).rejects.toThrow(/Migration 9921_broken failed: division by zero/);
    expect(await tableExists('test_half_done')).toBe(false);
    expect(await recorded('9921')).toBe(0);
    // The database is still usable and the next run tries again.
    writeFileSync(join(dir, '9921_broken.sql'), 'CREATE TABLE test_half_done (id int);');
    expect(await migrate(database.pool, () => {}, dir)).toEqual(['9921_broken']);
  });

  it('applies each migration once when two migrators race (the advisory lock serializes them)', async () => {
    writeFileSync(join(dir, '9931_raced.sql'), 'CREATE TABLE test_raced (id int);');
    writeFileSync(join(dir, '9932_raced_too.sql'), 'CREATE TABLE test_raced_too (id int);');
    const [a, b] = await Promise.all([migrate(database.pool, () => {}, dir), migrate(database.pool, () => {}, dir)]);
    expect([...a, ...b].sort()).toEqual(['9931_raced', '9932_raced_too']);
    expect(await recorded('9931')).toBe(1);
  });

  it('lists every migration as applied, pending, or unknown to this build (kosh migrate --status)', async () => {
    writeFileSync(join(dir, '9941_listed.sql'), 'CREATE TABLE status_listed (id int)');
    const before = await migrationStatus(database.pool, dir);
    expect(before.find((m) => m.version === '9941')).toEqual({ version: '9941', name: 'listed', state: 'pending', applied_at: null });
    // The real migrations are not in the scratch directory: to this "build" they are unknown.
    const real = new Set(readMigrations().map((m) => m.version));
    expect(before.filter((m) => real.has(m.version)).every((m) => m.state === 'unknown')).toBe(true);
    await migrate(database.pool, () => {}, dir);
    const after = await migrationStatus(database.pool, dir);
    expect(after.find((m) => m.version === '9941')).toMatchObject({ state: 'applied', applied_at: expect.any(Date) });
    expect((await migrationStatus(database.pool)).filter((m) => real.has(m.version)).every((m) => m.state === 'applied')).toBe(true);
  });

  it('says so, and still starts, when the database holds migrations newer than this build', async () => {
    writeFileSync(join(dir, '9951_known.sql'), 'CREATE TABLE newer_known (id int)');
    const lines: string[] = [];
    expect(await migrate(database.pool, (l) => lines.push(l), dir)).toEqual(['9951_known']);
    expect(lines.some((l) => /migrations this build does not know \(0001_/.test(l))).toBe(true);
  });
});

describe.skipIf(!onPostgresServer)('migrations from many processes at once (needs DATABASE_URL)', () => {
  it('applies each migration exactly once when ten pools start on an empty database together', async () => {
    const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await admin.connect();
    const name = `kosh_mig_race_${process.pid}`;
    await admin.query(`DROP DATABASE IF EXISTS ${name}`);
    await admin.query(`CREATE DATABASE ${name}`);
    const url = new URL(process.env.DATABASE_URL!);
    url.pathname = `/${name}`;
    const starters = await Promise.all(Array.from({ length: 10 }, () => openDatabase({ databaseUrl: url.toString(), poolSize: 1 })));
    try {
      const applied = await Promise.all(starters.map((s) => migrate(s.pool)));
      expect(applied.flat().sort()).toEqual(readMigrations().map((m) => `${m.version}_${m.name}`));
      const { rows } = await starters[0]!.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM schema_migrations');
      expect(rows[0]!.n).toBe(readMigrations().length);
    } finally {
      await Promise.all(starters.map((s) => s.close()));
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    }
  }, 120_000);
});

describe('closing a database', () => {
  it('ends its pool even when only the pool was used (a command exits at once, not after the idle timeout)', async () => {
    await database.pool.query('SELECT 1');
    await database.close();
    closed = true;
    expect(database.pool.ending).toBe(true);
  });
});
