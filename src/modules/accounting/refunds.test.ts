import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKosh, type Tenant, type TestKosh } from '../../../test/support/harness.js';
import { createInvoice, gstinFor } from '../../../test/support/billing.js';
import { connectThroughBrowser, startAccountingSandbox, type AccountingSandbox, type RecordedRequest } from '../../../test/support/accounting-sandbox.js';

/**
 * Refunds of gateway payments in the books (decision 0160), and Zoho Books creates that survive a
 * lost answer without a duplicate.
 */
let sandbox: AccountingSandbox;
let t: TestKosh;
let acme: Tenant;
let customer: string;
let invoice: { id: string; number: string };
let refund: { id: string; credit_note_id: string | null; amount: number };
let noteNumber: string;
const connections: Record<string, string> = {};

const since = (mark: number, filter: (r: RecordedRequest) => boolean) => sandbox.requests.slice(mark).filter(filter);
const body = (r: RecordedRequest | undefined) => r?.body as any; // eslint-disable-line @typescript-eslint/no-explicit-any

async function syncAndDrain(connectionId: string) {
  const res = await acme.http.POST('/v1/accounting/sync', { body: { connection_id: connectionId } });
  expect(res.status, res.text).toBe(202);
  await t.kosh.worker.drain();
  return res.body.data[0]!.id;
}

async function records(query: string) {
  const res = await acme.api('GET', `/v1/accounting/sync-status?limit=1000${query}`);
  expect(res.status, res.text).toBe(200);
  return res.body;
}

beforeAll(async () => {
  sandbox = await startAccountingSandbox();
  t = await startTestKosh({ env: sandbox.env() });
  acme = await t.registerTenant({ state_code: '29', gstin: gstinFor('29') });
  const gateway = await acme.http.POST('/v1/gateway-connections', {
    body: { provider: 'test', credentials: { webhook_secret: 'whsec_x' }, currencies: ['INR'] },
  });
  expect(gateway.status, gateway.text).toBe(201);
  const c = await acme.http.POST('/v1/customers', {
    body: {
      email: 'ka@buyer.in',
      name: 'Bengaluru Buyer',
      gstin: gstinFor('29', 'BBBBB2222B1Z'),
      billing_address: { line1: '1 MG Road', city: 'Bengaluru', state_code: '29', postal_code: '560001', country: 'IN' },
    },
  });
  customer = c.body.data.id;
  expect((await acme.http.POST('/v1/customers/{id}/payment-methods', { path: { id: customer }, body: { token: 'tok_visa' } })).status).toBe(201);
  invoice = await createInvoice(acme, customer, [100_000], { lines: [{ description: 'Pro plan', unit_amount: 100_000, hsn_code: '998314' }] }); // 118 000 with CGST+SGST
  expect((await acme.http.POST('/v1/invoices/{id}/pay', { path: { id: invoice.id }, body: {} })).status).toBeLessThan(300);
  const [attempt] = (await acme.http.GET('/v1/invoices/{id}/payment-attempts', { path: { id: invoice.id } })).body.data;
  const res = await acme.http.POST('/v1/payments/{id}/refunds', { path: { id: attempt!.payment_id! }, body: { amount: 59_000, reason: 'Duplicate seat' } });
  expect(res.status, res.text).toBe(201);
  refund = res.body.data;
  await t.kosh.worker.drain(); // the gateway refunds it
  const note = (await acme.http.GET('/v1/credit-notes/{id}', { path: { id: refund.credit_note_id! } })).body.data;
  expect(note).toMatchObject({ type: 'refund', refund_status: 'processed', subtotal: 50_000, cgst_amount: 4_500, sgst_amount: 4_500 });
  noteNumber = note.number!;
  for (const provider of ['quickbooks', 'xero', 'zoho_books'] as const) {
    connections[provider] = (await connectThroughBrowser(t, acme, provider)).location.searchParams.get('connection_id')!;
  }
});
afterAll(async () => {
  await t?.close();
  await sandbox?.close();
});

describe('refunds in the books', () => {
  it('QuickBooks: one RefundReceipt with the refund note’s GST line, paid from the bank account, and no CreditMemo for it', async () => {
    const mark = sandbox.requests.length;
    await syncAndDrain(connections.quickbooks!);
    const posts = since(mark, (r) => r.provider === 'quickbooks' && r.method === 'POST');
    expect(posts.filter((r) => r.path.endsWith('/creditmemo'))).toHaveLength(0);
    const receipts = posts.filter((r) => r.path.endsWith('/refundreceipt'));
    expect(receipts).toHaveLength(1);
    const customerId = [...sandbox.store.get('quickbooks:customer')!.values()][0]!.id;
    expect(body(receipts[0])).toEqual({
      CustomerRef: { value: customerId },
      DocNumber: noteNumber,
      TxnDate: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
      CurrencyRef: { value: 'INR' },
      GlobalTaxCalculation: 'TaxExcluded',
      PrivateNote: 'Duplicate seat',
      // ₹500 net at GST 18% (CGST 9% + SGST 9%: QuickBooks India's "GST 18%", id 10), ₹90 tax.
      Line: [
        {
          DetailType: 'SalesItemLineDetail',
          Amount: 500,
          Description: 'Duplicate seat',
          SalesItemLineDetail: { ItemRef: { value: '1' }, Qty: 1, UnitPrice: 500, TaxCodeRef: { value: '10' } },
        },
      ],
      TxnTaxDetail: { TotalTax: 90 },
      PaymentRefNum: expect.any(String),
      DepositToAccountRef: { value: '35' },
    });
    expect(receipts[0]!.query.requestid).toBeTruthy();
    const s = await records(`&connection_id=${connections.quickbooks}&record_type=refund`);
    expect(s.data).toEqual([expect.objectContaining({ record_id: refund.id, status: 'synced', external_id: expect.any(String) })]);

    // Re-sync: nothing sent again.
    const again = sandbox.requests.length;
    await syncAndDrain(connections.quickbooks!);
    expect(since(again, (r) => r.provider === 'quickbooks' && r.method === 'POST')).toHaveLength(0);
  });

  it('Xero: the refund credit note, then a payment on it out of the bank account', async () => {
    const mark = sandbox.requests.length;
    await syncAndDrain(connections.xero!);
    const calls = since(mark, (r) => r.provider === 'xero');
    const note = body(calls.find((r) => r.path.endsWith('/CreditNotes'))).CreditNotes[0];
    expect(note).toMatchObject({ Type: 'ACCRECCREDIT', CreditNoteNumber: noteNumber, LineItems: [{ LineAmount: 500, TaxAmount: 90 }] });
    const noteId = [...sandbox.store.get('xero:CreditNotes')!.values()].find((n) => n.body.CreditNoteNumber === noteNumber)!.id;
    const payments = calls
      .filter((r) => r.path.endsWith('/Payments'))
      .map((r) => ({ method: r.method, key: r.headers['idempotency-key'], p: body(r).Payments[0] }));
    const refundPayment = payments.find((p) => p.p.CreditNote);
    expect(refundPayment).toEqual({
      method: 'PUT',
      key: expect.any(String),
      p: {
        CreditNote: { CreditNoteID: noteId },
        Account: { Code: '090' },
        Date: expect.any(String),
        Amount: 590,
        Reference: expect.stringMatching(/^Refund /),
      },
    });
    // The card payment itself was applied to the invoice.
    expect(payments.find((p) => p.p.Invoice)?.p).toMatchObject({ Amount: 1180, Account: { Code: '090' } });
    const s = await records(`&connection_id=${connections.xero}&record_type=refund`);
    expect(s.data).toEqual([expect.objectContaining({ record_id: refund.id, status: 'synced' })]);
  });

  it('Zoho Books: the credit note, then its refund (POST /creditnotes/{id}/refunds)', async () => {
    const mark = sandbox.requests.length;
    await syncAndDrain(connections.zoho_books!);
    const calls = since(mark, (r) => r.provider === 'zoho_books');
    const noteId = [...sandbox.store.get('zoho_books:creditnotes')!.values()].find((n) => n.body.creditnote_number === noteNumber)!.id;
    const refunds = calls.filter((r) => r.method === 'POST' && r.path === `/books/v3/creditnotes/${noteId}/refunds`);
    expect(refunds).toHaveLength(1);
    expect(body(refunds[0])).toEqual({
      date: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
      refund_mode: 'banktransfer',
      reference_number: expect.any(String),
      amount: 590,
      description: `Kosh refund ${refund.id}`,
    });
    const s = await records(`&connection_id=${connections.zoho_books}&record_type=refund`);
    expect(s.data).toEqual([expect.objectContaining({ record_id: refund.id, status: 'synced', external_id: expect.any(String) })]);
  });
});

describe('Zoho Books creates without an idempotency key', () => {
  it('a create whose answer is lost is found again on retry, not made twice (contact, invoice, payment)', async () => {
    // A new customer: the contact create reaches Zoho, the answer never reaches Kosh.
    const c = await acme.http.POST('/v1/customers', { body: { email: 'mh@buyer.in', name: 'Mumbai Buyer', gstin: gstinFor('27', 'CCCCC3333C1Z') } });
    const mh = c.body.data.id as string;
    sandbox.dropAnswer('zoho_books', 1);
    const mark = sandbox.requests.length;
    const runId = await syncAndDrain(connections.zoho_books!);
    const contacts = () => [...sandbox.store.get('zoho_books:contacts')!.values()].filter((r) => String(r.body.contact_name).includes('mh@buyer.in'));
    expect(contacts()).toHaveLength(1); // made at Zoho
    let record = (await records(`&connection_id=${connections.zoho_books}&record_type=customer`)).data.find((r: { record_id: string }) => r.record_id === mh);
    expect(record).toMatchObject({ status: 'pending', external_id: null });
    // The retry looks the contact up by its name before creating, and adopts it.
    t.clock.advance(60_000);
    await t.kosh.worker.drain();
    const run = (await records(`&connection_id=${connections.zoho_books}`)).runs.find((r: { id: string }) => r.id === runId);
    expect(run).toMatchObject({ status: 'succeeded' });
    expect(contacts()).toHaveLength(1);
    record = (await records(`&connection_id=${connections.zoho_books}&record_type=customer`)).data.find((r: { record_id: string }) => r.record_id === mh);
    expect(record).toMatchObject({ status: 'synced', external_id: contacts()[0]!.id });
    const lookups = since(mark, (r) => r.provider === 'zoho_books' && r.method === 'GET' && r.path === '/books/v3/contacts');
    expect(lookups.map((r) => r.query.contact_name)).toEqual([String(contacts()[0]!.body.contact_name)]);

    // An invoice and its offline payment: each create's answer lost once.
    const inv = await createInvoice(acme, mh, [20_000]);
    const pay = await acme.http.POST('/v1/payments/offline', {
      body: {
        customer_id: mh,
        invoice_id: inv.id,
        payment_type: 'bank_transfer',
        amount: inv.total,
        reference_number: 'UTR-MH-1',
      },
    });
    expect(pay.status, pay.text).toBe(201);
    sandbox.dropAnswer('zoho_books', 1);
    await syncAndDrain(connections.zoho_books!);
    t.clock.advance(60_000);
    await t.kosh.worker.drain();
    sandbox.dropAnswer('zoho_books', 1); // the payment's create
    t.clock.advance(60_000);
    await t.kosh.worker.drain();
    t.clock.advance(120_000);
    await t.kosh.worker.drain();
    const invoices = [...sandbox.store.get('zoho_books:invoices')!.values()].filter((r) => r.body.invoice_number === inv.number);
    expect(invoices).toHaveLength(1);
    const payments = [...sandbox.store.get('zoho_books:customerpayments')!.values()].filter((r) => r.body.reference_number === 'UTR-MH-1');
    expect(payments).toHaveLength(1);
    const synced = (await records(`&connection_id=${connections.zoho_books}`)).data.filter((r: { record_id: string }) =>
      [inv.id, pay.body.data.id].includes(r.record_id),
    );
    expect(synced).toEqual([
      expect.objectContaining({ status: 'synced', external_id: expect.any(String) }),
      expect.objectContaining({ status: 'synced', external_id: expect.any(String) }),
    ]);
    expect(synced.map((r: { external_id: string }) => r.external_id).sort()).toEqual([invoices[0]!.id, payments[0]!.id].sort());
  });

  it('the lookup is not made for a create that was never started (no extra calls on a normal sync)', async () => {
    const c = await acme.http.POST('/v1/customers', { body: { email: 'dl@buyer.in', name: 'Delhi Buyer' } });
    expect(c.status).toBe(201);
    const mark = sandbox.requests.length;
    await syncAndDrain(connections.zoho_books!);
    const calls = since(mark, (r) => r.provider === 'zoho_books' && r.path === '/books/v3/contacts');
    expect(calls.map((r) => r.method)).toEqual(['POST']);
  });
});
