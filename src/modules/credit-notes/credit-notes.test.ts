import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKosh, type Tenant, type TestKosh } from '../../../test/support/harness.js';
import { createCustomer, createInvoice, gstinFor } from '../../../test/support/billing.js';
import { secondActor } from '../../../test/support/operators.js';

let t: TestKosh;
let acme: Tenant;
let customer: string;

beforeAll(async () => {
  t = await startTestKosh();
  acme = await t.registerTenant({ gstin: gstinFor('29') });
  customer = await createCustomer(acme, { billing_address: { state_code: '27', country: 'IN' } }); // inter-state: IGST
});
afterAll(() => t.close());

const note = (body: Record<string, unknown>) => acme.http.POST('/v1/credit-notes', { body: { customer_id: customer, reason: 'goodwill', ...body } });
const balanceOf = async (id: string) => (await acme.http.GET('/v1/credit-notes/{id}', { path: { id } })).body.data;

describe('credit notes', () => {
  describe('create', () => {
    it('reverses the invoice tax pro rata, carries its tax type and HSN, and settles its own open invoice', async () => {
      const inv = await createInvoice(acme, customer, [10_000]); // 10 000 + 1 800 IGST
      const res = await note({ invoice_id: inv.id, amount: 5_900, reason: 'half refund' });
      expect(res.status).toBe(201);
      expect(res.body.data).toMatchObject({
        status: 'used',
        amount: 5_900,
        subtotal: 5_000,
        igst_amount: 900,
        cgst_amount: 0,
        tax_amount: 900,
        tax_type: 'inter_state',
        hsn_code: '998314',
        balance: 0,
        type: 'adjustment',
        refund_status: 'none',
        invoice_id: inv.id,
        entity_id: inv.entity_id,
      });
      expect(res.body.data.number).toMatch(/^CN-\d{6}$/);
    });

    it('makes a standalone goodwill credit with subtotal 0 and no tax', async () => {
      const res = await note({ amount: 1_000 });
      expect(res.body.data).toMatchObject({ subtotal: 0, tax_amount: 0, tax_type: '', invoice_id: null, balance: 1_000 });
    });

    it('splits each partial note against what earlier notes left, so together they never reverse more than the invoice charged', async () => {
      const inv = await createInvoice(acme, customer, [6]); // 6 + 1 IGST (1.08 rounded) = 7
      expect(inv).toMatchObject({ subtotal: 6, igst_amount: 1, total: 7 });
      // Each split against the whole invoice would round IGST to 0 three times and credit a
      // taxable value of 7 against an invoice of 6.
      const notes: { subtotal: number; igst_amount: number; tax_amount: number; amount: number }[] = [];
      for (const amount of [2, 2, 3]) notes.push((await note({ invoice_id: inv.id, amount })).body.data);
      const sum = (key: 'subtotal' | 'igst_amount' | 'amount') => notes.reduce((total, n) => total + n[key], 0);
      expect({ subtotal: sum('subtotal'), igst_amount: sum('igst_amount'), amount: sum('amount') }).toEqual({ subtotal: 6, igst_amount: 1, amount: 7 });
      for (const n of notes) expect(n.subtotal + n.tax_amount).toBe(n.amount);
    });

    it('refuses more credit than the invoice has left', async () => {
      const inv = await createInvoice(acme, customer, [1_000]); // 1 180
      expect((await note({ invoice_id: inv.id, amount: 1_000 })).status).toBe(201);
      const res = await note({ invoice_id: inv.id, amount: 181 });
      expect(res.status).toBe(409);
    });

    it('embeds the customer with expand=customer', async () => {
      const created = await note({ amount: 10 });
      const res = await acme.http.GET('/v1/credit-notes/{id}', { path: { id: created.body.data.id }, query: { expand: 'customer' } });
      expect(res.body.data.customer).toMatchObject({ id: customer });
      expect((await acme.http.GET('/v1/credit-notes/{id}', { path: { id: created.body.data.id } })).body.data.customer).toBeUndefined();
    });
  });

  describe('apply', () => {
    it('spends the balance on an open invoice and is used at zero', async () => {
      const cn = (await note({ amount: 2_000 })).body.data;
      const inv = await createInvoice(acme, customer, [10_000], { auto_finalize: false });
      // Drafts cannot take credit.
      expect((await acme.http.POST('/v1/credit-notes/{id}/apply', { path: { id: cn.id }, body: { invoice_id: inv.id, amount: 500 } })).status).toBe(409);
    });

    it('is applied automatically when the next invoice is finalized, soonest-expiring first', async () => {
      const fresh = await createCustomer(acme);
      const later = (await acme.http.POST('/v1/credit-notes', { body: { customer_id: fresh, amount: 300, expires_at: '2027-01-01T00:00:00Z' } })).body.data;
      const sooner = (await acme.http.POST('/v1/credit-notes', { body: { customer_id: fresh, amount: 200, expires_at: '2026-06-01T00:00:00Z' } })).body.data;
      const inv = await createInvoice(acme, fresh, [300]); // 354 with IGST? customer has no state → supplier state → intra: 27+27
      expect(inv.amount_credited).toBe(354);
      expect(inv.amount_due).toBe(0);
      expect(inv.status).toBe('paid');
      expect(await balanceOf(sooner.id)).toMatchObject({ balance: 0, status: 'used' });
      expect((await balanceOf(later.id)).balance).toBe(146);
    });

    it("refuses more than the balance or the amount due (409) and another customer's invoice (400)", async () => {
      // An invoice created before the credit exists takes none of it automatically.
      const buyer = await createCustomer(acme, { billing_address: { state_code: '27', country: 'IN' } });
      const inv = await createInvoice(acme, buyer, [100]); // 118
      const cn = (await acme.http.POST('/v1/credit-notes', { body: { customer_id: buyer, amount: 1_000 } })).body.data;
      const fresh = await createCustomer(acme);
      const foreign = await createInvoice(acme, fresh, [100]);
      expect((await acme.http.POST('/v1/credit-notes/{id}/apply', { path: { id: cn.id }, body: { invoice_id: inv.id, amount: 119 } })).status).toBe(409);
      expect((await acme.http.POST('/v1/credit-notes/{id}/apply', { path: { id: cn.id }, body: { invoice_id: foreign.id, amount: 10 } })).status).toBe(400);
      const ok = await acme.http.POST('/v1/credit-notes/{id}/apply', { path: { id: cn.id }, body: { invoice_id: inv.id, amount: 118 } });
      expect(ok.status).toBe(200);
      expect(ok.body.data.balance).toBe(882);
      expect((await acme.http.GET('/v1/invoices/{id}', { path: { id: inv.id } })).body.data).toMatchObject({ status: 'paid', amount_credited: 118 });
    });
  });

  describe('void, approval and expiry', () => {
    it('voids only while unused', async () => {
      const unused = (await note({ amount: 500 })).body.data;
      expect((await acme.http.POST('/v1/credit-notes/{id}/void', { path: { id: unused.id } })).body.data).toMatchObject({ status: 'void', balance: 0 });
      expect((await acme.http.POST('/v1/credit-notes/{id}/void', { path: { id: unused.id } })).status).toBe(409);
      const buyer = await createCustomer(acme);
      const inv = await createInvoice(acme, buyer, [100]);
      const spent = (await acme.http.POST('/v1/credit-notes', { body: { customer_id: buyer, amount: 500 } })).body.data;
      expect((await acme.http.POST('/v1/credit-notes/{id}/apply', { path: { id: spent.id }, body: { invoice_id: inv.id, amount: 10 } })).status).toBe(200);
      const res = await acme.http.POST('/v1/credit-notes/{id}/void', { path: { id: spent.id } });
      expect(res.status).toBe(409);
    });

    it('waits for approval under governance, numbering only at approval', async () => {
      await acme.http.PATCH('/v1/settings', { body: { credit_note_approval_required: true } });
      const pending = (await note({ amount: 700 })).body.data;
      expect(pending).toMatchObject({ status: 'pending_approval', number: null });
      expect(
        (
          await acme.http.POST('/v1/credit-notes/{id}/apply', {
            path: { id: pending.id },
            body: { invoice_id: '00000000-0000-7000-8000-000000000000', amount: 1 },
          })
        ).status,
      ).toBe(404);
      const approver = await secondActor(acme);
      const approved = await approver('POST', `/v1/credit-notes/${pending.id}/approve`);
      expect(approved.body.data).toMatchObject({ status: 'issued' });
      expect(approved.body.data.number).toMatch(/^CN-/);
      expect((await approver('POST', `/v1/credit-notes/${pending.id}/approve`)).status).toBe(409);
      const rejected = (await note({ amount: 1 })).body.data;
      expect((await acme.http.POST('/v1/credit-notes/{id}/reject', { path: { id: rejected.id } })).body.data.status).toBe('rejected');
      await acme.http.PATCH('/v1/settings', { body: { credit_note_approval_required: false } });
    });

    it('expires the unspent balance at expires_at through the job', async () => {
      const cn = (await note({ amount: 900, expires_at: new Date(t.clock.now().getTime() + 86_400_000).toISOString() })).body.data;
      await t.kosh.worker.drain();
      expect((await balanceOf(cn.id)).status).toBe('issued');
      t.clock.advanceDays(2);
      await t.kosh.worker.drain();
      expect(await balanceOf(cn.id)).toMatchObject({ status: 'expired', balance: 0 });
    });
  });

  it("answers 404 for another tenant's credit note", async () => {
    const other = await t.registerTenant();
    const theirs = await other.http.POST('/v1/credit-notes', { body: { customer_id: await createCustomer(other), amount: 5 } });
    expect((await acme.http.GET('/v1/credit-notes/{id}', { path: { id: theirs.body.data.id } })).status).toBe(404);
    expect((await acme.http.POST('/v1/credit-notes/{id}/void', { path: { id: theirs.body.data.id } })).status).toBe(404);
  });
});
