import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKosh, type Tenant, type TestKosh } from '../support/harness.js';
import { createCustomer, createInvoice, gstinFor } from '../support/billing.js';
import { secondActor } from '../support/operators.js';

/**
 * Credit notes tied to an invoice, read through the ledger (docs/ledger.md): a void never
 * reverses what a note already reversed, a note settles its own invoice first, each credited line
 * reverses its own rate, and an expired note's output tax is owed again.
 * The tenant is in Karnataka (29); customers in Maharashtra (27) pay IGST.
 */
let t: TestKosh;
let acme: Tenant;

beforeAll(async () => {
  t = await startTestKosh();
  acme = await t.registerTenant({ gstin: gstinFor('29') });
});
afterAll(() => t.close());

const interState = () => createCustomer(acme, { billing_address: { state_code: '27', country: 'IN' } });
const note = async (body: Record<string, unknown>) => acme.api('POST', '/v1/credit-notes', { reason: 'test', ...body });
const get = async (path: string) => (await acme.api('GET', path)).body.data;

/** Σ credit − Σ debit per account over every entry touching the invoice, for lines tagged with it. */
async function invoiceLedger(invoiceId: string): Promise<Record<number, number>> {
  const entries = await get(`/v1/invoices/${invoiceId}/journal-entries`);
  const net: Record<number, number> = {};
  for (const entry of entries) {
    for (const line of entry.lines) {
      if (line.invoice_id !== invoiceId) continue;
      net[line.account_code] = (net[line.account_code] ?? 0) + line.credit - line.debit;
    }
  }
  return net;
}

async function withApproval<T>(run: () => Promise<T>): Promise<T> {
  await acme.api('PATCH', '/v1/settings', { credit_note_approval_required: true });
  try {
    return await run();
  } finally {
    await acme.api('PATCH', '/v1/settings', { credit_note_approval_required: false });
  }
}

describe('credit notes tied to an invoice', () => {
  describe('void of the invoice', () => {
    it('never reverses GST and revenue twice: a note that credited the whole invoice settles it, and the void is refused', async () => {
      const customer = await interState();
      const inv = await createInvoice(acme, customer, [100_000]); // 1 000.00 + 180.00 IGST
      const cn = await note({ customer_id: customer, invoice_id: inv.id, amount: 118_000 });
      expect(cn.status).toBe(201);
      const voided = await acme.api('POST', `/v1/invoices/${inv.id}/void`);
      expect(voided.status).toBe(409);
      const ledger = await invoiceLedger(inv.id);
      expect(ledger[2120], 'IGST payable of the invoice').toBe(0);
      expect(ledger[4000], 'revenue').toBe(100_000);
      expect(ledger[4900], 'revenue reversed once').toBe(-100_000);
      // The customer keeps no credit that would pay their next invoice.
      const next = await createInvoice(acme, customer, [1_000]);
      expect(next).toMatchObject({ amount_credited: 0, status: 'open' });
    });

    it('voids a pending_approval note with the invoice, so approving it afterwards is refused', async () => {
      const customer = await interState();
      const inv = await createInvoice(acme, customer, [100_000]);
      const pending = await withApproval(async () => (await note({ customer_id: customer, invoice_id: inv.id, amount: 118_000 })).body.data);
      expect(pending.status).toBe('pending_approval');
      expect((await acme.api('POST', `/v1/invoices/${inv.id}/void`)).status).toBe(200);
      expect(await get(`/v1/credit-notes/${pending.id}`)).toMatchObject({ status: 'void', balance: 0, number: null });
      expect((await acme.api('POST', `/v1/credit-notes/${pending.id}/approve`)).status).toBe(409);
      const ledger = await invoiceLedger(inv.id);
      expect(ledger[2120], 'IGST payable of the invoice').toBe(0);
      expect(ledger[4900], 'revenue reversed once').toBe(-100_000);
    });

    it('through gift cancel: the open purchase invoice is voided with its pending note, and the net effect is nil', async () => {
      const buyer = await interState();
      const plan = (await acme.api('POST', '/v1/plans', { name: 'Gifted', interval_unit: 'month', amount: 10_000, currency: 'INR' })).body.data;
      const gift = (
        await acme.api('POST', '/v1/gifts', { plan_id: plan.id, buyer_customer_id: buyer, recipient_email: 'friend@example.in', duration_months: 1 })
      ).body.data;
      const inv = await get(`/v1/invoices/${gift.invoice_id}`);
      const pending = await withApproval(async () => (await note({ customer_id: buyer, invoice_id: inv.id, amount: inv.total })).body.data);
      const canceled = await acme.api('POST', `/v1/gifts/${gift.id}/cancel`);
      expect(canceled.status, canceled.text).toBe(200);
      expect(canceled.body.data.invoice_voided).toBe(true);
      expect((await get(`/v1/credit-notes/${pending.id}`)).status).toBe('void');
      expect((await acme.api('POST', `/v1/credit-notes/${pending.id}/approve`)).status).toBe(409);
      const ledger = await invoiceLedger(inv.id);
      expect([ledger[2120], ledger[1100], ledger[4000]! + ledger[4900]!]).toEqual([0, 0, 0]);
    });

    it("through a quote's invoice: a pending note is voided with it; an issued one has settled it and the void is refused", async () => {
      const customer = await interState();
      const accepted = async () => {
        const quote = (await acme.api('POST', '/v1/quotes', { customer_id: customer, line_items: [{ description: 'Work', quantity: 1, unit_amount: 10_000 }] }))
          .body.data;
        const res = await acme.api('POST', `/v1/quotes/${quote.id}/accept`);
        expect(res.status, res.text).toBe(200);
        return get(`/v1/invoices/${(await get(`/v1/quotes/${quote.id}`)).invoice_id}`);
      };
      const first = await accepted();
      const pending = await withApproval(async () => (await note({ customer_id: customer, invoice_id: first.id, amount: 5_900 })).body.data);
      expect((await acme.api('POST', `/v1/invoices/${first.id}/void`)).status).toBe(200);
      expect((await acme.api('POST', `/v1/credit-notes/${pending.id}/approve`)).status).toBe(409);
      const second = await accepted();
      expect((await note({ customer_id: customer, invoice_id: second.id, amount: 5_900 })).status).toBe(201);
      expect((await acme.api('POST', `/v1/invoices/${second.id}/void`)).status).toBe(409);
      for (const inv of [first, second]) expect((await invoiceLedger(inv.id))[2120], `IGST payable of ${inv.number}`).toBeGreaterThanOrEqual(0);
      expect((await invoiceLedger(first.id))[2120]).toBe(0);
      expect((await invoiceLedger(second.id))[2120]).toBe(900);
    });
  });

  describe('settling its own invoice', () => {
    it('spends the note on its own open invoice first; only the rest becomes customer credit', async () => {
      const customer = await interState();
      const j = await createInvoice(acme, customer, [100_000]); // 1 180.00
      const paid = await acme.api('POST', '/v1/payments/offline', { customer_id: customer, invoice_id: j.id, payment_type: 'bank_transfer', amount: 50_000 });
      expect(paid.status, paid.text).toBe(201);
      const cn = (await note({ customer_id: customer, invoice_id: j.id, amount: 118_000 })).body.data;
      expect(cn).toMatchObject({ status: 'issued', balance: 50_000 });
      expect(await get(`/v1/invoices/${j.id}`)).toMatchObject({ status: 'paid', amount_due: 0, amount_credited: 68_000 });
      const next = await createInvoice(acme, customer, [10_000]); // 118.00
      expect(next).toMatchObject({ status: 'paid', amount_credited: 11_800 });
      expect((await get(`/v1/credit-notes/${cn.id}`)).balance).toBe(38_200);
    });

    it('settles its own invoice when a pending note is approved', async () => {
      const customer = await interState();
      const j = await createInvoice(acme, customer, [100_000]);
      const pending = await withApproval(async () => (await note({ customer_id: customer, invoice_id: j.id, amount: 59_000 })).body.data);
      const approved = await (await secondActor(acme))('POST', `/v1/credit-notes/${pending.id}/approve`);
      expect(approved.body.data).toMatchObject({ status: 'used', balance: 0 });
      expect(await get(`/v1/invoices/${j.id}`)).toMatchObject({ status: 'open', amount_credited: 59_000, amount_due: 59_000 });
    });
  });

  describe('lines of a mixed-rate invoice', () => {
    async function mixedInvoice() {
      const customer = await interState();
      const res = await acme.api('POST', '/v1/invoices', {
        customer_id: customer,
        currency: 'INR',
        lines: [
          { description: 'Software', unit_amount: 10_000, hsn_code: '998314' }, // 18 %: 1 800 IGST
          { description: 'Tea', unit_amount: 10_000, hsn_code: '0902' }, // 5 %: 500 IGST
        ],
      });
      expect(res.status, res.text).toBe(201);
      // Paid, so the notes stay spendable credit and the ledger shows only the reversal.
      await acme.api('POST', '/v1/payments/offline', { customer_id: customer, invoice_id: res.body.data.id, payment_type: 'bank_transfer', amount: 22_300 });
      return { customer, invoice: res.body.data };
    }

    it('credits the named line at its own rate and with its own HSN', async () => {
      const { customer, invoice } = await mixedInvoice();
      const tea = invoice.lines[1];
      const res = await note({ customer_id: customer, invoice_id: invoice.id, lines: [{ invoice_line_id: tea.id, amount: 5_250 }] });
      expect(res.status, res.text).toBe(201);
      expect(res.body.data).toMatchObject({ amount: 5_250, subtotal: 5_000, igst_amount: 250, hsn_code: '0902' });
      expect(res.body.data.lines).toEqual([
        expect.objectContaining({
          invoice_line_id: tea.id,
          hsn_code: '0902',
          tax_rate_bp: 500,
          amount: 5_250,
          subtotal: 5_000,
          igst_amount: 250,
          tax_amount: 250,
        }),
      ]);
      expect((await get(`/v1/credit-notes/${res.body.data.id}`)).lines).toHaveLength(1);
      // What is left of the line is all that can still be credited on it.
      const over = await note({ customer_id: customer, invoice_id: invoice.id, lines: [{ invoice_line_id: tea.id, amount: 5_251 }] });
      expect(over.status).toBe(409);
      const foreign = await note({
        customer_id: customer,
        invoice_id: invoice.id,
        lines: [{ invoice_line_id: '00000000-0000-7000-8000-000000000000', amount: 1 }],
      });
      expect(foreign.status).toBe(400);
    });

    it('spreads a note without lines over every line pro rata, each at its own rate', async () => {
      const { customer, invoice } = await mixedInvoice();
      const res = await note({ customer_id: customer, invoice_id: invoice.id, amount: 11_150 });
      expect(res.status, res.text).toBe(201);
      expect(res.body.data, JSON.stringify(res.body.data.lines)).toMatchObject({ amount: 11_150, subtotal: 10_000, igst_amount: 1_150 });
      expect(res.body.data.lines).toEqual([
        expect.objectContaining({ invoice_line_id: invoice.lines[0].id, hsn_code: '998314', amount: 5_900, subtotal: 5_000, igst_amount: 900 }),
        expect.objectContaining({ invoice_line_id: invoice.lines[1].id, hsn_code: '0902', amount: 5_250, subtotal: 5_000, igst_amount: 250 }),
      ]);
    });
  });

  describe('expiry', () => {
    it('posts the reversed output tax back and writes off only the net to income', async () => {
      const customer = await interState();
      const inv = await createInvoice(acme, customer, [10_000]); // 100.00 + 18.00 IGST
      await acme.api('POST', '/v1/payments/offline', { customer_id: customer, invoice_id: inv.id, payment_type: 'bank_transfer', amount: 11_800 });
      const expiresAt = new Date(t.clock.now().getTime() + 86_400_000).toISOString();
      const cn = (await note({ customer_id: customer, invoice_id: inv.id, amount: 5_900, expires_at: expiresAt })).body.data;
      expect(cn).toMatchObject({ status: 'issued', balance: 5_900, igst_amount: 900 });
      t.clock.advanceDays(2);
      await t.kosh.worker.drain();
      expect(await get(`/v1/credit-notes/${cn.id}`)).toMatchObject({ status: 'expired', balance: 0 });
      const ledger = await invoiceLedger(inv.id);
      expect(ledger[2120], 'the IGST is owed again').toBe(1_800);
      const expiry = (await get(`/v1/invoices/${inv.id}/journal-entries`)).find((e: { kind: string }) => e.kind === 'credit_note.expired');
      expect(expiry.lines.map((l: { account_code: number; debit: number; credit: number }) => [l.account_code, l.debit, l.credit]).sort()).toEqual(
        [
          [2300, 5_900, 0],
          [2120, 0, 900],
          [4100, 0, 5_000],
        ].sort(),
      );
    });
  });
});
