import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

/**
 * No function in src/ is above complexity 25 (issue #27): linted with inline configuration off, so
 * no comment (`eslint-disable… complexity`, a blanket `eslint-disable`, `eslint complexity: …`)
 * can switch the limit off. `npm run lint` reports such comments too (kosh/no-complexity-override).
 */
describe('complexity limit', () => {
  it('holds for every function in src/, whatever its comments say', async () => {
    const eslint = new ESLint({
      overrideConfig: { linterOptions: { noInlineConfig: true, reportUnusedDisableDirectives: 'off' } },
      ruleFilter: ({ ruleId }) => ruleId === 'complexity',
    });
    const results = await eslint.lintFiles(['src/**/*.ts']);
    const over = results.flatMap((r) => r.messages.filter((m) => m.ruleId === 'complexity').map((m) => `${r.filePath}:${m.line} ${m.message}`));
    expect(over).toEqual([]);
    expect(results.length).toBeGreaterThan(100);
  }, 300_000);
});
