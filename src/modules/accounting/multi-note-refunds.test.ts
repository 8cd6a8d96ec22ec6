import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKosh, type Tenant, type TestKosh } from '../../../test/support/harness.js';
import { createInvoice, gstinFor } from '../../../test/support/billing.js';
import { connectThroughBrowser, startAccountingSandbox, type AccountingSandbox, type RecordedRequest } from '../../../test/support/accounting-sandbox.js';

/**
 * A refund that pays out the balances of several credit notes (DESIGN §20) is pushed to Xero and
 * Zoho Books against each note with its own share (docs/decisions/0570), not the whole amount
 * against the first note (which would leave that note over-refunded and the other untouched).
 */
let sandbox: AccountingSandbox;
let t: TestKosh;
let acme: Tenant;
let refund: { id: string; amount: number; credit_notes: { credit_note_id: string; amount: number }[] };
let noteA: { id: string; number: string };
let noteB: { id: string; number: string };
const connections: Record<string, string> = {};

const since = (mark: number, filter: (r: RecordedRequest) => boolean) => sandbox.requests.slice(mark).filter(filter);
const body = (r: RecordedRequest | undefined) => r?.body as any; // eslint-disable-line @typescript-eslint/no-explicit-any

async function syncAndDrain(connectionId: string) {
  const res = await acme.http.POST('/v1/accounting/sync', { body: { connection_id: connectionId } });
  expect(res.status, res.text).toBe(202);
  await t.kosh.worker.drain();
}

async function refundRecords(connectionId: string) {
  const res = await acme.http.GET('/v1/accounting/sync-status', { query: { limit: 1000, connection_id: connectionId, record_type: 'refund' } });
  expect(res.status, res.text).toBe(200);
  return res.body.data as { record_id: string; status: string; external_id: string | null; last_error: string | null }[];
}

beforeAll(async () => {
  sandbox = await startAccountingSandbox();
  t = await startTestKosh({ env: sandbox.env() });
  acme = await t.registerTenant({ state_code: '29', gstin: gstinFor('29') });
  const gateway = await acme.http.POST('/v1/gateway-connections', {
    body: { provider: 'test', credentials: { webhook_secret: 'whsec_x' }, currencies: ['INR'] },
  });
  expect(gateway.status, gateway.text).toBe(201);
  const c = await acme.http.POST('/v1/customers', { body: { email: 'mn@buyer.in', name: 'Mysuru Buyer', gstin: gstinFor('29', 'BBBBB2222B1Z') } });
  const customer = c.body.data.id as string;
  expect((await acme.http.POST('/v1/customers/{id}/payment-methods', { path: { id: customer }, body: { token: 'tok_visa' } })).status).toBe(201);
  // ₹1,000 + CGST 9 % + SGST 9 % = ₹1,180.00, paid by card.
  const invoice = await createInvoice(acme, customer, [100_000], { lines: [{ description: 'Pro plan', unit_amount: 100_000, hsn_code: '998314' }] });
  expect(invoice.total).toBe(118_000);
  expect((await acme.http.POST('/v1/invoices/{id}/pay', { path: { id: invoice.id }, body: {} })).status).toBeLessThan(300);
  const [attempt] = (await acme.http.GET('/v1/invoices/{id}/payment-attempts', { path: { id: invoice.id } })).body.data;
  // Two notes on the paid invoice stay as credit: A ₹118.00 (100 + 9 + 9), then B ₹236.00 (200 + 18 + 18).
  const a = await acme.http.POST('/v1/credit-notes', { body: { customer_id: customer, invoice_id: invoice.id, amount: 11_800, reason: 'Late start' } });
  t.clock.advance(60_000);
  const b = await acme.http.POST('/v1/credit-notes', { body: { customer_id: customer, invoice_id: invoice.id, amount: 23_600, reason: 'Outage' } });
  expect([a.status, b.status]).toEqual([201, 201]);
  noteA = { id: a.body.data.id, number: a.body.data.number! };
  noteB = { id: b.body.data.id, number: b.body.data.number! };
  // Zoho Books has the customer, invoice, payment and both notes before the refund is made.
  connections.zoho_books = (await connectThroughBrowser(t, acme, 'zoho_books')).location.searchParams.get('connection_id')!;
  await syncAndDrain(connections.zoho_books);
  // ₹300.00 back without lines: the notes' credit is paid out, oldest first — A 118.00, B 182.00.
  const res = await acme.http.POST('/v1/payments/{id}/refunds', { path: { id: attempt!.payment_id! }, body: { amount: 30_000, reason: 'Credit as cash' } });
  expect(res.status, res.text).toBe(201);
  refund = res.body.data;
  expect(refund.credit_notes).toEqual(
    expect.arrayContaining([
      { credit_note_id: noteA.id, amount: 11_800 },
      { credit_note_id: noteB.id, amount: 18_200 },
    ]),
  );
  await t.kosh.worker.drain(); // the gateway refunds it
  expect((await acme.http.GET('/v1/refunds/{id}', { path: { id: refund.id } })).body.data.status).toBe('succeeded');
  connections.xero = (await connectThroughBrowser(t, acme, 'xero')).location.searchParams.get('connection_id')!;
});
afterAll(async () => {
  await t?.close();
  await sandbox?.close();
});

describe('a refund of several credit notes in the books', () => {
  it('Xero: one payment per note with its share, in one request', async () => {
    const mark = sandbox.requests.length;
    await syncAndDrain(connections.xero!);
    const notes = [...sandbox.store.get('xero:CreditNotes')!.values()];
    const idOf = (n: { number: string }) => notes.find((x) => x.body.CreditNoteNumber === n.number)!.id;
    const puts = since(mark, (r) => r.provider === 'xero' && r.method === 'PUT' && r.path.endsWith('/Payments')).filter((r) =>
      body(r).Payments.some((p: { CreditNote?: unknown }) => p.CreditNote),
    );
    expect(puts).toHaveLength(1);
    expect(body(puts[0]).Payments).toEqual([
      {
        CreditNote: { CreditNoteID: idOf(noteA) },
        Account: { Code: '090' },
        Date: expect.any(String),
        Amount: 118,
        Reference: expect.stringMatching(/^Refund /),
      },
      {
        CreditNote: { CreditNoteID: idOf(noteB) },
        Account: { Code: '090' },
        Date: expect.any(String),
        Amount: 182,
        Reference: expect.stringMatching(/^Refund /),
      },
    ]);
    // ₹118 + ₹182 = ₹300, the refund; each note's payments stored at Xero.
    const stored = [...sandbox.store.get('xero:Payments')!.values()].filter((p) => p.body.CreditNote);
    expect(stored.map((p) => [(p.body.CreditNote as { CreditNoteID: string }).CreditNoteID, p.body.Amount])).toEqual([
      [idOf(noteA), 118],
      [idOf(noteB), 182],
    ]);
    const [record] = await refundRecords(connections.xero!);
    expect(record).toMatchObject({ record_id: refund.id, status: 'synced' });
    expect(record!.external_id!.split(',')).toEqual(stored.map((p) => p.id));

    const again = sandbox.requests.length;
    await syncAndDrain(connections.xero!);
    expect(since(again, (r) => r.provider === 'xero' && r.method !== 'GET')).toHaveLength(0);
  });

  it('Zoho Books: a refund under each note with its share, and a lost answer made no duplicate', async () => {
    const mark = sandbox.requests.length;
    const notesOf = () => [...sandbox.store.get('zoho_books:creditnotes')!.values()];
    expect(notesOf()).toHaveLength(2);
    // The first share's create reaches Zoho, its answer never reaches Kosh: the record waits.
    sandbox.dropAnswer('zoho_books', 1);
    await syncAndDrain(connections.zoho_books!);
    expect((await refundRecords(connections.zoho_books!))[0]).toMatchObject({ record_id: refund.id, status: 'pending' });
    // The next run finds share A under note A by Kosh's mark and makes only share B.
    await syncAndDrain(connections.zoho_books!);
    const idOf = (n: { number: string }) => notesOf().find((x) => x.body.creditnote_number === n.number)!.id;
    const refundsUnder = (note: { number: string }) => [...(sandbox.store.get(`zoho_books:creditnotes/${idOf(note)}/refunds`)?.values() ?? [])];
    expect(refundsUnder(noteA).map((r) => r.body)).toEqual([
      expect.objectContaining({ amount: 118, description: `Kosh refund ${refund.id}`, refund_mode: 'banktransfer' }),
    ]);
    expect(refundsUnder(noteB).map((r) => r.body)).toEqual([expect.objectContaining({ amount: 182, description: `Kosh refund ${refund.id}` })]);
    const posts = since(mark, (r) => r.provider === 'zoho_books' && r.method === 'POST' && /\/creditnotes\/[^/]+\/refunds$/.test(r.path));
    expect(posts.map((r) => body(r).amount)).toEqual([118, 182]);
    const [record] = await refundRecords(connections.zoho_books!);
    expect(record).toMatchObject({ record_id: refund.id, status: 'synced' });
    expect(record!.external_id!.split(',')).toEqual([refundsUnder(noteA)[0]!.id, refundsUnder(noteB)[0]!.id]);
  });
});
