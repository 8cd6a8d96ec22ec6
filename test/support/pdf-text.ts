import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * What a reader of the PDF sees, by poppler's `pdftotext` (an independent PDF parser, not the
 * library that wrote the file): `-layout` keeps columns on their lines (labels beside their
 * amounts); `raw` follows the drawing order, which reads rotated text as words.
 * Needs poppler-utils (`apt-get install -y poppler-utils`).
 */
export async function pdfText(pdf: Buffer, options: { raw?: boolean } = {}): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'kosh-pdf-'));
  try {
    const file = join(dir, 'document.pdf');
    await writeFile(file, pdf);
    const { stdout } = await run('pdftotext', [options.raw ? '-raw' : '-layout', '-enc', 'UTF-8', file, '-']);
    return stdout;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Page count and metadata, by poppler's `pdfinfo`. */
export async function pdfInfo(pdf: Buffer): Promise<Record<string, string>> {
  const dir = await mkdtemp(join(tmpdir(), 'kosh-pdf-'));
  try {
    const file = join(dir, 'document.pdf');
    await writeFile(file, pdf);
    const { stdout } = await run('pdfinfo', [file]);
    return Object.fromEntries(
      stdout
        .split('\n')
        .filter((l) => l.includes(':'))
        .map((l) => [l.slice(0, l.indexOf(':')).trim(), l.slice(l.indexOf(':') + 1).trim()]),
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
