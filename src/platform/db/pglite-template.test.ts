import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from './database.js';
import { migrate, readMigrations } from './migrate.js';
import { buildPgliteTemplate } from './build-template.js';
import { seedFromTemplate, templateUsable } from './pglite-template.js';

/** The embedded database's start-up template (decision 0037): a fresh data directory copies it. */
let root: string;
let template: string;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'kosh-template-test-'));
  template = join(root, 'template');
  await buildPgliteTemplate(template);
}, 300_000);
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('PGlite template', () => {
  it('holds every migration, named with its checksum', () => {
    expect(templateUsable(template)).toBe(true);
    const manifest = JSON.parse(readFileSync(join(template, 'manifest.json'), 'utf8'));
    expect(manifest.migrations).toEqual(readMigrations().map((m) => ({ version: m.version, checksum: m.checksum })));
    expect(existsSync(join(template, 'kosh.lock'))).toBe(false);
  });

  it('seeds a fresh data directory: every migration is already recorded and the schema is there', async () => {
    const dataDir = join(root, 'fresh');
    expect(seedFromTemplate(join(dataDir, 'pgdata'), template)).toBe(true);
    const database = await openDatabase({ dataDir, template: false });
    try {
      expect(await migrate(database.pool)).toEqual([]);
      const { rows } = await database.pool.query<{ n: string }>(
        "SELECT count(*) AS n FROM information_schema.columns WHERE table_name = 'accounting_sync_records' AND column_name = 'create_started_at'",
      );
      expect(Number(rows[0]!.n)).toBe(1);
    } finally {
      await database.close();
    }
    // An existing database is never overwritten.
    expect(seedFromTemplate(join(dataDir, 'pgdata'), template)).toBe(false);
  }, 120_000);

  it('is not used when a migration it holds no longer matches its file', () => {
    const manifest = JSON.parse(readFileSync(join(template, 'manifest.json'), 'utf8'));
    manifest.migrations[0].checksum = '0'.repeat(64);
    writeFileSync(join(template, 'manifest.json'), JSON.stringify(manifest));
    expect(templateUsable(template)).toBe(false);
    expect(seedFromTemplate(join(root, 'other', 'pgdata'), template)).toBe(false);
    expect(existsSync(join(root, 'other', 'pgdata'))).toBe(false);
  });
});
