import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { EVENT_TYPES } from './events.catalog.js';

/**
 * docs/events.md must tell the truth. Test files run in separate processes, so no runtime record
 * of emitted types could see them all; instead this reads every `emitEvent(ctx, '<type>', …)` call
 * in src/ and compares it with the doc, both ways.
 */
const root = fileURLToPath(new URL('../../../', import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') && !path.endsWith('.test.ts') ? [path] : [];
  });
}

/** Source without comments (so prose that mentions emitEvent is not a call). */
function code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
}

type Call = { where: string; type: string | null };

/** The arguments of the call whose "(" is at `open`, split at top-level commas. */
function argumentsAt(text: string, open: number): string[] {
  const args: string[] = [];
  let depth = 0;
  let quote: string | null = null;
  let start = open + 1;
  for (let i = open + 1; i < text.length; i++) {
    const c = text[i]!;
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = null;
    } else if (c === "'" || c === '"' || c === '`') quote = c;
    else if ('([{'.includes(c)) depth++;
    else if (')]}'.includes(c)) {
      if (depth === 0) return [...args, text.slice(start, i)];
      depth--;
    } else if (c === ',' && depth === 0) {
      args.push(text.slice(start, i));
      start = i + 1;
    }
  }
  return args;
}

function emitCalls(): Call[] {
  const calls: Call[] = [];
  for (const file of sourceFiles(join(root, 'src'))) {
    const text = code(readFileSync(file, 'utf8'));
    for (const m of text.matchAll(/(?<!function\s+)\bemitEvent\s*\(/g)) {
      const type = argumentsAt(text, m.index + m[0].length - 1)[1]?.trim() ?? '';
      const literal = /^(['"`])([a-z_]+\.[a-z_]+)\1$/.exec(type);
      const line = text.slice(0, m.index).split('\n').length;
      calls.push({ where: `${relative(root, file)}:${line}`, type: literal ? literal[2]! : null });
    }
    // emitEvents(ctx, [{ type: '<type>', object }, …]): each `type:` of the batch names its type.
    for (const m of text.matchAll(/(?<!function\s+)\bemitEvents\s*\(/g)) {
      const argument = argumentsAt(text, m.index + m[0].length - 1)[1] ?? '';
      // A batch built up in a variable (`events.push({ type: 'invoice.paid', … })`): the file's own `type:` literals name its types.
      const variable = /^\s*[A-Za-z_$][\w$]*\s*$/.test(argument);
      const batch = variable ? text : argument;
      const line = text.slice(0, m.index).split('\n').length;
      const types = [...batch.matchAll(/\btype:\s*(['"`])([a-z_]+\.[a-z_]+)\1/g)].map((t) => t[2]!);
      const named = variable ? types.length : (batch.match(/\btype:/g) ?? []).length;
      for (const type of types) calls.push({ where: `${relative(root, file)}:${line}`, type });
      if (named > types.length || named === 0) calls.push({ where: `${relative(root, file)}:${line}`, type: null });
    }
  }
  return calls;
}

function documentedTypes(): Map<string, string> {
  const doc = readFileSync(join(root, 'docs/events.md'), 'utf8');
  const section = doc.split(/^## Event types$/m)[1]!.split(/^## /m)[0]!;
  const rows = new Map<string, string>();
  for (const m of section.matchAll(/^\| `([a-z_]+\.[a-z_]+)` \| (\w+) \|/gm)) {
    expect(rows.has(m[1]!), `${m[1]} is listed twice in docs/events.md`).toBe(false);
    rows.set(m[1]!, m[2]!);
  }
  return rows;
}

describe('docs/events.md', () => {
  const calls = emitCalls();
  const documented = documentedTypes();
  const emitted = new Set(calls.map((c) => c.type).filter((t): t is string => t !== null));

  it('finds the emitEvent calls (the scan itself works)', () => {
    expect(calls.find((c) => c.where.startsWith('src/modules/plans/plans.service.ts'))?.type).toBe('plan.created');
  });

  it('sees every emitted type, because each emitEvent call names its type as a string literal', () => {
    expect(calls.filter((c) => c.type === null).map((c) => c.where)).toEqual([]);
  });

  it('documents every type emitted in src/', () => {
    const missing = calls.filter((c) => c.type !== null && !documented.has(c.type)).map((c) => `${c.type} (${c.where})`);
    expect(missing, 'add these to docs/events.md and src/modules/events/events.catalog.ts').toEqual([]);
  });

  it("marks a type 'emitted' only when something emits it", () => {
    const claimed = [...documented].filter(([type, status]) => status === 'emitted' && !emitted.has(type)).map(([type]) => type);
    expect(claimed, "nothing emits these; mark them 'planned'").toEqual([]);
  });

  it("uses only the statuses 'emitted' and 'planned'", () => {
    expect([...new Set(documented.values())].filter((s) => s !== 'emitted' && s !== 'planned')).toEqual([]);
  });

  it('lists exactly the types the API accepts (events.catalog.ts)', () => {
    expect([...documented.keys()].sort()).toEqual([...EVENT_TYPES].sort());
  });
});
