import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMailSink, type MailSink } from '../support/mail-sink.js';
import { startTestKosh, type Tenant, type TestKosh } from '../support/harness.js';

/**
 * The edges of the contract that clients meet first: bodies that real HTTP clients send, the
 * empty reconciliation report, validation messages in plain words, an invoice's default currency
 * and the front door (`GET /`).
 */

let t: TestKosh;
let sink: MailSink;
let acme: Tenant;

beforeAll(async () => {
  sink = await startMailSink();
  t = await startTestKosh({ env: { SMTP_URL: sink.url, MAIL_FROM: 'Kosh Billing <billing@kosh.test>' } });
  acme = await t.registerTenant();
});
afterAll(async () => {
  await t?.close();
  await sink?.close();
});

/** A request exactly as clients that always send `Content-Type: application/json` make it: the header, no body. */
function emptyJson(method: 'POST' | 'DELETE', url: string) {
  return t.call({ method, url, headers: { authorization: `Bearer ${acme.key}`, 'content-type': 'application/json' }, payload: '' });
}

describe('Content-Type: application/json with an empty body is no body', () => {
  it('DELETE /v1/webhooks/{id} deletes the endpoint', async () => {
    const created = await acme.api('POST', '/v1/webhooks', { url: 'http://127.0.0.1:9/hooks' });
    expect(created.status).toBe(201);
    const res = await emptyJson('DELETE', `/v1/webhooks/${created.body.data.id}`);
    expect(res.status).toBe(200);
    expect((await acme.api('GET', `/v1/webhooks/${created.body.data.id}`)).status).toBe(404);
  });

  it('POST /v1/invoices/{id}/send e-mails the invoice', async () => {
    const customer = (await acme.api('POST', '/v1/customers', { email: 'empty-body@customer.test', name: 'Empty Body' })).body.data;
    const invoice = (
      await acme.api('POST', '/v1/invoices', {
        customer_id: customer.id,
        currency: 'INR',
        lines: [{ description: 'Setup', quantity: 1, unit_amount: 50000, hsn_code: '998314' }],
      })
    ).body.data;
    const res = await emptyJson('POST', `/v1/invoices/${invoice.id}/send`);
    expect(res.status).toBe(200);
  });

  it('a route that needs a body still says so, in plain words', async () => {
    const res = await emptyJson('POST', '/v1/customers');
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'validation_failed', message: 'body is required' });
  });

  it('a body of only whitespace is empty too; a broken one is still not valid JSON', async () => {
    const webhook = (await acme.api('POST', '/v1/webhooks', { url: 'http://127.0.0.1:9/other' })).body.data;
    const blank = await t.call({
      method: 'DELETE',
      url: `/v1/webhooks/${webhook.id}`,
      headers: { authorization: `Bearer ${acme.key}`, 'content-type': 'application/json' },
      payload: '  \n',
    });
    expect(blank.status).toBe(200);
    const broken = await t.call({
      method: 'POST',
      url: '/v1/customers',
      headers: { authorization: `Bearer ${acme.key}`, 'content-type': 'application/json' },
      payload: '{"email":',
    });
    expect(broken.status).toBe(400);
    expect(broken.body.error.reason).toBe('malformed_json');
  });
});

describe('GET /v1/finance/reconciliation before any run', () => {
  it('answers the empty report (200), not 404', async () => {
    const fresh = await t.registerTenant();
    const res = await fresh.api('GET', '/v1/finance/reconciliation');
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      id: null,
      tenant_id: fresh.tenantId,
      status: 'not_run',
      run_at: null,
      invoices_checked: 0,
      total_discrepancies: 0,
      discrepancies: [],
    });
  });
});

describe('validation messages in plain words', () => {
  it('a missing field "is required"; a wrong enum lists what is allowed', async () => {
    const res = await acme.api('POST', '/v1/plans', { amount: 1000, interval: 'fortnight' });
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual(
      expect.arrayContaining([
        { field: 'name', message: 'is required' },
        { field: 'interval', message: 'must be one of: day, week, month, year' },
      ]),
    );
    expect(res.body.error.message).toContain('name is required');
    expect(res.body.error.message).toContain('interval must be one of: day, week, month, year');
    expect(res.body.error.message).not.toMatch(/Invalid input|received undefined/);
  });

  it('an unknown enum value names every allowed value', async () => {
    const res = await acme.api('GET', '/v1/invoices?status=later');
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/^status must be one of: draft, open, paid, void, uncollectible/);
  });

  it('a query date is described by an example: "from must be a date like 2026-04-01"', async () => {
    const missing = await acme.api('GET', '/v1/accounting/export/tally?to=2026-04-30');
    expect(missing.status).toBe(400);
    expect(missing.body.error.message).toBe('from is required');
    expect(missing.body.error.details).toEqual([{ field: 'querystring.from', message: 'is required' }]);
    const wrong = await acme.api('GET', '/v1/accounting/export/tally?from=01-04-2026&to=2026-04-30');
    expect(wrong.status).toBe(400);
    expect(wrong.body.error.message).toBe('from must be a date like 2026-04-01');
  });

  it('a whole number, a UUID, an e-mail address and a number range in words', async () => {
    const res = await acme.api('POST', '/v1/invoices', {
      customer_id: 'nobody',
      lines: [{ description: 'x', quantity: 1.5, unit_amount: -1 }],
    });
    expect(res.status).toBe(400);
    const byField = Object.fromEntries(res.body.error.details.map((d: { field: string; message: string }) => [d.field, d.message]));
    expect(byField).toMatchObject({
      customer_id: 'must be a UUID',
      'lines.0.quantity': 'must be a whole number',
      'lines.0.unit_amount': 'must be at least 0',
    });
    const email = await acme.api('POST', '/v1/customers', { email: 'not-an-address' });
    expect(email.body.error.message).toMatch(/^email must be/);
  });
});

describe("an invoice's currency defaults to its entity's", () => {
  it('POST /v1/invoices without currency bills in INR for an Indian entity', async () => {
    const customer = (await acme.api('POST', '/v1/customers', { email: 'no-currency@customer.test', name: 'No Currency' })).body.data;
    const res = await acme.api('POST', '/v1/invoices', {
      customer_id: customer.id,
      lines: [{ description: 'Consulting', quantity: 2, unit_amount: 25000, hsn_code: '998314' }],
    });
    expect(res.status).toBe(201);
    // 2 × ₹250.00 = ₹500.00, in the entity's currency.
    expect(res.body.data).toMatchObject({ currency: 'INR', subtotal: 50000 });
  });
});
