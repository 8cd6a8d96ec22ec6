import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKosh, type TestKosh } from '../support/harness.js';

/**
 * The README's "First calls" run exactly as written (curl and jq under bash) against a live Kosh:
 * register with an owner, a plan, a customer, a subscription and its invoice, a one-off invoice,
 * the payment, the paid invoice and its PDF. Only the address changes (localhost:8080 → the test's port).
 */

const run = promisify(execFile);
const README = readFileSync(join(import.meta.dirname, '../../README.md'), 'utf8');
let t: TestKosh;
let base: string;
let dir: string;

/** The first ```sh block after the "## First calls" heading. */
function firstCalls(): string {
  const section = README.slice(README.indexOf('## First calls'));
  const block = /```sh\n([\s\S]*?)```/.exec(section);
  if (!block) throw new Error('README: no ```sh block under "## First calls"');
  return block[1]!;
}

beforeAll(async () => {
  t = await startTestKosh();
  base = (await t.kosh.app.listen({ port: 0, host: '127.0.0.1' })).replace(/^http:\/\//, '');
  dir = mkdtempSync(join(tmpdir(), 'kosh-readme-'));
});
afterAll(async () => {
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("the README's first calls", () => {
  it('walk a new user from registering to a paid invoice and its PDF', async () => {
    const script = firstCalls().replaceAll('localhost:8080', base);
    // The walk-through, then what it left behind (the key, for the checks below).
    const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', `${script}\necho "KEY=$KEY"\necho "INVOICE=$INVOICE"`], { cwd: dir, timeout: 120_000 });
    const lines = stdout.trim().split('\n');
    const key = lines.find((l) => l.startsWith('KEY='))!.slice(4);
    const invoiceId = lines.find((l) => l.startsWith('INVOICE='))!.slice(8);
    expect(key).toMatch(/^sk_test_/);
    // The one-off invoice's number, the payment's status, the invoice's status.
    expect(lines.slice(0, 3)).toEqual([expect.stringMatching(/^INV-/), 'succeeded', 'paid']);
    expect(readFileSync(join(dir, 'invoice.pdf')).subarray(0, 5).toString('latin1')).toBe('%PDF-');

    const api = (url: string) => t.api('GET', url, undefined, { authorization: `Bearer ${key}` });
    const invoice = (await api(`/v1/invoices/${invoiceId}`)).body.data;
    // ₹499.00 + 9 % CGST ₹44.91 + 9 % SGST ₹44.91 = ₹588.82, paid in full.
    expect(invoice).toMatchObject({ status: 'paid', subtotal: 49900, total: 58882, amount_due: 0 });
    // The owner can sign in to the dashboard.
    const signIn = await t.api('POST', '/v1/auth/sign-in', { email: 'owner@acme.in', password: 'a long passphrase' });
    expect(signIn.status).toBe(200);
  });

  it('GET / points a newcomer at the docs, the dashboard and the OpenAPI document', async () => {
    const res = await t.api('GET', '/');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'kosh', docs: '/docs', dashboard: '/dashboard', openapi: '/openapi.json' });
  });

  it('/docs starts with the same walk, its tags in the order a user meets them', async () => {
    const doc = (await t.api('GET', '/openapi.json')).body;
    expect(doc.info.description).toContain('## Getting started');
    for (const call of [
      'POST /auth/register',
      'POST /v1/plans',
      'POST /v1/customers',
      'POST /v1/subscriptions',
      'POST /v1/payments/offline',
      'GET /v1/invoices/{id}/pdf',
    ])
      expect(doc.info.description).toContain(call);
    const tags = doc.tags.map((tag: { name: string }) => tag.name);
    expect(tags.slice(0, 6)).toEqual(['tenants', 'plans', 'customers', 'subscriptions', 'invoices', 'payments']);
  });
});
