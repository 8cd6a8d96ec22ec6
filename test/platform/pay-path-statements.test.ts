/**
 * How many SQL statements one `POST /v1/invoices/{id}/pay` sends (issue #27: the review counted 32,
 * the invoice row read 4 times). Every statement the pool's clients send is counted while the
 * request runs (node-postgres' `Client.prototype.query`, which the pipelining client also sends
 * through), on whichever database the suite runs against. The figure is a budget: a change that
 * adds statements to the pay path fails here and has to raise it on purpose.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCustomer, gstinFor } from '../support/billing.js';
import { startTestKosh, type Tenant, type TestKosh } from '../support/harness.js';

let t: TestKosh;
let acme: Tenant;

beforeAll(async () => {
  t = await startTestKosh();
  acme = await t.registerTenant({ gstin: gstinFor('29') });
});
afterAll(async () => {
  await t?.close();
});

/**
 * Statements the process sends on timers while the request runs, not for it: the shared rate-limit
 * budgets flush their counters (decision 0270), and the change feed proves itself current with a
 * `pg_notify` to its own session every 200 ms (decision 0420) — on a busy machine one lands inside
 * the request. Authentication reads its API key only when that feed could not prove the key cache
 * current in time, which is timing as well.
 */
function notTheRequest(text: string): boolean {
  return /\brate_limit_counters\b/.test(text) || /\bpg_notify\(/.test(text) || /\bfrom\s+"?api_keys"?/i.test(text);
}

/** Runs `work`, recording the text of every statement sent meanwhile. */
async function recording<T>(work: () => Promise<T>): Promise<{ result: T; statements: string[] }> {
  const statements: string[] = [];
  const original = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: string } | undefined)?.text;
    if (text !== undefined && !notTheRequest(text)) statements.push(text);
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof original;
  try {
    return { result: await work(), statements };
  } finally {
    pg.Client.prototype.query = original;
  }
}

describe('the pay path', () => {
  it('one card payment of a ₹1,180 invoice sends a bounded number of statements', async () => {
    const customer = await createCustomer(acme, { gstin: gstinFor('29', 'BBBBB2222B1Z') });
    const pm = await acme.api('POST', `/v1/customers/${customer}/payment-methods`, { token: 'tok_visa' });
    expect(pm.status, pm.text).toBe(201);
    const created = await acme.api('POST', '/v1/invoices', {
      customer_id: customer,
      currency: 'INR',
      lines: [{ description: 'Services', unit_amount: 100_000, hsn_code: '998314' }],
    });
    expect(created.status, created.text).toBe(201);
    // Warm the caches a long-running server has warm (tenant settings, prepared lookups): a read first.
    expect((await acme.api('GET', `/v1/invoices/${created.body.data.id}`)).status).toBe(200);

    const { result: paid, statements } = await recording(() => acme.api('POST', `/v1/invoices/${created.body.data.id}/pay`, {}));
    expect(paid.status, paid.text).toBe(200);
    expect(paid.body.data).toMatchObject({ status: 'paid', amount_due: 0, amount_paid: 118_000 });

    const invoiceReads = statements.filter((s) => /^\s*select\b[\s\S]*\bfrom\s+"?invoices"?\s/i.test(s)).length;
    const summary = { statements: statements.length, invoiceReads };
    // Printed so that the figure can be quoted; the full list with KOSH_PRINT_PAY_PATH=1.
    console.log(`pay path (${t.database.kind}): ${JSON.stringify(summary)}`);
    if (process.env.KOSH_PRINT_PAY_PATH) console.log(statements.map((s, i) => `${i + 1}. ${s.replace(/\s+/g, ' ').slice(0, 220)}`).join('\n'));
    // 33 statements (6 of them read the invoice row) when this test was written; 36 since the
    // functional-currency books read the entity's currency again (20.), smart retries learn from the
    // outcome (30.) and the payment wall is lowered when its invoice is paid (32.); a top-up's part
    // paid is looked up (29.) while the entity's posting terms became one read (19.). Issue #27 asks
    // for fewer: lower the bound as statements go.
    expect(statements.length).toBeLessThanOrEqual(36);
  });
});
