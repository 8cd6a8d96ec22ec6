import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKosh, type Tenant, type TestKosh } from '../../../test/support/harness.js';
import { createInvoice, gstinFor } from '../../../test/support/billing.js';
import {
  connectThroughBrowser,
  QBO_REALM,
  QBO_RECEIVABLE_ACCOUNT,
  startAccountingSandbox,
  type AccountingSandbox,
} from '../../../test/support/accounting-sandbox.js';

/**
 * A refund that pays out a credit note already booked in QuickBooks as a CreditMemo is booked as
 * money out of the memo's credit (an Expense to the customer linked to the memo by a Payment,
 * decision 0530), not as a RefundReceipt that reverses the income and GST a second time.
 */
let sandbox: AccountingSandbox;
let t: TestKosh;
let acme: Tenant;
let connection: string;

async function syncAndDrain() {
  const res = await acme.http.POST('/v1/accounting/sync', { body: { connection_id: connection } });
  expect(res.status, res.text).toBe(202);
  await t.kosh.worker.drain();
}

beforeAll(async () => {
  sandbox = await startAccountingSandbox();
  t = await startTestKosh({ env: sandbox.env() });
  acme = await t.registerTenant({ state_code: '29', gstin: gstinFor('29') });
  const gateway = await acme.http.POST('/v1/gateway-connections', {
    body: { provider: 'test', credentials: { webhook_secret: 'whsec_x' }, currencies: ['INR'] },
  });
  expect(gateway.status, gateway.text).toBe(201);
  connection = (await connectThroughBrowser(t, acme, 'quickbooks')).location.searchParams.get('connection_id')!;
});
afterAll(async () => {
  await t?.close();
  await sandbox?.close();
});

describe('QuickBooks: paying out a credit note already synced as a CreditMemo', () => {
  it('counts the credit once: income, GST, A/R and the customer balance, worked by hand', async () => {
    const c = await acme.http.POST('/v1/customers', { body: { email: 'ka@buyer.in', name: 'Bengaluru Buyer', gstin: gstinFor('29', 'BBBBB2222B1Z') } });
    expect(c.status, c.text).toBe(201);
    const customer = c.body.data.id as string;
    expect((await acme.http.POST('/v1/customers/{id}/payment-methods', { path: { id: customer }, body: { token: 'tok_visa' } })).status).toBe(201);
    // ₹1,000 + CGST 9% ₹90 + SGST 9% ₹90 = ₹1,180, paid in full by card.
    const invoice = await createInvoice(acme, customer, [100_000], { lines: [{ description: 'Pro plan', unit_amount: 100_000, hsn_code: '998314' }] });
    expect(invoice.total).toBe(118_000);
    const paid = await acme.http.POST('/v1/invoices/{id}/pay', { path: { id: invoice.id }, body: {} });
    expect(paid.status, paid.text).toBeLessThan(300);
    // A credit note of ₹236 on the line: ₹200 + CGST ₹18 + SGST ₹18.
    const note = await acme.http.POST('/v1/credit-notes', {
      body: {
        customer_id: customer,
        invoice_id: invoice.id,
        lines: [{ invoice_line_id: invoice.lines[0].id, amount: 23_600 }],
      },
    });
    expect(note.status, note.text).toBe(201);
    expect(note.body.data).toMatchObject({ subtotal: 20_000, cgst_amount: 1_800, sgst_amount: 1_800, balance: 23_600 });

    await syncAndDrain();
    const qboCustomer = [...sandbox.store.get('quickbooks:customer')!.values()][0]!.id;
    const memo = [...sandbox.store.get('quickbooks:creditmemo')!.values()];
    expect(memo).toHaveLength(1);
    // Income ₹1,000 − ₹200 = ₹800; GST ₹180 − ₹36 = ₹144; the customer is owed ₹236.
    expect(sandbox.quickbooksBooks()).toEqual({ income: 800, tax: 144, receivable: -236, money: { '35': 1180 }, customers: { [qboCustomer]: -236 } });

    // The credit is paid out as money (back to the card): no new tax document in Kosh.
    const refund = await acme.http.POST('/v1/credit-notes/{id}/refunds', { path: { id: note.body.data.id }, body: { amount: 23_600, reason: 'Cash back' } });
    expect(refund.status, refund.text).toBe(201);
    await t.kosh.worker.drain();
    expect((await acme.http.GET('/v1/refunds/{id}', { path: { id: refund.body.data.id } })).body.data.status).toBe('succeeded');

    const mark = sandbox.requests.length;
    await syncAndDrain();
    // Income and GST as before the refund, not reversed again by a RefundReceipt (the memo reversed them once); ₹236 left the bank
    // (₹1,180 − ₹236 = ₹944); nobody owes anybody: A/R and the customer's balance are 0.
    expect(sandbox.quickbooksBooks()).toEqual({ income: 800, tax: 144, receivable: 0, money: { '35': 944 }, customers: { [qboCustomer]: 0 } });
    const posts = sandbox.requests.slice(mark).filter((r) => r.provider === 'quickbooks' && r.method === 'POST');
    expect(posts.map((r) => r.path.split('/').pop())).toEqual(['purchase', 'payment']);
    const expense = [...sandbox.store.get('quickbooks:purchase')!.values()][0]!;
    expect(expense.body).toMatchObject({
      PaymentType: 'Cash',
      AccountRef: { value: '35' },
      EntityRef: { value: qboCustomer, type: 'Customer' },
      Line: [{ DetailType: 'AccountBasedExpenseLineDetail', Amount: 236, AccountBasedExpenseLineDetail: { AccountRef: { value: QBO_RECEIVABLE_ACCOUNT } } }],
    });
    expect(posts[1]!.body).toMatchObject({
      CustomerRef: { value: qboCustomer },
      TotalAmt: 0,
      Line: [
        { Amount: 236, LinkedTxn: [{ TxnId: expense.id, TxnType: 'Expense' }] },
        { Amount: 236, LinkedTxn: [{ TxnId: memo[0]!.id, TxnType: 'CreditMemo' }] },
      ],
    });
    expect(sandbox.store.get('quickbooks:refundreceipt')?.size ?? 0).toBe(0);
    const status = await acme.http.GET('/v1/accounting/sync-status', { query: { limit: 1000, connection_id: connection, record_type: 'refund' } });
    expect(status.body.data).toEqual([expect.objectContaining({ record_id: refund.body.data.id, status: 'synced', external_id: expect.any(String) })]);

    // Re-sync: nothing sent again.
    const again = sandbox.requests.length;
    await syncAndDrain();
    expect(sandbox.requests.slice(again).filter((r) => r.provider === 'quickbooks' && r.method === 'POST')).toHaveLength(0);
  });

  it('the local QuickBooks refuses a Payment that links a missing transaction or takes more than a CreditMemo has left', async () => {
    const memo = [...sandbox.store.get('quickbooks:creditmemo')!.values()][0]!;
    const expense = [...sandbox.store.get('quickbooks:purchase')!.values()][0]!;
    const customer = (memo.body.CustomerRef as { value: string }).value;
    const post = async (Line: unknown[], TotalAmt = 0) => {
      const res = await fetch(`${sandbox.apiUrl}/v3/company/${QBO_REALM}/payment?minorversion=75`, {
        method: 'POST',
        headers: { authorization: 'Bearer x', 'content-type': 'application/json' },
        body: JSON.stringify({ CustomerRef: { value: customer }, TotalAmt, Line }),
      });
      return { status: res.status, detail: ((await res.json()) as { Fault?: { Error: { Detail: string }[] } }).Fault?.Error[0]?.Detail };
    };
    // The memo's ₹236 and the expense's ₹236 were used up by the payout above.
    expect(await post([{ Amount: 1, LinkedTxn: [{ TxnId: memo.id, TxnType: 'CreditMemo' }] }], -1)).toMatchObject({
      status: 400,
      detail: expect.stringMatching(/remaining credit/),
    });
    expect(await post([{ Amount: 1, LinkedTxn: [{ TxnId: expense.id, TxnType: 'Expense' }] }], 1)).toMatchObject({
      status: 400,
      detail: expect.stringMatching(/has left/),
    });
    expect(await post([{ Amount: 1, LinkedTxn: [{ TxnId: '999999', TxnType: 'CreditMemo' }] }], -1)).toMatchObject({
      status: 400,
      detail: expect.stringMatching(/does not exist/),
    });
  });
});
