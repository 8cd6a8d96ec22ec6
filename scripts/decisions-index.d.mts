/** Types of decisions-index.mjs (a plain script, so `npm run docs:decisions` needs no compiler). */
export function indexRow(file: string, text: string): string;
export function decisionsIndex(dir?: string): string;
