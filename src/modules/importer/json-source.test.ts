import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Section, SourceItem } from './import-source.js';
import { JsonSectionScanner, jsonFileSource } from './json-source.js';

/** Every item the scanner gives for `section` when the text arrives in pieces of `size` characters. */
function scan(text: string, section: Section, size = text.length): SourceItem[] {
  const scanner = new JsonSectionScanner(section, true);
  const items: SourceItem[] = [];
  for (let at = 0; at < text.length; at += size) items.push(...scanner.feed(text.slice(at, at + size)));
  return [...items, ...scanner.finish()];
}

const tricky = `\uFEFF{
  "subscriptions": [{ "external_id": "s1" }],
  "plans": [
    { "code": "a", "name": "brackets ] } [ { and \\"quotes\\" and \\\\", "tags": [[1], {"x": []}] },
    { "code": "b" }
  ],
  "customers": [ ]
}`;

describe('import JSON reader', () => {
  it.each([1, 2, 7, 64, 100_000])('reads a section whatever the chunk size (%i characters)', (size) => {
    expect(scan(tricky, 'plans', size)).toEqual([
      { type: 'row', index: 0, line: 4, value: { code: 'a', name: 'brackets ] } [ { and "quotes" and \\', tags: [[1], { x: [] }] } },
      { type: 'row', index: 1, line: 5, value: { code: 'b' } },
    ]);
    expect(scan(tricky, 'subscriptions', size)).toEqual([{ type: 'row', index: 0, line: 2, value: { external_id: 's1' } }]);
    expect(scan(tricky, 'customers', size)).toEqual([]);
  });

  it('treats an absent or null section as empty', () => {
    expect(scan('{"plans": null}', 'plans')).toEqual([]);
    expect(scan('{"plans": []}', 'customers')).toEqual([]);
    expect(scan('{}', 'subscriptions')).toEqual([]);
  });

  it.each([
    [
      'an element that is not valid JSON is one bad row',
      '{"plans": [{"a": 1}, {"b": tru}, {"c": 3}]}',
      [
        { type: 'row', index: 0, line: 1, value: { a: 1 } },
        { type: 'problem', scope: 'row', index: 1, line: 1, message: expect.stringMatching(/^malformed JSON: /) },
        { type: 'row', index: 2, line: 1, value: { c: 3 } },
      ],
    ],
    [
      'elements need not be objects (the schema says what is wrong)',
      '{"plans": [1, "x", null]}',
      [
        { type: 'row', index: 0, line: 1, value: 1 },
        { type: 'row', index: 1, line: 1, value: 'x' },
        { type: 'row', index: 2, line: 1, value: null },
      ],
    ],
    [
      'an unknown section is reported once and stepped over',
      '{"plan": [{"a": 1}], "plans": [{"b": 2}]}',
      [
        { type: 'problem', scope: 'row', line: 1, message: expect.stringContaining('unknown section "plan"') },
        { type: 'row', index: 0, line: 1, value: { b: 2 } },
      ],
    ],
    [
      'a section that is not an array',
      '{"plans": {"code": "a"}}',
      [{ type: 'problem', scope: 'section', line: 1, message: '"plans" must be an array of records' }],
    ],
    [
      'a section given twice',
      '{"plans": [{"a": 1}], "plans": [{"b": 2}]}',
      [
        { type: 'row', index: 0, line: 1, value: { a: 1 } },
        { type: 'problem', scope: 'row', line: 1, message: 'section "plans" appears twice; only the first was read' },
      ],
    ],
  ] as const)('%s', (_name, text, expected) => {
    expect(scan(text, 'plans')).toEqual(expected);
  });

  it.each([
    ['a mismatched bracket', '{"plans": [\n{"a": [1}\n]}', 2, '"}" does not close "["'],
    ['a trailing comma', '{"plans": [{"a": 1},\n]}', 2, 'a comma before "]"'],
    ['a missing comma between elements', '{"plans": [{"a": 1}\n{"b": 2}]}', 2, 'expected "," or "]"'],
    ['a document that is not an object', '[{"a": 1}]', 1, 'the document must be an object'],
    ['text after the document', '{"plans": []} x', 1, 'unexpected text after the end'],
    ['a document cut short', '{"plans": [{"a": 1}', 1, 'ends before it is complete'],
    ['an empty file', '  \n', 2, 'the file is empty'],
  ])('stops at %s, naming the line', (_name, text, line, message) => {
    const problems = scan(text, 'plans').filter((item) => item.type === 'problem');
    expect(problems).toEqual([{ type: 'problem', scope: 'file', line, message: expect.stringContaining(message) }]);
    expect(problems[0]!.message).toMatch(new RegExp(`^malformed JSON on line ${line}: `));
  });

  describe('on disk', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kosh-json-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it('streams a file larger than its read buffer, reporting progress in bytes', async () => {
      const path = join(dir, 'big.json');
      const customers = Array.from({ length: 20_000 }, (_, i) => JSON.stringify({ email: `c${i}@example.test`, name: `Customer ${i} ✓` }));
      writeFileSync(path, `{"customers": [\n${customers.join(',\n')}\n]}`);
      const source = jsonFileSource(path);
      const progress: number[] = [];
      let count = 0;
      let last: SourceItem | undefined;
      for await (const item of source.read('customers', (p) => progress.push(p.bytes))) {
        count++;
        last = item;
      }
      expect(count).toBe(20_000);
      expect(last).toEqual({ type: 'row', index: 19_999, line: 20_001, value: { email: 'c19999@example.test', name: 'Customer 19999 ✓' } });
      expect(progress.length).toBeGreaterThan(1);
      expect(progress.at(-1)).toBe(source.size('customers'));
    });
  });
});
