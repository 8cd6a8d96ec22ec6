import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openDatabase } from './database.js';
import { migrate, readMigrations } from './migrate.js';
import { TEMPLATE_DIR, type TemplateManifest } from './pglite-template.js';

/** Builds the template: a fresh PGlite data directory with every migration applied. */
export async function buildPgliteTemplate(dir = TEMPLATE_DIR): Promise<void> {
  const work = mkdtempSync(`${dir}-build-`);
  try {
    const database = await openDatabase({ dataDir: work, template: false });
    try {
      await migrate(database.pool);
    } finally {
      await database.close();
    }
    const manifest: TemplateManifest = { migrations: readMigrations().map((m) => ({ version: m.version, checksum: m.checksum })) };
    writeFileSync(join(work, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
    rmSync(join(work, 'kosh.lock'), { force: true });
    rmSync(dir, { recursive: true, force: true });
    renameSync(work, dir);
  } catch (error) {
    rmSync(work, { recursive: true, force: true });
    throw error;
  }
}
