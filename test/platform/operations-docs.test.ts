import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/** What an operator starts from: the guide's example unit and the README's table of every setting. */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const hasSystemd = spawnSync('systemd-analyze', ['--version']).status === 0;

describe('operations documents', () => {
  it.skipIf(!hasSystemd)('ships a systemd unit that systemd-analyze verify accepts', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kosh-unit-'));
    try {
      copyFileSync(join(ROOT, 'docs', 'kosh.service'), join(dir, 'kosh.service'));
      const result = spawnSync('systemd-analyze', ['verify', join(dir, 'kosh.service')], { encoding: 'utf8' });
      expect(result.status, result.stderr).toBe(0);
      expect(result.stderr.trim()).toBe('');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('names every environment variable Kosh reads in the README configuration table', () => {
    const config = readFileSync(join(ROOT, 'src', 'platform', 'config.ts'), 'utf8');
    const schema = config.slice(config.indexOf('const envSchema'), config.indexOf('});', config.indexOf('const envSchema')));
    const variables = [...schema.matchAll(/^ {2}([A-Z][A-Z0-9_]+):/gm)].map((m) => m[1]!);
    expect(variables.length).toBeGreaterThan(30);
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    expect(variables.filter((name) => !readme.includes(`\`${name}\``))).toEqual([]);
  });

  it('links the production guide from the README', () => {
    expect(readFileSync(join(ROOT, 'README.md'), 'utf8')).toContain('(docs/operations.md)');
  });
});

describe('decision records', () => {
  it('are all in the index, and the index is what `npm run docs:decisions` writes', async () => {
    const { decisionsIndex } = await import('../../scripts/decisions-index.mjs');
    const committed = readFileSync(join(ROOT, 'docs', 'decisions', 'README.md'), 'utf8');
    expect(committed, 'run `npm run docs:decisions`').toBe(decisionsIndex());
  });
});
