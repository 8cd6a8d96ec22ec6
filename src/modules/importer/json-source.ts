import { createReadStream, statSync } from 'node:fs';
import { SECTIONS, type ImportSource, type Section, type SourceItem } from './import-source.js';

/**
 * A streaming reader for the one JSON shape the importer takes:
 * `{ "plans": [ {...}, ... ], "customers": [ ... ], "subscriptions": [ ... ] }`.
 *
 * It scans the text once per section asked for (up to the end of that section, except the last
 * pass, which checks the whole document) and hands out that section's elements one at a time,
 * parsing only those (JSON.parse of each element's own text); the elements of the other
 * sections are stepped over without being parsed. Memory is one chunk plus one element, whatever
 * the size of the file. Brackets and strings are tracked, so an element that is not valid JSON
 * (`{"a": tru}`) is one bad row and the reader carries on with the next; only a broken structure
 * (a mismatched bracket, text where a comma belongs) stops it, with the line where it happened.
 */

const WS = new Set([0x20, 0x09, 0x0a, 0x0d]);
const SECTION_NAMES: ReadonlySet<string> = new Set(SECTIONS);

type Capture = 'key' | 'element' | 'value';
type State = 'doc' | 'key-or-close' | 'key-start' | 'colon' | 'value' | 'elements-first' | 'elements-next' | 'element' | 'after-value' | 'end';

class StructureError extends Error {
  constructor(
    message: string,
    readonly line: number,
  ) {
    super(message);
  }
}

/** The scanner. `feed` each decoded chunk, then `finish`; items for `wanted` come out of both. */
export class JsonSectionScanner {
  private buf = '';
  private i = 0;
  private line = 1;
  private state: State = 'doc';
  private key = '';
  private readonly sectionsSeen = new Set<string>();
  /** The top-level value being read is the wanted section's array. */
  private inWanted = false;
  private index = 0;
  /** Once a structural error has been reported the rest of the text means nothing. */
  halted = false;
  /** The wanted section has been read to its end. */
  wantedDone = false;
  // The value being captured: where it starts in `buf`, on which line, and what it is for.
  private capture: Capture | null = null;
  /** The value being captured is a section that is not an array (reported when it is the wanted one). */
  private notAnArray = false;
  private capStart = 0;
  private capLine = 0;
  private stack: number[] = [];
  private inString = false;
  private escaped = false;
  private scalar = false;

  constructor(
    private readonly wanted: Section,
    /** Report problems of the document as a whole (unknown keys); one pass of several should. */
    readonly documentProblems: boolean,
  ) {}

  feed(chunk: string): SourceItem[] {
    // Keep only what is still needed: the value being captured, else nothing before `i`.
    const keep = this.capture ? this.capStart : this.i;
    this.buf = this.buf.slice(keep) + chunk;
    this.i -= keep;
    this.capStart -= keep;
    const out: SourceItem[] = [];
    try {
      this.scan(out);
    } catch (error) {
      if (!(error instanceof StructureError)) throw error;
      out.push({
        type: 'problem',
        scope: 'file',
        line: error.line,
        message: `malformed JSON on line ${error.line}: ${error.message}; nothing after it was read`,
      });
      this.state = 'end';
      this.buf = '';
      this.i = 0;
      this.capture = null;
      this.halted = true;
    }
    return out;
  }

  finish(): SourceItem[] {
    if (this.halted || this.state === 'end') return [];
    const message = this.state === 'doc' ? 'the file is empty' : 'the document ends before it is complete (an unclosed bracket or string?)';
    return [{ type: 'problem', scope: 'file', line: this.line, message: `malformed JSON on line ${this.line}: ${message}` }];
  }

  private fail(message: string): never {
    throw new StructureError(message, this.line);
  }

  private scan(out: SourceItem[]): void {
    const n = this.buf.length;
    while (this.i < n) {
      if (this.capture) {
        if (!this.scanCapture(out)) return; // needs more text
        continue;
      }
      if (this.skipBlank()) continue;
      this.step(this.buf[this.i]!, out);
    }
  }

  /** Steps over whitespace (counting lines) and a byte-order mark at the start; false on anything else. */
  private skipBlank(): boolean {
    const c = this.buf.charCodeAt(this.i);
    if (WS.has(c)) {
      if (c === 0x0a) this.line++;
      this.i++;
      return true;
    }
    if (c === 0xfeff && this.state === 'doc' && this.i === 0) {
      this.i++;
      return true;
    }
    return false;
  }

  /** One structural character, read in the current state. */
  private step(ch: string, out: SourceItem[]): void {
    switch (this.state) {
      case 'doc':
        if (ch !== '{') this.fail('the document must be an object { "plans": [...], "customers": [...], "subscriptions": [...] }');
        this.state = 'key-or-close';
        this.i++;
        break;
      case 'key-or-close':
      case 'key-start':
        this.stepKey(ch);
        break;
      case 'colon':
        if (ch !== ':') this.fail(`expected ":" after "${this.key}", found ${JSON.stringify(ch)}`);
        this.state = 'value';
        this.i++;
        break;
      case 'value':
        this.startValue(ch, out);
        break;
      case 'elements-first':
      case 'elements-next':
      case 'element':
        this.stepElements(ch);
        break;
      case 'after-value':
        if (ch === ',') this.state = 'key-start';
        else if (ch === '}') this.state = 'end';
        else this.fail(`expected "," or "}" after the value of "${this.key}", found ${JSON.stringify(ch)}`);
        this.i++;
        break;
      case 'end':
        this.fail('unexpected text after the end of the document');
    }
  }

  /** A section name starts (or, where allowed, the document closes). */
  private stepKey(ch: string): void {
    if (ch === '}' && this.state === 'key-or-close') {
      this.state = 'end';
      this.i++;
    } else if (ch === '"') {
      this.startCapture('key');
    } else {
      this.fail(`expected a section name in double quotes, found ${JSON.stringify(ch)}`);
    }
  }

  /** Inside a section's array: an element starts, a comma separates, or the array closes. */
  private stepElements(ch: string): void {
    if (this.state === 'elements-first') {
      if (ch === ']') {
        this.endSection();
        this.i++;
      } else {
        this.startCapture('element');
      }
    } else if (this.state === 'elements-next') {
      if (ch === ',') this.state = 'element';
      else if (ch === ']') this.endSection();
      else this.fail(`expected "," or "]" after element ${this.index - 1} of "${this.key}", found ${JSON.stringify(ch)}`);
      this.i++;
    } else {
      if (ch === ']') this.fail(`a comma before "]" in "${this.key}" (trailing commas are not JSON)`);
      this.startCapture('element');
    }
  }

  private startValue(ch: string, out: SourceItem[]): void {
    const key = this.key;
    this.notAnArray = false;
    if (SECTION_NAMES.has(key)) {
      if (this.sectionsSeen.has(key)) {
        if (this.documentProblems)
          out.push({ type: 'problem', scope: 'row', line: this.line, message: `section "${key}" appears twice; only the first was read` });
        this.startCapture('value');
        return;
      }
      this.sectionsSeen.add(key);
      if (ch === '[') {
        this.inWanted = key === this.wanted;
        this.index = 0;
        this.state = 'elements-first';
        this.i++;
        return;
      }
      // null means "none"; anything else is reported when its section is read.
      this.notAnArray = true;
      this.startCapture('value');
      return;
    }
    if (this.documentProblems) {
      out.push({
        type: 'problem',
        scope: 'row',
        line: this.line,
        message: `unknown section "${key}" (expected plans, customers, subscriptions); it was not read`,
      });
    }
    this.startCapture('value');
  }

  private endSection(): void {
    if (this.inWanted) this.wantedDone = true;
    this.inWanted = false;
    this.state = 'after-value';
  }

  private startCapture(kind: Capture): void {
    const c = this.buf.charCodeAt(this.i);
    this.capture = kind;
    this.capStart = this.i;
    this.capLine = this.line;
    this.stack = [];
    this.inString = false;
    this.escaped = false;
    this.scalar = false;
    if (c === 0x7b || c === 0x5b) this.stack.push(c);
    else if (c === 0x22) this.inString = true;
    else this.scalar = true;
    this.i++;
  }

  /** Advances through the captured value; true once it is complete (and handled). */
  private scanCapture(out: SourceItem[]): boolean {
    const buf = this.buf;
    const n = buf.length;
    let i = this.i;
    while (i < n) {
      const c = buf.charCodeAt(i);
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (c === 0x5c) this.escaped = true;
        else if (c === 0x22) {
          this.inString = false;
          if (this.stack.length === 0) {
            this.i = i + 1;
            this.completeCapture(i + 1, out);
            return true;
          }
        } else if (c === 0x0a) this.line++;
        i++;
        continue;
      }
      if (this.scalar) {
        if (c === 0x2c || c === 0x5d || c === 0x7d || WS.has(c)) {
          this.i = i;
          this.completeCapture(i, out);
          return true;
        }
        i++;
        continue;
      }
      if (c === 0x22) this.inString = true;
      else if (c === 0x7b || c === 0x5b) this.stack.push(c);
      else if (c === 0x7d || c === 0x5d) {
        const open = this.stack.pop();
        if ((c === 0x7d && open !== 0x7b) || (c === 0x5d && open !== 0x5b)) {
          this.i = i;
          this.fail(`"${String.fromCharCode(c)}" does not close "${open === undefined ? '' : String.fromCharCode(open)}"`);
        }
        if (this.stack.length === 0) {
          this.i = i + 1;
          this.completeCapture(i + 1, out);
          return true;
        }
      } else if (c === 0x0a) this.line++;
      i++;
    }
    this.i = i;
    return false;
  }

  private completeCapture(end: number, out: SourceItem[]): void {
    const kind = this.capture!;
    this.capture = null;
    if (kind === 'key') {
      this.key = JSON.parse(this.buf.slice(this.capStart, end)) as string;
      this.state = 'colon';
      return;
    }
    if (kind === 'value') {
      if (this.notAnArray && this.key === this.wanted && this.buf.slice(this.capStart, end) !== 'null') {
        out.push({ type: 'problem', scope: 'section', line: this.capLine, message: `"${this.key}" must be an array of records` });
      }
      this.state = 'after-value';
      return;
    }
    const index = this.index++;
    this.state = 'elements-next';
    if (!this.inWanted) return;
    const raw = this.buf.slice(this.capStart, end);
    try {
      out.push({ type: 'row', value: JSON.parse(raw), index, line: this.capLine });
    } catch (error) {
      out.push({ type: 'problem', scope: 'row', index, line: this.capLine, message: `malformed JSON: ${(error as Error).message}` });
    }
  }
}

/** One JSON import document on disk. */
export function jsonFileSource(path: string): ImportSource {
  const totalBytes = statSync(path).size;
  return {
    size: () => totalBytes,
    async *read(section, onProgress) {
      // The last pass reads the whole document and reports what is wrong with it as a whole; the
      // others stop once their section is read.
      const scanner = new JsonSectionScanner(section, section === SECTIONS[SECTIONS.length - 1]);
      const stream = createReadStream(path, { encoding: 'utf8', highWaterMark: 256 * 1024 });
      try {
        for await (const chunk of stream) {
          yield* scanner.feed(chunk as string);
          onProgress?.({ bytes: stream.bytesRead, totalBytes });
          if (scanner.halted || (scanner.wantedDone && !scanner.documentProblems)) return;
        }
        yield* scanner.finish();
      } finally {
        stream.destroy();
      }
    },
  };
}
