import { cpSync, existsSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readMigrations } from './migrate.js';

/**
 * The embedded database's first start without initdb (decision 0037): the build (`npm install`'s
 * `prepare`, or `kosh` after a change) creates a PGlite data directory with every migration
 * applied, once, in `dist/pglite-template/`. A fresh data directory is a copy of it — a file copy
 * instead of PGlite's initdb and two dozen migrations (most of a first start's time). The template
 * records the migrations it holds with their checksums; one that no longer matches its file means
 * the template is not used (initdb and the migrations run as before). Newer migrations than the
 * template's apply on top of the copy as on any existing database.
 */
export const TEMPLATE_DIR = join(dirname(fileURLToPath(import.meta.url)), '../../../dist/pglite-template');

export type TemplateManifest = { migrations: { version: string; checksum: string }[] };

/** Whether the template exists and every migration in it is still the file of that version. */
export function templateUsable(dir = TEMPLATE_DIR): boolean {
  let manifest: TemplateManifest;
  try {
    manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as TemplateManifest;
  } catch {
    return false;
  }
  if (!existsSync(join(dir, 'pgdata', 'PG_VERSION'))) return false;
  const files = new Map(readMigrations().map((m) => [m.version, m.checksum]));
  return manifest.migrations.every((m) => files.get(m.version) === m.checksum);
}

/** Fills a data directory that has no database yet from the template; false when it cannot. */
export function seedFromTemplate(pgdata: string, dir = TEMPLATE_DIR): boolean {
  if (existsSync(join(pgdata, 'PG_VERSION')) || !templateUsable(dir)) return false;
  rmSync(pgdata, { recursive: true, force: true });
  cpSync(join(dir, 'pgdata'), pgdata, { recursive: true });
  return true;
}
