import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKosh, type Tenant, type TestKosh } from '../support/harness.js';
import { createCustomer, createInvoice, gstinFor } from '../support/billing.js';
import { secondActor } from '../support/operators.js';

/**
 * Credit notes tied to an invoice, read through the ledger (docs/ledger.md): a void never
 * reverses what a note already reversed, a note settles its own invoice first, each credited line
 * reverses its own rate, and an expired note's tax reduction stands (decision 0620).
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
  await acme.http.PATCH('/v1/settings', { body: { credit_note_approval_required: true } });
  try {
    return await run();
  } finally {
    await acme.http.PATCH('/v1/settings', { body: { credit_note_approval_required: false } });
  }
}

describe('credit notes tied to an invoice', () => {
  describe('void of the invoice', () => {
    it('never reverses GST and revenue twice: a note that credited the whole invoice settles it, and the void is refused', async () => {
      const customer = await interState();
      const inv = await createInvoice(acme, customer, [100_000]); // 1 000.00 + 180.00 IGST
      const cn = await note({ customer_id: customer, invoice_id: inv.id, amount: 118_000 });
      expect(cn.status).toBe(201);
      const voided = await acme.http.POST('/v1/invoices/{id}/void', { path: { id: inv.id } });
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
      expect((await acme.http.POST('/v1/invoices/{id}/void', { path: { id: inv.id } })).status).toBe(200);
      expect(await get(`/v1/credit-notes/${pending.id}`)).toMatchObject({ status: 'void', balance: 0, number: null });
      expect((await acme.http.POST('/v1/credit-notes/{id}/approve', { path: { id: pending.id } })).status).toBe(409);
      const ledger = await invoiceLedger(inv.id);
      expect(ledger[2120], 'IGST payable of the invoice').toBe(0);
      expect(ledger[4900], 'revenue reversed once').toBe(-100_000);
    });

    it('through gift cancel: the open purchase invoice is voided with its pending note, and the net effect is nil', async () => {
      const buyer = await interState();
      const plan = (await acme.http.POST('/v1/plans', { body: { name: 'Gifted', interval_unit: 'month', amount: 10_000, currency: 'INR' } })).body.data;
      const gift = (
        await acme.http.POST('/v1/gifts', { body: { plan_id: plan.id, buyer_customer_id: buyer, recipient_email: 'friend@example.in', duration_months: 1 } })
      ).body.data;
      const inv = await get(`/v1/invoices/${gift.invoice_id}`);
      const pending = await withApproval(async () => (await note({ customer_id: buyer, invoice_id: inv.id, amount: inv.total })).body.data);
      const canceled = await acme.http.POST('/v1/gifts/{id}/cancel', { path: { id: gift.id } });
      expect(canceled.status, canceled.text).toBe(200);
      expect(canceled.body.data.invoice_voided).toBe(true);
      expect((await get(`/v1/credit-notes/${pending.id}`)).status).toBe('void');
      expect((await acme.http.POST('/v1/credit-notes/{id}/approve', { path: { id: pending.id } })).status).toBe(409);
      const ledger = await invoiceLedger(inv.id);
      expect([ledger[2120], ledger[1100], ledger[4000]! + ledger[4900]!]).toEqual([0, 0, 0]);
    });

    it("through a quote's invoice: a pending note is voided with it; an issued one has settled it and the void is refused", async () => {
      const customer = await interState();
      const accepted = async () => {
        const quote = (
          await acme.http.POST('/v1/quotes', { body: { customer_id: customer, line_items: [{ description: 'Work', quantity: 1, unit_amount: 10_000 }] } })
        ).body.data;
        const res = await acme.http.POST('/v1/quotes/{id}/accept', { path: { id: quote.id } });
        expect(res.status, res.text).toBe(200);
        return get(`/v1/invoices/${(await get(`/v1/quotes/${quote.id}`)).invoice_id}`);
      };
      const first = await accepted();
      const pending = await withApproval(async () => (await note({ customer_id: customer, invoice_id: first.id, amount: 5_900 })).body.data);
      expect((await acme.http.POST('/v1/invoices/{id}/void', { path: { id: first.id } })).status).toBe(200);
      expect((await acme.http.POST('/v1/credit-notes/{id}/approve', { path: { id: pending.id } })).status).toBe(409);
      const second = await accepted();
      expect((await note({ customer_id: customer, invoice_id: second.id, amount: 5_900 })).status).toBe(201);
      expect((await acme.http.POST('/v1/invoices/{id}/void', { path: { id: second.id } })).status).toBe(409);
      for (const inv of [first, second]) expect((await invoiceLedger(inv.id))[2120], `IGST payable of ${inv.number}`).toBeGreaterThanOrEqual(0);
      expect((await invoiceLedger(first.id))[2120]).toBe(0);
      expect((await invoiceLedger(second.id))[2120]).toBe(900);
    });
  });

  describe('settling its own invoice', () => {
    it('spends the note on its own open invoice first; only the rest becomes customer credit', async () => {
      const customer = await interState();
      const j = await createInvoice(acme, customer, [100_000]); // 1 180.00
      const paid = await acme.http.POST('/v1/payments/offline', {
        body: { customer_id: customer, invoice_id: j.id, payment_type: 'bank_transfer', amount: 50_000 },
      });
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
      const res = await acme.http.POST('/v1/invoices', {
        body: {
          customer_id: customer,
          currency: 'INR',
          lines: [
            { description: 'Software', unit_amount: 10_000, hsn_code: '998314' }, // 18 %: 1 800 IGST
            { description: 'Tea', unit_amount: 10_000, hsn_code: '0902' }, // 5 %: 500 IGST
          ],
        },
      });
      expect(res.status, res.text).toBe(201);
      // Paid, so the notes stay spendable credit and the ledger shows only the reversal.
      await acme.http.POST('/v1/payments/offline', {
        body: { customer_id: customer, invoice_id: res.body.data.id, payment_type: 'bank_transfer', amount: 22_300 },
      });
      return { customer, invoice: res.body.data };
    }

    it('credits the named line at its own rate and with its own HSN', async () => {
      const { customer, invoice } = await mixedInvoice();
      const tea = invoice.lines[1]!;
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
        expect.objectContaining({ invoice_line_id: invoice.lines[0]!.id, hsn_code: '998314', amount: 5_900, subtotal: 5_000, igst_amount: 900 }),
        expect.objectContaining({ invoice_line_id: invoice.lines[1]!.id, hsn_code: '0902', amount: 5_250, subtotal: 5_000, igst_amount: 250 }),
      ]);
    });
  });

  describe('expiry', () => {
    /**
     * Decision 0620: the note's tax reduction stands when its credit lapses unused. A registered
     * buyer in Maharashtra (inter-state, IGST 18 %): invoice ₹100.00 + ₹18.00 IGST, paid; a note of
     * ₹59.00 (₹50.00 + ₹9.00 IGST) the same day, expiring in the next month. Its month's GSTR-1
     * lists the note in cdnr and 3.1(a) shows IGST 18.00 − 9.00 = 9.00; the expiry posts
     * Dr 2300 59.00 / Cr 4100 59.00 and no tax, so 2120 keeps 9.00 for the invoice and the expiry
     * month's returns declare nothing of it (3.1(a) IGST 0, no debit note), as its ledger (2120
     * moved 0 that month) says.
     */
    it('writes the whole balance off to income: the tax reduction stands and no return declares the expiry', async () => {
      const buyer = await createCustomer(acme, {
        gstin: gstinFor('27', 'EEEEE5555E1Z'),
        billing_address: { line1: '2 Nariman Point', city: 'Mumbai', postal_code: '400021', state_code: '27', country: 'IN' },
      });
      const entity = (await get('/v1/entities'))[0] as { id: string; time_zone: string };
      const monthOf = (iso: string) => {
        const d = new Date(new Date(iso).getTime() + 330 * 60_000); // IST
        return `${String(d.getUTCMonth() + 1).padStart(2, '0')}${d.getUTCFullYear()}`;
      };
      const inv = await createInvoice(acme, buyer, [10_000]); // 100.00 + 18.00 IGST
      await acme.http.POST('/v1/payments/offline', { body: { customer_id: buyer, invoice_id: inv.id, payment_type: 'bank_transfer', amount: 11_800 } });
      const noteMonth = monthOf(t.clock.now().toISOString());
      const expiresAt = new Date(t.clock.now().getTime() + 40 * 86_400_000).toISOString();
      const cn = (await note({ customer_id: buyer, invoice_id: inv.id, amount: 5_900, expires_at: expiresAt })).body.data;
      expect(cn).toMatchObject({ status: 'issued', balance: 5_900, subtotal: 5_000, igst_amount: 900 });
      const gstr1 = await get(`/v1/gst/gstr1?entity_id=${entity.id}&period=${noteMonth}`);
      const listed = (gstr1.cdnr as { nt: { nt_num: string; ntty: string; itms: { itm_det: { txval: number; iamt: number } }[] }[] }[])
        .flatMap((g) => g.nt)
        .find((n) => n.nt_num === cn.number);
      expect(listed, 'the note is in cdnr of its month').toMatchObject({ ntty: 'C', itms: [{ itm_det: { txval: 50, iamt: 9 } }] });

      t.clock.advanceDays(41);
      await t.kosh.worker.drain();
      expect(await get(`/v1/credit-notes/${cn.id}`)).toMatchObject({ status: 'expired', balance: 0 });
      const expiry = (await get('/v1/ledger/journal-entries?kind=credit_note.expired')).find((e: { reference_id: string }) => e.reference_id === cn.id);
      expect(expiry, 'the expiry is journaled').toBeDefined();
      expect(expiry.lines.map((l: { account_code: number; debit: number; credit: number }) => [l.account_code, l.debit, l.credit]).sort()).toEqual(
        [
          [2300, 5_900, 0],
          [4100, 0, 5_900],
        ].sort(),
      );
      expect((await invoiceLedger(inv.id))[2120], 'IGST of the invoice: 18.00 charged − 9.00 credited, nothing posted back').toBe(900);

      const expiryMonth = monthOf(expiry.posted_at);
      expect(expiryMonth, 'the note expired in a later month').not.toBe(noteMonth);
      const later = await get(`/v1/gst/gstr1?entity_id=${entity.id}&period=${expiryMonth}`);
      const notesLater = (later.cdnr as { nt: { nt_num: string }[] }[]).flatMap((g) => g.nt);
      expect(notesLater, 'no credit or debit note for the expiry').toEqual([]);
      const gstr3b = await get(`/v1/gst/gstr3b?entity_id=${entity.id}&period=${expiryMonth}`);
      expect(gstr3b.sup_details.osup_det.iamt, 'no IGST declared for the expiry').toBe(0);
    });
  });
});
