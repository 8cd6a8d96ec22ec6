/**
 * A module's index.ts is its interface (issue #27): operations and types, each one named. An
 * `export *` would publish whatever a file happens to export (collections' once published 113
 * symbols); a repository's functions are the module's private access to its own tables. The
 * dependency-cruiser rule `module-index-exports-no-repository` checks the second point on the
 * import graph too (`npm run depcheck`).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const modulesDir = join(import.meta.dirname, '../../src/modules');
const indexes = readdirSync(modulesDir, { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => ({ module: d.name, text: readFileSync(join(modulesDir, d.name, 'index.ts'), 'utf8') }));

describe('module interfaces', () => {
  it('every module has an index.ts', () => {
    expect(indexes.length).toBeGreaterThanOrEqual(30);
  });

  it('no index.ts uses export *', () => {
    const offenders = indexes.filter((i) => /export\s*\*/.test(i.text)).map((i) => i.module);
    expect(offenders).toEqual([]);
  });

  it('no index.ts re-exports a repository function (types only)', () => {
    const offenders: string[] = [];
    for (const { module, text } of indexes) {
      for (const m of text.matchAll(/export\s+(type\s+)?\{([^}]*)\}\s*from\s*'([^']*\.repository)\.js'/g)) {
        if (m[1]) continue;
        const values = m[2]!
          .split(',')
          .map((n) => n.trim())
          .filter((n) => n !== '' && !n.startsWith('type '));
        offenders.push(...values.map((v) => `${module}: ${v} from ${m[3]}`));
      }
    }
    expect(offenders).toEqual([]);
  });
});
