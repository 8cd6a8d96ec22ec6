import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKosh, type Tenant, type TestKosh } from '../support/harness.js';

/** The invoices list searches by a part of the number (the dashboard's invoice search box), within the tenant only. */
let t: TestKosh;
let acme: Tenant;
let other: Tenant;

async function numberedInvoice(tenant: Tenant): Promise<{ id: string; number: string }> {
  const customer = await tenant.api('POST', '/v1/customers', { email: `buyer${Math.random()}@search.test` });
  const created = await tenant.api('POST', '/v1/invoices', {
    customer_id: customer.body.data.id,
    currency: 'INR',
    lines: [{ description: 'Consulting', quantity: 1, unit_amount: 10_000, hsn_code: '998314' }],
  });
  expect(created.status, created.text).toBe(201);
  expect(created.body.data.number).toBeTruthy();
  return created.body.data;
}

beforeAll(async () => {
  t = await startTestKosh();
  acme = await t.registerTenant();
  other = await t.registerTenant();
});
afterAll(async () => t?.close());

describe('GET /v1/invoices?q=', () => {
  it('finds invoices whose number contains the text, case-insensitively, and counts them', async () => {
    const first = await numberedInvoice(acme);
    const second = await numberedInvoice(acme);
    await numberedInvoice(other);
    const byTail = await acme.api('GET', `/v1/invoices?q=${encodeURIComponent(second.number.slice(-3).toLowerCase())}`);
    expect(byTail.status).toBe(200);
    expect(byTail.body.data.map((i: { id: string }) => i.id)).toEqual([second.id]);
    expect(byTail.body.total_count).toBe(1);
    const byPrefix = await acme.api('GET', `/v1/invoices?q=${encodeURIComponent(first.number.slice(0, 3).toLowerCase())}`);
    expect(byPrefix.body.data.map((i: { id: string }) => i.id).sort()).toEqual([first.id, second.id].sort());
    // LIKE's wildcards are text, not patterns.
    expect((await acme.api('GET', '/v1/invoices?q=%25')).body.data).toEqual([]);
    expect((await acme.api('GET', '/v1/invoices?q=_')).body.data).toEqual([]);
  });

  it('refuses an empty or overlong search with 400', async () => {
    expect((await acme.api('GET', `/v1/invoices?q=${'x'.repeat(101)}`)).status).toBe(400);
  });
});
