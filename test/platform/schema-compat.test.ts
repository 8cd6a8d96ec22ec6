import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * Expand-then-contract (CONTRIBUTING, "Migrations"; decision 0325): during a rolling upgrade the
 * previous release runs on the new schema, so a migration may add but not take away. Every
 * statement of a migration after FIRST_CHECKED that drops, renames, retypes or tightens something
 * must say why the previous release does not depend on it, in a `-- contract:` comment right above
 * it — a reviewer reads that line. Migrations up to FIRST_CHECKED predate the rule.
 */
const MIGRATIONS = fileURLToPath(new URL('../../migrations', import.meta.url));
const FIRST_CHECKED = 271;
/**
 * Landed before this check, with what they break during a rolling upgrade (they cannot be edited):
 * the upgrade notes must say so.
 */
const LANDED_BEFORE_THE_CHECK: Record<string, string> = {
  // legal_entities.functional_currency SET NOT NULL without a default; migration 0396's trigger,
  // applied in the same `kosh migrate`, fills it on the previous release's inserts.
  '0290_functional_currency.sql': 'makes a column NOT NULL',
};

const CONTRACTING: [RegExp, string][] = [
  [/\bDROP\s+COLUMN\b/i, 'drops a column'],
  [/\bRENAME\s+COLUMN\b/i, 'renames a column'],
  [/\bALTER\s+TABLE\s+(IF\s+EXISTS\s+)?[\w."]+\s+RENAME\s+TO\b/i, 'renames a table'],
  [/\bDROP\s+TABLE\b/i, 'drops a table'],
  [/\bDROP\s+TYPE\b/i, 'drops a type'],
  [/\bALTER\s+COLUMN\s+[\w"]+\s+(SET\s+DATA\s+)?TYPE\b/i, "changes a column's type"],
  [/\bALTER\s+COLUMN\s+[\w"]+\s+SET\s+NOT\s+NULL\b/i, 'makes a column NOT NULL'],
  [/\bADD\s+COLUMN\b(?:(?!\bDEFAULT\b)[^,])*\bNOT\s+NULL\b(?:(?!\bDEFAULT\b)[^,])*$/i, 'adds a NOT NULL column that has no default'],
];

/** Statements of a migration with the comment lines just above each ($$ bodies kept whole). */
export function statements(text: string): { sql: string; comments: string }[] {
  const out: { sql: string; comments: string }[] = [];
  let comments = '';
  let current = '';
  let inDollar = false;
  for (const line of text.split('\n')) {
    const trimmed = line.trim();
    if (!inDollar && current === '') {
      // Between statements: comment lines gather; a blank line ends a comment block.
      if (trimmed.startsWith('--')) comments += `${trimmed}\n`;
      else if (trimmed === '') comments = '';
      if (trimmed.startsWith('--') || trimmed === '') continue;
    }
    current += `${line.replace(/--.*$/, '')}\n`;
    if ((line.match(/\$\$/g) ?? []).length % 2 === 1) inDollar = !inDollar;
    if (!inDollar && trimmed.endsWith(';')) {
      out.push({ sql: current.replace(/\s+/g, ' ').trim(), comments });
      current = '';
      comments = '';
    }
  }
  return out;
}

export function contractViolations(name: string, text: string): string[] {
  const found: string[] = [];
  for (const { sql, comments } of statements(text)) {
    if (/\bDO\s+\$\$/i.test(sql)) continue; // procedural blocks create partitions and the like
    for (const clause of sql.split(/,(?![^(]*\))/)) {
      for (const [pattern, what] of CONTRACTING) {
        if (pattern.test(clause) && !/--\s*contract:/i.test(comments)) found.push(`${name}: ${what} without a "-- contract:" reason: ${sql.slice(0, 160)}`);
      }
    }
  }
  return [...new Set(found)];
}

describe('migrations are expand-then-contract', () => {
  it('every contracting statement since the rule carries a "-- contract:" reason', () => {
    const files = readdirSync(MIGRATIONS).filter((f) => /^\d{4}_.*\.sql$/.test(f) && Number(f.slice(0, 4)) >= FIRST_CHECKED);
    expect(files.length).toBeGreaterThan(0);
    const violations = files
      .flatMap((f) => contractViolations(f, readFileSync(join(MIGRATIONS, f), 'utf8')))
      .filter((v) => !Object.entries(LANDED_BEFORE_THE_CHECK).some(([file, what]) => v.startsWith(`${file}: ${what} `)));
    expect(violations).toEqual([]);
  });

  it('finds what it must: drops, renames, retypes and NOT NULL without a default', () => {
    const sample = [
      'ALTER TABLE invoices DROP COLUMN memo;',
      'ALTER TABLE invoices RENAME COLUMN memo TO note;',
      'ALTER TABLE invoices RENAME TO bills;',
      'DROP TABLE quotes;',
      'ALTER TABLE invoices ALTER COLUMN total TYPE numeric;',
      'ALTER TABLE invoices ALTER COLUMN memo SET NOT NULL;',
      'ALTER TABLE invoices ADD COLUMN kind text NOT NULL;',
      'ALTER TABLE invoices ADD COLUMN a text, ADD COLUMN b int NOT NULL DEFAULT 0;',
      '-- contract: nothing reads legacy_flag since release 0.1.0\nALTER TABLE invoices DROP COLUMN legacy_flag;',
      'CREATE INDEX invoices_kind ON invoices (kind);',
    ].join('\n\n');
    expect(contractViolations('sample.sql', sample).map((v) => v.split(' without')[0])).toEqual([
      'sample.sql: drops a column',
      'sample.sql: renames a column',
      'sample.sql: renames a table',
      'sample.sql: drops a table',
      "sample.sql: changes a column's type",
      'sample.sql: makes a column NOT NULL',
      'sample.sql: adds a NOT NULL column that has no default',
    ]);
  });
});
