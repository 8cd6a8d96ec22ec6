import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { startTestKosh, type Tenant, type TestKosh } from '../../../test/support/harness.js';
import { createInvoice, gstinFor } from '../../../test/support/billing.js';
import {
  connectThroughBrowser,
  QBO_REALM,
  XERO_TENANT,
  ZOHO_ORG,
  startAccountingSandbox,
  type AccountingSandbox,
  type Provider,
  type RecordedRequest,
} from '../../../test/support/accounting-sandbox.js';
import { signTestWebhook, TEST_SIGNATURE_HEADER } from '../collections/index.js';

/**
 * A refund booked at an accounting provider that the gateway fails later (decision 0860): Kosh
 * reverses it (the note's credit is spendable again) and the next sync deletes the provider's
 * refund document — once, however often it is retried — so the books agree with Kosh's ledger.
 * A refund that failed before it was booked is never created at the provider.
 */
let sandbox: AccountingSandbox;
let t: TestKosh;
let acme: Tenant;
let gatewayConnection: string;
const SECRET = 'whsec_late';
const connections = {} as Record<Provider, string>;

const since = (mark: number, filter: (r: RecordedRequest) => boolean) => sandbox.requests.slice(mark).filter(filter);

async function syncAndDrain(provider: Provider) {
  const res = await acme.http.POST('/v1/accounting/sync', { body: { connection_id: connections[provider] } });
  expect(res.status, res.text).toBe(202);
  await t.kosh.worker.drain();
}

async function refundRecords(provider: Provider) {
  const res = await acme.api('GET', `/v1/accounting/sync-status?limit=1000&connection_id=${connections[provider]}&record_type=refund`);
  expect(res.status, res.text).toBe(200);
  return res.body.data as { record_id: string; status: string; external_id: string | null; last_error: string | null }[];
}

/** A card-paid ₹1,180 invoice (₹1,000 + CGST 9 % + SGST 9 %) refunded ₹590 through the test gateway, which pays it. */
async function paidRefund(email: string) {
  const c = await acme.http.POST('/v1/customers', {
    body: { email, name: 'Bengaluru Buyer', gstin: gstinFor('29', 'BBBBB2222B1Z'), billing_address: { line1: '1 MG Road', state_code: '29', country: 'IN' } },
  });
  expect(c.status, c.text).toBe(201);
  const customer = c.body.data.id;
  expect((await acme.http.POST('/v1/customers/{id}/payment-methods', { path: { id: customer }, body: { token: 'tok_visa' } })).status).toBe(201);
  const invoice = await createInvoice(acme, customer, [100_000], { lines: [{ description: 'Pro plan', unit_amount: 100_000, hsn_code: '998314' }] });
  expect((await acme.http.POST('/v1/invoices/{id}/pay', { path: { id: invoice.id }, body: {} })).status).toBeLessThan(300);
  const [attempt] = (await acme.http.GET('/v1/invoices/{id}/payment-attempts', { path: { id: invoice.id } })).body.data;
  const res = await acme.http.POST('/v1/payments/{id}/refunds', { path: { id: attempt!.payment_id! }, body: { amount: 59_000, reason: 'Duplicate seat' } });
  expect(res.status, res.text).toBe(201);
  await t.kosh.worker.drain();
  const refund = (await acme.http.GET('/v1/refunds/{id}', { path: { id: res.body.data.id } })).body.data;
  expect(refund).toMatchObject({ status: 'succeeded' });
  // The gateway's refund id, which its webhooks name (not part of the API's refund).
  const { rows } = await sql<{ gateway_refund_id: string }>`
    SELECT gateway_refund_id FROM refunds WHERE tenant_id = ${acme.tenantId} AND id = ${refund.id}`.execute(t.database.db);
  const gatewayRefundId = rows[0]!.gateway_refund_id;
  expect(gatewayRefundId).toEqual(expect.any(String));
  const note = (await acme.http.GET('/v1/credit-notes/{id}', { path: { id: refund.credit_note_id! } })).body.data;
  expect(note).toMatchObject({ refund_status: 'processed', balance: 0 });
  return { customer, invoice, refund, note, gatewayRefundId };
}

/** The gateway reports the paid refund as failed (a signed `refund.failed` webhook). */
async function failLater(gatewayRefundId: string, eventId: string) {
  const body = JSON.stringify({
    id: eventId,
    type: 'refund.failed',
    data: { refund_id: gatewayRefundId, failure_code: 'expired_or_canceled_card', failure_message: 'The card was closed' },
  });
  const hook = await t.call({
    method: 'POST',
    url: `/webhooks/gateways/test/${gatewayConnection}`,
    headers: { 'content-type': 'application/json', [TEST_SIGNATURE_HEADER]: signTestWebhook(body, SECRET, t.clock.now()) },
    payload: body,
  });
  expect(hook.status, hook.text).toBe(200);
  await t.kosh.worker.drain();
}

async function entryOf(referenceId: string, kind: string): Promise<Record<number, number>> {
  const { rows } = await sql<{ account_code: number; net: string }>`
    SELECT l.account_code, sum(l.debit - l.credit)::text AS net FROM journal_lines l JOIN journal_entries e ON e.tenant_id = l.tenant_id AND e.id = l.entry_id
    WHERE e.tenant_id = ${acme.tenantId} AND e.reference_id = ${referenceId} AND e.kind = ${kind} GROUP BY l.account_code`.execute(t.database.db);
  return Object.fromEntries(rows.map((r) => [r.account_code, Number(r.net)]));
}

/** Kosh's ledger for one customer's invoice and its refund note (lines tagged with either, or with the customer), shaped as QuickBooks' books are (major units). */
async function koshBooks(sale: { customer: string; invoice: { id: string }; note: { id: string } }) {
  const { rows } = await sql<{ account_code: number; net: string }>`
    SELECT account_code, sum(debit - credit)::text AS net FROM journal_lines
    WHERE tenant_id = ${acme.tenantId} AND (customer_id = ${sale.customer} OR invoice_id = ${sale.invoice.id} OR credit_note_id = ${sale.note.id})
    GROUP BY account_code`.execute(t.database.db);
  const net = (code: number) => Number(rows.find((r) => r.account_code === code)?.net ?? 0) / 100;
  return {
    income: -(net(4000) + net(4900) + net(2400)),
    tax: -(net(2100) + net(2110) + net(2120)),
    money: net(1000) + net(1050),
    customer: net(1100) + net(2300),
  };
}

const raw = async (method: string, path: string, headers: Record<string, string>, body?: unknown) => {
  const res = await fetch(`${sandbox.apiUrl}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
};

let first: Awaited<ReturnType<typeof paidRefund>>;

beforeAll(async () => {
  sandbox = await startAccountingSandbox();
  t = await startTestKosh({ env: sandbox.env() });
  acme = await t.registerTenant({ state_code: '29', gstin: gstinFor('29') });
  const gateway = await acme.http.POST('/v1/gateway-connections', { body: { provider: 'test', credentials: { webhook_secret: SECRET }, currencies: ['INR'] } });
  expect(gateway.status, gateway.text).toBe(201);
  gatewayConnection = gateway.body.data.id;
  for (const provider of ['quickbooks', 'xero', 'zoho_books'] as const) {
    connections[provider] = (await connectThroughBrowser(t, acme, provider)).location.searchParams.get('connection_id')!;
  }
  first = await paidRefund('late@buyer.in');
  for (const provider of ['quickbooks', 'xero', 'zoho_books'] as const) {
    await syncAndDrain(provider);
    expect(await refundRecords(provider)).toEqual([expect.objectContaining({ record_id: first.refund.id, status: 'synced', external_id: expect.any(String) })]);
  }
  await failLater(first.gatewayRefundId, 'evt_late_1');
});
afterAll(async () => {
  await t?.close();
  await sandbox?.close();
});

describe('a refund the gateway fails after it was paid', () => {
  it('is reversed in Kosh: refund failed, refund.failed posted, the note’s credit spendable again; a repeated webhook changes nothing', async () => {
    expect((await acme.http.GET('/v1/refunds/{id}', { path: { id: first.refund.id } })).body.data).toMatchObject({
      status: 'failed',
      failure_code: 'expired_or_canceled_card',
    });
    expect(await entryOf(first.refund.id, 'refund.failed')).toEqual({ 1050: 59_000, 2300: -59_000 });
    expect((await acme.http.GET('/v1/credit-notes/{id}', { path: { id: first.note.id } })).body.data).toMatchObject({
      refund_status: 'refund_failed',
      status: 'issued',
      balance: 59_000,
    });
    await failLater(first.gatewayRefundId, 'evt_late_2');
    expect(await entryOf(first.refund.id, 'refund.failed')).toEqual({ 1050: 59_000, 2300: -59_000 });
  });

  it('QuickBooks: the RefundReceipt is deleted, the note becomes a CreditMemo, the books agree with Kosh; a lost answer is retried without harm', async () => {
    const receipt = [...sandbox.store.get('quickbooks:refundreceipt')!.values()][0]!;
    const mark = sandbox.requests.length;
    sandbox.dropAnswer('quickbooks', 1); // the delete is made, its answer lost: the run is retried
    await syncAndDrain('quickbooks');
    t.clock.advance(120_000);
    await t.kosh.worker.drain();
    const deletes = since(mark, (r) => r.provider === 'quickbooks' && r.query.operation === 'delete');
    expect(deletes.length).toBeGreaterThanOrEqual(1);
    expect(deletes[0]).toMatchObject({ path: `/v3/company/${QBO_REALM}/refundreceipt`, body: { Id: receipt.id, SyncToken: '0' } });
    expect(new Set(deletes.map((r) => r.query.requestid)).size, 'a retry reuses its requestid').toBe(1);
    expect(sandbox.store.get('quickbooks:refundreceipt')!.size).toBe(0);
    // The note's CreditMemo only after the RefundReceipt is gone: never both reversing the income.
    const writes = since(mark, (r) => r.provider === 'quickbooks' && r.method === 'POST').map(
      (r) => `${r.path.split('/').pop()}${r.query.operation ? `?${r.query.operation}` : ''}`,
    );
    expect(writes.indexOf('creditmemo')).toBeGreaterThan(writes.lastIndexOf('refundreceipt?delete'));
    expect(sandbox.store.get('quickbooks:creditmemo')!.size).toBe(1);
    expect(await refundRecords('quickbooks')).toEqual([
      expect.objectContaining({ record_id: first.refund.id, status: 'voided', external_id: receipt.id, last_error: null }),
    ]);
    const qboCustomer = [...sandbox.store.get('quickbooks:customer')!.values()][0]!.id;
    const books = sandbox.quickbooksBooks();
    // ₹1,000 − ₹500 income, ₹180 − ₹90 GST; the ₹1,180 received stays; the customer holds ₹590 of credit.
    expect(books).toEqual({ income: 500, tax: 90, receivable: -590, money: { '35': 1180 }, customers: { [qboCustomer]: -590 } });
    const kosh = await koshBooks(first);
    expect({ income: books.income, tax: books.tax, money: books.money['35'], customer: books.customers[qboCustomer] }).toEqual(kosh);

    // Synced again: nothing sent. Deleted twice at QuickBooks: refused (Object Not Found).
    const again = sandbox.requests.length;
    await syncAndDrain('quickbooks');
    expect(since(again, (r) => r.provider === 'quickbooks' && r.method === 'POST')).toHaveLength(0);
    const twice = await raw(
      'POST',
      `/v3/company/${QBO_REALM}/refundreceipt?operation=delete&minorversion=75`,
      { authorization: 'Bearer x' },
      { Id: receipt.id, SyncToken: '0' },
    );
    expect(twice).toMatchObject({ status: 400, body: { Fault: { Error: [{ code: '610' }] } } });
  });

  it('Xero: the refund payment on the credit note is deleted (Status DELETED), once', async () => {
    const paymentId = (await refundRecords('xero'))[0]!.external_id!;
    const mark = sandbox.requests.length;
    await syncAndDrain('xero');
    const deletes = since(mark, (r) => r.provider === 'xero' && r.method === 'POST' && r.path.startsWith('/api.xro/2.0/Payments/'));
    expect(deletes).toHaveLength(1);
    expect(deletes[0]).toMatchObject({ path: `/api.xro/2.0/Payments/${paymentId}`, body: { Status: 'DELETED' } });
    expect(deletes[0]!.headers['idempotency-key']).toEqual(expect.any(String));
    expect(sandbox.store.get('xero:Payments')!.get(paymentId)!.body.Status).toBe('DELETED');
    expect(await refundRecords('xero')).toEqual([expect.objectContaining({ record_id: first.refund.id, status: 'voided', external_id: paymentId })]);
    const again = sandbox.requests.length;
    await syncAndDrain('xero');
    expect(since(again, (r) => r.provider === 'xero' && r.method !== 'GET')).toHaveLength(0);
    const headers = { authorization: 'Bearer x', 'xero-tenant-id': XERO_TENANT };
    const twice = await raw('POST', `/api.xro/2.0/Payments/${paymentId}`, headers, { Status: 'DELETED' });
    expect(twice).toMatchObject({ status: 400, body: { Type: 'ValidationException' } });
  });

  it('Zoho Books: the credit-note refund is deleted, once', async () => {
    const refundId = (await refundRecords('zoho_books'))[0]!.external_id!;
    const noteId = [...sandbox.store.get('zoho_books:creditnotes')!.values()].find((n) => n.body.creditnote_number === first.note.number)!.id;
    const mark = sandbox.requests.length;
    await syncAndDrain('zoho_books');
    const deletes = since(mark, (r) => r.provider === 'zoho_books' && r.method === 'DELETE');
    expect(deletes.map((r) => r.path)).toEqual([`/books/v3/creditnotes/${noteId}/refunds/${refundId}`]);
    expect(sandbox.store.get(`zoho_books:creditnotes/${noteId}/refunds`)!.size).toBe(0);
    expect(await refundRecords('zoho_books')).toEqual([expect.objectContaining({ record_id: first.refund.id, status: 'voided', external_id: refundId })]);
    const again = sandbox.requests.length;
    await syncAndDrain('zoho_books');
    expect(since(again, (r) => r.provider === 'zoho_books' && r.method !== 'GET')).toHaveLength(0);
    const twice = await raw('DELETE', `/books/v3/creditnotes/${noteId}/refunds/${refundId}?organization_id=${ZOHO_ORG}`, {
      authorization: 'Zoho-oauthtoken x',
    });
    expect(twice.status).toBe(404);
  });
});

describe('a refund that failed before it was booked', () => {
  it('is never created at any provider; QuickBooks books its note as a CreditMemo', async () => {
    const second = await paidRefund('early@buyer.in');
    await failLater(second.gatewayRefundId, 'evt_early_1');
    expect((await acme.http.GET('/v1/refunds/{id}', { path: { id: second.refund.id } })).body.data.status).toBe('failed');
    const mark = sandbox.requests.length;
    for (const provider of ['quickbooks', 'xero', 'zoho_books'] as const) {
      await syncAndDrain(provider);
      expect((await refundRecords(provider)).map((r) => r.record_id)).not.toContain(second.refund.id);
    }
    const writes = since(mark, (r) => r.method !== 'GET');
    expect(writes.filter((r) => r.path.endsWith('/refundreceipt'))).toHaveLength(0);
    expect(writes.filter((r) => r.path.endsWith('/creditmemo')).map((r) => (r.body as { DocNumber: string }).DocNumber)).toEqual([second.note.number]);
    expect(writes.filter((r) => r.provider === 'xero' && r.path.endsWith('/Payments') && JSON.stringify(r.body).includes('CreditNote'))).toHaveLength(0);
    expect(writes.filter((r) => r.provider === 'zoho_books' && /\/refunds/.test(r.path))).toHaveLength(0);
  });
});
