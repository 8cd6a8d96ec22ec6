import { createReadStream, statSync } from 'node:fs';
import { parse } from 'csv-parse/sync';
import type { ImportSource, Section, SourceItem } from './import-source.js';
import { csvColumns, fromCsvRecord } from './importer.schemas.js';

/**
 * The three-CSV form of an import: one file per section, a header row naming the columns
 * (importer.schemas.ts, `csvColumns`), RFC 4180 quoting.
 *
 * Records are cut from the stream by quote parity (a line break ends a record unless a quoted field
 * is open), each record's quoting is checked on its own, and csv-parse parses the well-formed ones
 * a thousand at a time. So a malformed record is one failed row with its line number and the rest
 * of the file is still read — csv-parse's own error skipping lost the valid rows after a bad quote
 * when it was tried. A quote that is never closed swallows at most MAX_RECORD_LINES lines before it
 * is reported and reading resumes on the line after it.
 */

const MAX_RECORD_LINES = 100;
const MAX_RECORD_CHARS = 64 * 1024;
const PARSE_BATCH = 1000;
/** Fields separated by commas, each either unquoted (no quote in it) or wholly quoted with "" inside. */
const WELL_FORMED = /^(?:"(?:[^"]|"")*"|[^",]*)(?:,(?:"(?:[^"]|"")*"|[^",]*))*$/;

type RawRecord = { line: number; text: string };
type Pending = { line: number; lines: string[]; odd: boolean; chars: number };

function quoteCount(line: string): number {
  let count = 0;
  for (let at = line.indexOf('"'); at !== -1; at = line.indexOf('"', at + 1)) count++;
  return count;
}

/** Cuts a stream of lines into records; reports (and recovers from) a quote that never closes. */
class RecordSplitter {
  private pending: Pending | null = null;

  constructor(private readonly emit: (item: RawRecord | { line: number; unclosed: true }) => void) {}

  line(line: number, text: string): void {
    const queue: [number, string][] = [[line, text]];
    while (queue.length) {
      const [at, current] = queue.shift()!;
      const odd = quoteCount(current) % 2 === 1;
      const pending = this.pending;
      if (pending) {
        pending.lines.push(current);
        pending.chars += current.length + 1;
        pending.odd = pending.odd !== odd;
        if (!pending.odd) {
          this.pending = null;
          this.emit({ line: pending.line, text: pending.lines.join('\n') });
        } else if (pending.lines.length > MAX_RECORD_LINES || pending.chars > MAX_RECORD_CHARS) {
          queue.unshift(...this.giveUp(pending));
        }
        continue;
      }
      if (current === '') continue;
      if (odd) this.pending = { line: at, lines: [current], odd: true, chars: current.length };
      else this.emit({ line: at, text: current });
    }
  }

  end(): void {
    while (this.pending) {
      const rest = this.giveUp(this.pending);
      for (const [at, text] of rest) this.line(at, text);
    }
  }

  /** Reports the unclosed quote and hands back the lines after its own, to be read again. */
  private giveUp(pending: Pending): [number, string][] {
    this.pending = null;
    this.emit({ line: pending.line, unclosed: true });
    return pending.lines.slice(1).map((text, k) => [pending.line + 1 + k, text]);
  }
}

async function* csvRecords(path: string, onProgress?: (bytes: number) => void): AsyncGenerator<RawRecord | { line: number; unclosed: true }> {
  const out: (RawRecord | { line: number; unclosed: true })[] = [];
  const splitter = new RecordSplitter((item) => out.push(item));
  const stream = createReadStream(path, { encoding: 'utf8', highWaterMark: 256 * 1024 });
  let carry = '';
  let line = 0;
  try {
    for await (const chunk of stream) {
      const text = carry + (chunk as string);
      let from = 0;
      for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', from)) {
        line++;
        let current = text.slice(from, nl);
        if (current.endsWith('\r')) current = current.slice(0, -1);
        if (line === 1 && current.startsWith('\uFEFF')) current = current.slice(1);
        splitter.line(line, current);
        from = nl + 1;
      }
      carry = text.slice(from);
      onProgress?.(stream.bytesRead);
      yield* out.splice(0);
    }
    if (carry !== '') {
      line++;
      splitter.line(line, carry.endsWith('\r') ? carry.slice(0, -1) : carry);
    }
    splitter.end();
    yield* out.splice(0);
  } finally {
    stream.destroy();
  }
}

/** csv-parse over well-formed records, many at once; one at a time if a batch ever disagrees. */
function parseRecords(records: RawRecord[]): string[][] {
  const options = { relax_column_count: true, relax_quotes: false, skip_empty_lines: false } as const;
  try {
    const fields = parse(records.map((r) => r.text).join('\n'), options) as string[][];
    if (fields.length === records.length) return fields;
  } catch {
    // fall through to one at a time
  }
  return records.map((r) => (parse(r.text, options) as string[][])[0] ?? []);
}

async function* readCsvSection(section: Section, path: string, onProgress?: (bytes: number) => void): AsyncGenerator<SourceItem> {
  const { required, optional } = csvColumns[section];
  const known = new Set<string>([...required, ...optional]);
  const keyColumn = required[0]!; // the matching key comes first
  let header: string[] | null = null;
  let index = 0;
  let batch: RawRecord[] = [];

  function* flush(): Generator<SourceItem> {
    if (batch.length === 0) return;
    const parsed = parseRecords(batch);
    for (let k = 0; k < batch.length; k++) {
      const { line } = batch[k]!;
      const fields = parsed[k]!;
      const at = index++;
      const record: Record<string, string> = {};
      header!.forEach((name, c) => (record[name] = fields[c] ?? ''));
      if (fields.length !== header!.length) {
        const what = fields.length > header!.length ? 'extra' : 'missing';
        const key = record[keyColumn] || undefined;
        yield {
          type: 'problem',
          scope: 'row',
          line,
          index: at,
          ...(key ? { key } : {}),
          message: `${what} columns: the row has ${fields.length} fields, the header has ${header!.length}`,
        };
        continue;
      }
      yield { type: 'row', value: fromCsvRecord(section, record), line, index: at };
    }
    batch = [];
  }

  for await (const item of csvRecords(path, onProgress)) {
    if ('unclosed' in item) {
      yield* flush();
      yield {
        type: 'problem',
        scope: 'row',
        line: item.line,
        index: index++,
        message: `a quoted field opened on line ${item.line} is never closed; the lines after it were read as new rows`,
      };
      continue;
    }
    if (!WELL_FORMED.test(item.text)) {
      yield* flush();
      if (!header) {
        yield { type: 'problem', scope: 'section', line: item.line, message: 'malformed quoting in the header row' };
        return;
      }
      yield {
        type: 'problem',
        scope: 'row',
        line: item.line,
        index: index++,
        message: 'malformed quoting: a field containing a quote must be wholly in double quotes, with quotes inside it doubled ("")',
      };
      continue;
    }
    if (!header) {
      header = parseRecords([item])[0]!.map((name) => name.trim());
      const unknown = header.filter((name) => !known.has(name));
      const missing = required.filter((name) => !header!.includes(name));
      const twice = header.filter((name, k) => header!.indexOf(name) !== k);
      const problems = [
        ...(missing.length ? [`missing column${missing.length > 1 ? 's' : ''} ${missing.join(', ')}`] : []),
        ...(unknown.length ? [`unknown column${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')} (known: ${[...known].join(', ')})`] : []),
        ...(twice.length ? [`column${twice.length > 1 ? 's' : ''} named twice: ${twice.join(', ')}`] : []),
      ];
      if (problems.length) {
        yield { type: 'problem', scope: 'section', line: item.line, message: `header row: ${problems.join('; ')}; the file was not read` };
        return;
      }
      continue;
    }
    batch.push(item);
    if (batch.length >= PARSE_BATCH) yield* flush();
  }
  yield* flush();
  if (!header) yield { type: 'problem', scope: 'section', line: 1, message: 'the file is empty: it needs a header row' };
}

/** Up to three CSV files, one per section; a section without a file is empty. */
export function csvFileSource(files: Partial<Record<Section, string>>): ImportSource {
  const sizes = Object.fromEntries(Object.entries(files).map(([section, path]) => [section, statSync(path).size])) as Partial<Record<Section, number>>;
  return {
    size: (section) => sizes[section] ?? 0,
    async *read(section, onProgress) {
      const path = files[section];
      if (!path) return;
      const totalBytes = sizes[section] ?? 0;
      yield* readCsvSection(section, path, onProgress && ((bytes) => onProgress({ bytes, totalBytes })));
    },
  };
}
