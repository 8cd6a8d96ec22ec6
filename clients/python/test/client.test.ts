import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKosh, type TestKosh } from '../../../test/support/harness.js';
// @ts-expect-error: a plain .mjs script (no types), the generator itself
import { files } from '../../../scripts/generate-python-client.mjs';

/** The generated Python client (standard library only) against a live Kosh on a loopback port, run by python3. */

const run = promisify(execFile);
const here = join(import.meta.dirname, '..');
let t: TestKosh;
let baseUrl: string;

beforeAll(async () => {
  t = await startTestKosh();
  baseUrl = await t.kosh.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(() => t?.close());

describe('python client', () => {
  it('is what the generator makes of the committed document (run `npm run generate:client` after changing a route)', () => {
    const document = JSON.parse(readFileSync(join(here, '../typescript/openapi.json'), 'utf8')) as unknown;
    for (const [file, text] of Object.entries(files(document) as Record<string, string>)) {
      expect(readFileSync(join(here, file), 'utf8'), `clients/python/${file} is stale: npm run generate:client`).toBe(text);
    }
  });

  it('registers, creates a customer and an invoice, and reads it back, typed, against a live Kosh', async () => {
    const { stdout } = await run('python3', [join(here, 'examples/first_invoice.py')], { env: { ...process.env, KOSH_URL: baseUrl }, timeout: 60_000 });
    const out = JSON.parse(stdout.trim().split('\n').pop()!);
    // 2 × ₹250.00 = ₹500.00, in INR (the entity's currency: none was sent), finalized at once.
    expect(out.invoice).toMatchObject({ id: expect.any(String), status: 'open', currency: 'INR', subtotal: 50000, customer_id: out.customer_id });
    expect(out.listed).toEqual([out.invoice.id]);
    expect(out.pdf_starts).toBe('%PDF-');
    // A refusal arrives as KoshError with the envelope's fields, in plain words.
    expect(out.refusal).toEqual({ status: 400, code: 'validation_failed', message: 'email is required' });
  });

  it('type-checks its own signatures: every annotation resolves', async () => {
    const script = [
      'import sys, typing, inspect',
      `sys.path.insert(0, ${JSON.stringify(here)})`,
      'import kosh_client.types as types, kosh_client.client as client',
      'names = [n for n in types.__all__ if isinstance(getattr(types, n), type)]',
      'for n in names: typing.get_type_hints(getattr(types, n))',
      'ops = [f for n, f in inspect.getmembers(client.KoshClient, inspect.isfunction) if not n.startswith("_")]',
      'for f in ops: typing.get_type_hints(f, globalns=vars(client))',
      'print(len(names), len(ops))',
    ].join('\n');
    const { stdout } = await run('python3', ['-c', script], { timeout: 60_000 });
    const [models, operations] = stdout.trim().split(' ').map(Number);
    expect(models).toBeGreaterThan(100);
    expect(operations).toBeGreaterThan(150);
  });
});
