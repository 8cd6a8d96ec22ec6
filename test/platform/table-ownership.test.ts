/**
 * Each table belongs to the module whose `<domain>.tables.ts` declares it (issue #27). A module's
 * SQL — Kysely builders and raw `sql` templates alike — names only its own tables, or another's
 * that the owner declared in its `<domain>TableAccess` (read models for reports; the importer's bulk
 * writes); anything else goes through the owner's operations. The job queue's rows are changed only
 * through the queue's API (src/platform/jobs). Declarations nobody uses any more fail too, so the
 * list stays the truth.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TableAccess } from '../../src/platform/db/schema.js';

const root = join(import.meta.dirname, '../..');

function sources(dir: string): string[] {
  return readdirSync(join(root, dir), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.test.ts'))
    .map((e) => relative(root, join(e.parentPath, e.name)));
}

/** `src/modules/<m>/…` → m; `src/platform/<p>/…` → platform/p. */
function unitOf(file: string): string {
  const [, layer, unit] = file.split('/');
  return layer === 'modules' ? unit! : `${layer}/${unit}`;
}

const tablesFiles = [...sources('src/modules'), ...sources('src/platform')].filter((f) => f.endsWith('.tables.ts'));
const owner = new Map<string, string>();
for (const file of tablesFiles) {
  const declared = /interface Tables\s*\{([^}]*)\}/.exec(readFileSync(join(root, file), 'utf8'))?.[1] ?? '';
  for (const [, table] of declared.matchAll(/^\s*(\w+)\s*:/gm)) owner.set(table!, unitOf(file));
}

type Use = { table: string; write: boolean; file: string };
const BUILDER = /\b(selectFrom|insertInto|updateTable|deleteFrom|innerJoin|leftJoin|rightJoin|fullJoin|mergeInto)\(\s*'(\w+)/g;
const RAW = /\b(from|join|update|into)\s+"?(\w+)"?/gi;
const WRITES = new Set(['insertinto', 'updatetable', 'deletefrom', 'mergeinto', 'update', 'into']);

/** The tables a file names, and whether it writes them. `sql.table(x)` counts the quoted table names of x's union type. */
function usesOf(file: string): Use[] {
  const text = readFileSync(join(root, file), 'utf8');
  const uses: Use[] = [];
  const add = (table: string, how: string) => {
    if (owner.has(table)) uses.push({ table, write: WRITES.has(how.toLowerCase()), file });
  };
  for (const m of text.matchAll(BUILDER)) add(m[2]!, m[1]!);
  for (const [, body] of text.matchAll(/\bsql(?:<[^`]*?>)?`([^`]*)`/g)) {
    for (const m of body!.matchAll(RAW)) add(m[2]!, m[1]!);
    if (/\b(INSERT|UPDATE|DELETE)\b[^;]*\$\{\s*(sql\.table|target)/.test(body!)) {
      for (const u of /\b(?:table|tables)\s*:\s*((?:'\w+'\s*\|?\s*)+)/.exec(text)?.[1]?.match(/\w+/g) ?? []) add(u, 'into');
    } else if (/\$\{\s*sql\.table\(/.test(body!)) {
      for (const u of /\btable\s*:\s*((?:'\w+'\s*\|?\s*)+)/.exec(text)?.[1]?.match(/\w+/g) ?? []) add(u, 'from');
    }
  }
  return uses;
}

const access = new Map<string, { read: Set<string>; write: Set<string> }>();
for (const file of tablesFiles) {
  const exports = (await import(join(root, file))) as Record<string, unknown>;
  for (const [name, value] of Object.entries(exports)) {
    if (!name.endsWith('TableAccess')) continue;
    for (const [table, rule] of Object.entries(value as TableAccess)) {
      expect(owner.get(table), `${file} declares access to ${table}, which it does not own`).toBe(unitOf(file));
      access.set(table, { read: new Set(rule?.read ?? []), write: new Set(rule?.write ?? []) });
    }
  }
}

const moduleUses = sources('src/modules').flatMap((file) => usesOf(file).map((u) => ({ ...u, module: unitOf(file) })));

describe('table ownership', () => {
  it('knows the owner of every table (from the *.tables.ts files)', () => {
    expect(owner.get('invoices')).toBe('invoices');
    expect(owner.get('journal_lines')).toBe('ledger');
    expect(owner.get('jobs')).toBe('platform/jobs');
    expect(owner.size).toBeGreaterThan(60);
  });

  it("no module reads or writes another module's tables beyond what the owner declared", () => {
    const undeclared = new Set<string>();
    for (const u of moduleUses) {
      const tableOwner = owner.get(u.table)!;
      if (tableOwner === u.module || tableOwner.startsWith('platform/')) continue;
      const allowed = access.get(u.table)?.[u.write ? 'write' : 'read'];
      if (!allowed?.has(u.module)) undeclared.add(`${u.file} ${u.write ? 'writes' : 'reads'} ${u.table} (owned by ${tableOwner})`);
    }
    expect([...undeclared].sort()).toEqual([]);
  });

  it('every declared access is used (a stale declaration fails)', () => {
    const stale: string[] = [];
    for (const [table, rule] of access) {
      for (const kind of ['read', 'write'] as const) {
        for (const module of rule[kind]) {
          if (!moduleUses.some((u) => u.table === table && u.module === module && u.write === (kind === 'write'))) stale.push(`${module} ${kind} ${table}`);
        }
      }
    }
    expect(stale).toEqual([]);
  });

  // The mail sender (src/platform/mail) still records its deliveries on the job rows itself.
  it("modules, flows and routes use the job queue's rows only through the queue's API", () => {
    const outside = [...sources('src/modules'), ...sources('src/flows'), ...sources('src/api')]
      .flatMap(usesOf)
      .filter((u) => u.table === 'jobs')
      .map((u) => `${u.file} ${u.write ? 'writes' : 'reads'} jobs`);
    expect(outside).toEqual([]);
  });
});
