/**
 * ARCHITECTURE.md's module map says which module uses which; the "uses" column is generated from the
 * imports (`npm run docs:modules`), so it cannot drift. The module graph's depth — the longest chain
 * of module → module imports — is held at or below its figure: 9 before issue #27, 8 after (the
 * amount formatter moved to the platform, so collections no longer imports documents).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { longestChain, moduleGraph, withModuleMap } from '../../scripts/module-map.mjs';

const file = join(import.meta.dirname, '../../ARCHITECTURE.md');

describe('the module map', () => {
  it('is current (run `npm run docs:modules` after changing which modules a module imports)', () => {
    const text = readFileSync(file, 'utf8');
    expect(text).toBe(withModuleMap(text));
  });

  it('names every module once', () => {
    const text = readFileSync(file, 'utf8');
    for (const m of moduleGraph().keys()) expect(text).toMatch(new RegExp(`^\\| ${m} \\|`, 'm'));
  });

  it('keeps the module graph at most 8 imports deep', () => {
    const { depth, chain } = longestChain(moduleGraph());
    expect(depth, chain.join(' → ')).toBeLessThanOrEqual(8);
  });
});
