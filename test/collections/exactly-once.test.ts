import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPostgresServer } from '../support/database.js';
import { startTestKosh, type Tenant, type TestKosh } from '../support/harness.js';
import { createCustomer, createInvoice, gstinFor } from '../support/billing.js';

/**
 * Exactly-once charging across a crash: a worker process charges a charge_automatically invoice
 * through the test gateway (journal in a file) with a card whose gateway call takes money and then
 * hangs; it is killed with SIGKILL between the gateway call and the commit. A second process
 * resolves the attempt left pending: by asking the gateway (lookupCharge), never by charging again.
 *
 * Needs a PostgreSQL server (DATABASE_URL): the embedded database lives inside one process.
 */
const CHILD = fileURLToPath(new URL('./charge.child.ts', import.meta.url));

let t: TestKosh;
let acme: Tenant;
let dir: string;
let journalFile: string;

function run(args: string[]) {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, ...args], {
    env: { ...process.env, DATABASE_URL: (t.database as { url?: string }).url!, KOSH_TEST_GATEWAY_JOURNAL: journalFile },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (c) => (out += c));
  child.stderr.on('data', (c) => (out += c));
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; out: string }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal, out })),
  );
  return { child, done };
}

const journal = () =>
  existsSync(journalFile)
    ? readFileSync(journalFile, 'utf8')
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l))
    : [];

describe.skipIf(!onPostgresServer)('charging, killed between the gateway call and the commit (needs DATABASE_URL)', () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kosh-gw-'));
    journalFile = join(dir, 'journal.jsonl');
    t = await startTestKosh({ env: { KOSH_TEST_GATEWAY_JOURNAL: journalFile } });
    acme = await t.registerTenant({ gstin: gstinFor('29') }); // registered for GST: 500.00 + 18 % = 590.00
  });
  afterAll(async () => {
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('pays the invoice once and the gateway sees one charge after a SIGKILL and a restart', async () => {
    const customer = await createCustomer(acme);
    expect((await acme.http.POST('/v1/customers/{id}/payment-methods', { path: { id: customer }, body: { token: 'tok_timeoutAfterCharge' } })).status).toBe(
      201,
    );
    const inv = await createInvoice(acme, customer, [50_000], { collection_method: 'charge_automatically' });
    const now = t.clock.now();

    const first = run(['charge', acme.tenantId, inv.id, now.toISOString()]);
    const deadline = Date.now() + 60_000;
    while (journal().length === 0 && Date.now() < deadline) {
      const exited = await Promise.race([first.done.then(() => true), new Promise((r) => setTimeout(() => r(false), 20))]);
      if (exited) break;
    }
    first.child.kill('SIGKILL');
    const killed = await first.done;
    expect(killed.signal, killed.out).toBe('SIGKILL');
    expect(journal()).toHaveLength(1);
    // The attempt was committed pending before the call; the outcome never was.
    let attempts = (await acme.http.GET('/v1/invoices/{id}/payment-attempts', { path: { id: inv.id } })).body.data;
    expect(attempts).toMatchObject([{ status: 'pending' }]);
    expect((await acme.http.GET('/v1/invoices/{id}', { path: { id: inv.id } })).body.data.status).toBe('open');

    const second = await run(['resolve', new Date(now.getTime() + 2 * 60_000).toISOString()]).done;
    expect(second.code, second.out).toBe(0);
    expect(JSON.parse(second.out.trim().split('\n').at(-1)!)).toEqual({ resolved: 1 });

    expect((await acme.http.GET('/v1/invoices/{id}', { path: { id: inv.id } })).body.data).toMatchObject({ status: 'paid', amount_paid: 59_000 });
    attempts = (await acme.http.GET('/v1/invoices/{id}/payment-attempts', { path: { id: inv.id } })).body.data;
    expect(attempts).toMatchObject([{ status: 'succeeded' }]);
    expect((await acme.http.GET('/v1/payments', { query: { invoice_id: inv.id } })).body.data).toHaveLength(1);
    expect(journal()).toHaveLength(1);
    // The queued charge job, run now, finds the invoice paid and charges nothing.
    await t.kosh.worker.drain();
    expect(journal()).toHaveLength(1);
  }, 120_000);
});
