import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDatabase, onPostgresServer } from '../support/database.js';
import type { Database } from '../../src/platform/db/database.js';
import { checkBilling, seedDueSubscriptions } from './seed.js';

/**
 * Crash safety of the billing run: a child process renews a few thousand due subscriptions on a
 * PostgreSQL database of its own and is killed with SIGKILL part way (after the first invoices
 * appear); a second run finishes the job. Every due (subscription, period) must then be invoiced
 * exactly once, the invoice numbers gapless, every journal entry balanced.
 *
 * Needs a PostgreSQL server (DATABASE_URL): the embedded database lives inside one process, so
 * another process can neither share it nor be killed mid-transaction against it.
 */
const N = 3_000;
const ANCHOR = new Date('2026-03-01T00:00:00Z');
const DUE = new Date('2026-04-01T00:00:00Z');
const CHILD = fileURLToPath(new URL('./billing-run.child.ts', import.meta.url));

let database: Database & { url?: string };
let tenantId: string;

function startRun(batch: number): { child: ChildProcess; done: Promise<{ code: number | null; signal: NodeJS.Signals | null; out: string }> } {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, DUE.toISOString(), String(batch)], {
    env: { ...process.env, DATABASE_URL: database.url! },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (chunk) => (out += chunk));
  child.stderr!.on('data', (chunk) => (out += chunk));
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; out: string }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal, out })),
  );
  return { child, done };
}

async function cycleInvoices(): Promise<number> {
  const { rows } = await sql<{
    n: number;
  }>`SELECT count(*)::int AS n FROM invoices WHERE tenant_id = ${tenantId} AND billing_reason = 'subscription_cycle'`.execute(database.db);
  return rows[0]!.n;
}

describe.skipIf(!onPostgresServer)('the billing run, killed mid-run (needs DATABASE_URL: a second process cannot reach the embedded database)', () => {
  beforeAll(async () => {
    database = await openTestDatabase();
    ({ tenantId } = await seedDueSubscriptions(database.db, { n: N, anchor: ANCHOR, due: DUE, customers: 300 }));
  }, 120_000);
  afterAll(() => database?.close());

  it('invoices every due period exactly once after a SIGKILL and a second run, numbers gapless, the books balanced', async () => {
    const first = startRun(25);
    // Kill it once some invoices have committed, well before the end.
    const deadline = Date.now() + 120_000;
    let seen = 0;
    while (Date.now() < deadline) {
      seen = await cycleInvoices();
      if (seen >= 100) break;
      const exited = await Promise.race([first.done.then(() => true), new Promise((r) => setTimeout(() => r(false), 20))]);
      if (exited) break;
    }
    first.child.kill('SIGKILL');
    const killed = await first.done;
    expect(killed.signal, `the first run ended before it could be killed: ${killed.out}`).toBe('SIGKILL');
    const afterKill = await cycleInvoices();
    expect(afterKill).toBeGreaterThan(0);
    expect(afterKill).toBeLessThan(N);
    // What the dead run committed is whole: each renewed subscription has moved with its invoice.
    const partial = await checkBilling(database.db, tenantId, DUE);
    expect(partial).toMatchObject({
      invoices: afterKill,
      distinctPeriods: afterKill,
      subscriptionsMoved: afterKill,
      latestMatches: afterKill,
      renewedEvents: afterKill,
      unbalancedEntries: 0,
    });
    expect(partial.maxNumber! - partial.minNumber! + 1).toBe(afterKill);

    const second = await startRun(50).done;
    expect(second.code, second.out).toBe(0);
    const report = JSON.parse(second.out.trim().split('\n').at(-1)!);
    expect(report).toMatchObject({ renewed: N - afterKill, failed: 0 });

    const final = await checkBilling(database.db, tenantId, DUE);
    expect(final).toEqual({
      invoices: N,
      distinctPeriods: N,
      subscriptionsMoved: N,
      latestMatches: N,
      minNumber: 1,
      maxNumber: N,
      renewedEvents: N,
      unbalancedEntries: 0,
      entriesWithoutInvoice: 0,
    });
    // Nothing is left locked or half-done, and a third run finds nothing.
    const third = await startRun(50).done;
    expect(JSON.parse(third.out.trim().split('\n').at(-1)!)).toMatchObject({ renewed: 0, failed: 0 });
    expect(await cycleInvoices()).toBe(N);
  }, 300_000);
});
