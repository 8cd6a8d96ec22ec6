/** The little of fontkit (pdfkit's font engine) Kosh uses: does a font have a glyph. */
declare module 'fontkit' {
  export type Font = { hasGlyphForCodePoint(codePoint: number): boolean };
  export function create(buffer: Buffer): Font;
}
