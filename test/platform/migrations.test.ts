import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openTestDatabase } from '../support/database.js';
import { migrate, readMigrations } from '../../src/platform/db/migrate.js';
import type { Database } from '../../src/platform/db/database.js';

/** DESIGN §2: numbered SQL files, applied once, recorded, never edited once landed. */

let database: Database;
let dir: string;

beforeAll(async () => {
  database = await openTestDatabase(); // already migrated with the real migrations/
});
afterAll(() => database?.close());
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
});
