import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Font } from 'fontkit';

/**
 * Unicode text in pdfkit, which embeds one font per text call and has no fallback: text is cut
 * into runs, each set in the first of Noto Sans (Latin, then Latin Extended — which holds ₹),
 * Noto Sans Devanagari and Noto Sans Tamil that has its glyphs, the current run's font kept
 * while it has the next character (so spaces and joiners stay inside a Devanagari word).
 * Fonts come from the @fontsource packages (WOFF, which pdfkit's fontkit reads and subsets).
 */

export type FontStyle = 'regular' | 'bold';

const require = createRequire(import.meta.url);
const fontFile = (pkg: string, file: string) => require.resolve(`@fontsource/${pkg}/files/${file}`);

const FACES: Record<FontStyle, string[]> = {
  regular: [
    fontFile('noto-sans', 'noto-sans-latin-400-normal.woff'),
    fontFile('noto-sans', 'noto-sans-latin-ext-400-normal.woff'),
    fontFile('noto-sans-devanagari', 'noto-sans-devanagari-devanagari-400-normal.woff'),
    fontFile('noto-sans-tamil', 'noto-sans-tamil-tamil-400-normal.woff'),
  ],
  bold: [
    fontFile('noto-sans', 'noto-sans-latin-700-normal.woff'),
    fontFile('noto-sans', 'noto-sans-latin-ext-700-normal.woff'),
    fontFile('noto-sans-devanagari', 'noto-sans-devanagari-devanagari-700-normal.woff'),
    fontFile('noto-sans-tamil', 'noto-sans-tamil-tamil-700-normal.woff'),
  ],
};

type Face = { name: string; font: Font };
let faces: Record<FontStyle, Face[]> | null = null;
// fontkit (and the Unicode tables it decompresses) loads with the first PDF, not at start-up.
let openFont: ((data: Buffer) => Font) | null = null;

/** Loads fontkit; a PDF renderer awaits it before `useUnicodeFonts`. */
export async function prepareUnicodeFonts(): Promise<void> {
  openFont ??= ((await import('fontkit')) as { create: (data: Buffer) => Font }).create;
}

function loadFaces(): Record<FontStyle, Face[]> {
  if (!faces) {
    const load = (style: FontStyle) =>
      FACES[style].map((path, i) => {
        if (!openFont) throw new Error('prepareUnicodeFonts() must be awaited before a PDF is drawn');
        return { name: `kosh-${style}-${i}`, font: openFont(readFileSync(path)) };
      });
    faces = { regular: load('regular'), bold: load('bold') };
  }
  return faces;
}

export type Run = { face: string; text: string };

/** Cuts text into runs of one face each (see above). */
export function textRuns(text: string, style: FontStyle): Run[] {
  const list = loadFaces()[style];
  const runs: Run[] = [];
  let current: Face | null = null;
  for (const char of text) {
    const cp = char.codePointAt(0)!;
    let face: Face = current && current.font.hasGlyphForCodePoint(cp) ? current : (list.find((f) => f.font.hasGlyphForCodePoint(cp)) ?? current ?? list[0]!);
    // Joiners and combining marks belong to the run they join.
    if (current && (cp === 0x200c || cp === 0x200d)) face = current;
    if (face !== current || runs.length === 0) runs.push({ face: face.name, text: char });
    else runs[runs.length - 1]!.text += char;
    current = face;
  }
  return runs;
}

type Doc = PDFKit.PDFDocument;
type TextOptions = PDFKit.Mixins.TextOptions;

/**
 * Makes a document's `font`, `text` and `widthOfString` Unicode-aware: `font('regular' | 'bold')`
 * picks the style, and text in any script is set run by run in the faces above.
 */
export function useUnicodeFonts(doc: Doc): Doc {
  const all = loadFaces();
  // The parsed fonts themselves, not their files: given a file, pdfkit decompresses and parses
  // every WOFF again for each document (most of a PDF's CPU). Each document still embeds its own
  // subset, which pdfkit makes per document from the shared font.
  for (const style of ['regular', 'bold'] as const) for (const face of all[style]) doc.registerFont(face.name, face.font as unknown as Buffer);
  const setFont = doc.font.bind(doc);
  // The face in use. pdfkit measures words with widthOfString while it lays a run out, so the
  // measuring below must leave this face in place, not the style's first one.
  let currentFace = '';
  const baseFont = (face: string) => {
    currentFace = face;
    setFont(face);
  };
  const baseText = doc.text.bind(doc) as (text: string, x?: number | TextOptions, y?: number, options?: TextOptions) => Doc;
  const baseWidth = doc.widthOfString.bind(doc);
  let style: FontStyle = 'regular';
  const d = doc as unknown as Record<string, unknown>;
  d.font = (name: string, size?: number) => {
    style = name === 'bold' ? 'bold' : 'regular';
    baseFont(all[style][0]!.name);
    if (size !== undefined) doc.fontSize(size);
    return doc;
  };
  d.widthOfString = (text: string, options?: TextOptions) => {
    const runs = textRuns(String(text), style);
    if (runs.length === 1 && runs[0]!.face === currentFace) return baseWidth(String(text), options);
    const face = currentFace;
    let width = 0;
    for (const run of runs) {
      setFont(run.face);
      width += baseWidth(run.text, options);
    }
    setFont(face);
    return width;
  };
  // Devanagari and Tamil glyphs are reordered by shaping (a pre-base vowel sign, a reph): each such
  // run carries its text as ActualText, so copying or extracting the PDF's text gives it back.
  const complex = new Set([...all.regular.slice(2), ...all.bold.slice(2)].map((f) => f.name));
  const draw = (run: Run, write: () => void) => {
    baseFont(run.face);
    if (!complex.has(run.face)) return write();
    doc.markContent('Span', { actual: run.text });
    write();
    doc.endMarkedContent();
  };
  d.text = (text: unknown, x?: number | TextOptions, y?: number, options?: TextOptions) => {
    const opts: TextOptions = (typeof x === 'object' ? x : options) ?? {};
    const hasPosition = typeof x === 'number';
    const value = String(text ?? '');
    const runs = textRuns(value, style);
    if (runs.length <= 1) {
      const run = runs[0] ?? { face: all[style][0]!.name, text: value };
      draw(run, () => (hasPosition ? baseText(value, x, y, opts) : baseText(value, opts)));
      return doc;
    }
    const widths = runs.map((run) => {
      setFont(run.face);
      return baseWidth(run.text, opts);
    });
    const total = widths.reduce((sum, w) => sum + w, 0);
    if (hasPosition && !opts.continued && (opts.width === undefined || total <= opts.width)) {
      // One line: the runs are placed side by side (pdfkit aligns a continued line poorly).
      const room = opts.width ?? total;
      let cx = x + (opts.align === 'right' ? room - total : opts.align === 'center' ? (room - total) / 2 : 0);
      const top = y ?? doc.y;
      runs.forEach((run, i) => {
        draw(run, () => baseText(run.text, cx, top, { lineBreak: false }));
        cx += widths[i]!;
      });
      baseFont(all[style][0]!.name);
      doc.x = x;
      doc.y = top + doc.currentLineHeight(true);
      return doc;
    }
    runs.forEach((run, i) => {
      const last = i === runs.length - 1;
      const runOptions = { ...opts, continued: last ? Boolean(opts.continued) : true };
      draw(run, () => (i === 0 && hasPosition ? baseText(run.text, x, y, runOptions) : baseText(run.text, runOptions)));
    });
    baseFont(all[style][0]!.name);
    return doc;
  };
  return doc;
}
