/**
 * Offline refunds paid out by hand (docs/decisions/0570): a refund of a bank-transfer payment is
 * booked at creation as Dr 2300 customer credit / Cr 2320 refunds payable and waits, `pending`,
 * until someone pays it. `POST /v1/refunds/{id}/mark_paid` records the payout (Dr 2320 / Cr 1000,
 * refund.succeeded) and `mark_failed` that it will not be paid (the credit goes back to the notes).
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCustomer, createInvoice, gstinFor } from '../support/billing.js';
import { startTestKosh, type Tenant, type TestKosh } from '../support/harness.js';
import { secondActor } from '../support/operators.js';

let t: TestKosh;
let acme: Tenant;

beforeAll(async () => {
  t = await startTestKosh();
  acme = await t.registerTenant({ gstin: gstinFor('29') });
});
afterAll(async () => {
  await t?.close();
});

/** Net debit (− credit) per account of the entries of one kind and reference. */
async function linesOf(referenceId: string, kind: string): Promise<Record<number, number>> {
  const { rows } = await sql<{ account_code: number; net: string }>`
    SELECT l.account_code, sum(l.debit - l.credit)::text AS net FROM journal_lines l JOIN journal_entries e ON e.tenant_id = l.tenant_id AND e.id = l.entry_id
    WHERE e.tenant_id = ${acme.tenantId} AND e.reference_id = ${referenceId} AND e.kind = ${kind} GROUP BY l.account_code`.execute(t.database.db);
  return Object.fromEntries(rows.map((r) => [r.account_code, Number(r.net)]));
}

/** Net debit (− credit) of an account over all of the customer's lines. */
async function customerBalance(customerId: string, account: number): Promise<number> {
  const { rows } = await sql<{ net: string }>`
    SELECT coalesce(sum(debit - credit), 0)::text AS net FROM journal_lines
    WHERE tenant_id = ${acme.tenantId} AND customer_id = ${customerId} AND account_code = ${account}`.execute(t.database.db);
  return Number(rows[0]!.net);
}

async function entriesOf(referenceId: string): Promise<string[]> {
  const { rows } = await sql<{ kind: string }>`
    SELECT kind FROM journal_entries WHERE tenant_id = ${acme.tenantId} AND reference_id = ${referenceId} ORDER BY posted_at, kind`.execute(t.database.db);
  return rows.map((r) => r.kind);
}

async function eventTypes(objectId: string): Promise<string[]> {
  const res = await acme.http.GET('/v1/events', { query: { object_id: objectId, limit: 100 } });
  return res.body.data.map((e: { type: string }) => e.type);
}

/** An intra-state invoice of ₹1,000 + CGST 9 % + SGST 9 % = ₹1,180.00, paid by bank transfer. */
async function paidOffline(): Promise<{ customer: string; invoice: string; payment: string }> {
  const customer = await createCustomer(acme, { gstin: gstinFor('29', 'BBBBB2222B1Z') });
  const inv = await createInvoice(acme, customer, [100_000]);
  expect(inv.total).toBe(118_000);
  const payment = await acme.http.POST('/v1/payments/offline', {
    body: { customer_id: customer, invoice_id: inv.id, payment_type: 'bank_transfer', amount: 118_000 },
  });
  expect(payment.status, payment.text).toBe(201);
  return { customer, invoice: inv.id, payment: payment.body.data.id };
}

describe('offline refunds', () => {
  describe('mark_paid', () => {
    it('records the payout once: succeeded, Dr 2320 / Cr 1000, refund.succeeded, audited', async () => {
      const { customer, payment } = await paidOffline();
      // ₹590.00 back: a refund note of 500.00 + 45.00 + 45.00, owed by hand (2320).
      const res = await acme.http.POST('/v1/payments/{id}/refunds', { path: { id: payment }, body: { amount: 59_000, reason: 'Half the seats cancelled' } });
      expect(res.status, res.text).toBe(201);
      const refund = res.body.data;
      expect(refund).toMatchObject({ status: 'pending', gateway: null, paid_at: null, reference: null });
      expect(await linesOf(refund.id, 'refund.created')).toEqual({ 2300: 59_000, 2320: -59_000 });
      // Received ₹1,180 in cash; ₹590 owed back.
      expect(await customerBalance(customer, 1000)).toBe(118_000);
      expect(await customerBalance(customer, 2320)).toBe(-59_000);

      t.clock.advance(2 * 24 * 3_600_000);
      const paidAt = new Date(t.clock.now().getTime() - 3_600_000).toISOString();
      const paid = await acme.http.POST('/v1/refunds/{id}/mark_paid', { path: { id: refund.id }, body: { reference: 'UTR-HDFC-000123', paid_at: paidAt } });
      expect(paid.status, paid.text).toBe(200);
      expect(paid.body.data).toMatchObject({ id: refund.id, status: 'succeeded', reference: 'UTR-HDFC-000123', paid_at: paidAt, amount: 59_000 });
      expect((await acme.http.GET('/v1/refunds/{id}', { path: { id: refund.id } })).body.data).toMatchObject({
        status: 'succeeded',
        reference: 'UTR-HDFC-000123',
      });
      expect((await acme.http.GET('/v1/credit-notes/{id}', { path: { id: refund.credit_note_id! } })).body.data.refund_status).toBe('processed');

      // The payout moves refunds payable to cash; the creation entry is not posted again.
      expect(await linesOf(refund.id, 'refund.paid')).toEqual({ 2320: 59_000, 1000: -59_000 });
      expect(await entriesOf(refund.id)).toEqual(['refund.created', 'refund.paid']);
      // Cash 1,180 − 590 = 590; nothing owed any more; the customer's credit 0 (paid out).
      expect(await customerBalance(customer, 1000)).toBe(59_000);
      expect(await customerBalance(customer, 2320)).toBe(0);
      expect(await customerBalance(customer, 2300)).toBe(0);
      expect(await eventTypes(refund.id)).toEqual(expect.arrayContaining(['refund.created', 'refund.succeeded']));

      const audit = await acme.http.GET('/v1/audit-log', { query: { object_id: refund.id } });
      expect(audit.status, audit.text).toBe(200);
      const record = (audit.body.data as { action: string; object_type: string; changes: Record<string, { from: unknown; to: unknown }> }[]).find(
        (r) => r.action === 'refund.mark_paid',
      );
      expect(record?.object_type).toBe('refund');
      expect(record?.changes.status).toEqual({ from: 'pending', to: 'succeeded' });
      expect(record?.changes.reference).toEqual({ from: null, to: 'UTR-HDFC-000123' });

      // Final: a second mark_paid or a mark_failed is refused, and books nothing.
      const again = await acme.http.POST('/v1/refunds/{id}/mark_paid', { path: { id: refund.id }, body: { reference: 'UTR-HDFC-000124' } });
      expect(again.status).toBe(409);
      expect(again.error!.reason).toBe('refund_succeeded');
      expect((await acme.http.POST('/v1/refunds/{id}/mark_failed', { path: { id: refund.id }, body: {} })).error!.reason).toBe('refund_succeeded');
      expect(await entriesOf(refund.id)).toEqual(['refund.created', 'refund.paid']);
    });

    it("pays out a refund of a credit note's balance", async () => {
      const { invoice } = await paidOffline();
      const customer = (await acme.http.GET('/v1/invoices/{id}', { path: { id: invoice } })).body.data.customer_id;
      // A note of ₹236.00 (200.00 + 18.00 + 18.00) on the paid invoice stays as credit.
      const note = await acme.http.POST('/v1/credit-notes', { body: { customer_id: customer, invoice_id: invoice, amount: 23_600, reason: 'Goodwill' } });
      expect(note.status, note.text).toBe(201);
      const res = await acme.http.POST('/v1/credit-notes/{id}/refunds', {
        path: { id: note.body.data.id },
        body: { amount: 10_000, reason: 'Goodwill payout' },
      });
      expect(res.status, res.text).toBe(201);
      expect(res.body.data).toMatchObject({ gateway: null, status: 'pending', credit_note_issued: false });
      const paid = await acme.http.POST('/v1/refunds/{id}/mark_paid', { path: { id: res.body.data.id }, body: { reference: 'CHQ 004512' } });
      expect(paid.status, paid.text).toBe(200);
      expect(paid.body.data.paid_at).toBe(t.clock.now().toISOString());
      expect(await linesOf(res.body.data.id, 'refund.paid')).toEqual({ 2320: 10_000, 1000: -10_000 });
      // The note keeps 236.00 − 100.00 = 136.00 of credit.
      expect((await acme.http.GET('/v1/credit-notes/{id}', { path: { id: note.body.data.id } })).body.data.balance).toBe(13_600);
    });

    it('refuses a gateway refund, a date in the future or before the refund, and an unknown id', async () => {
      const customer = await createCustomer(acme, { gstin: gstinFor('29', 'BBBBB2222B1Z') });
      expect((await acme.http.POST('/v1/customers/{id}/payment-methods', { path: { id: customer }, body: { token: 'tok_visa' } })).status).toBe(201);
      const inv = await createInvoice(acme, customer, [10_000]);
      expect((await acme.http.POST('/v1/invoices/{id}/pay', { path: { id: inv.id }, body: {} })).status).toBe(200);
      const [card] = (await acme.http.GET('/v1/payments', { query: { invoice_id: inv.id } })).body.data;
      expect(card!.gateway).toBe('test');
      const viaGateway = await acme.http.POST('/v1/payments/{id}/refunds', { path: { id: card!.id }, body: { amount: 1_180, reason: 'Overcharged' } });
      expect(viaGateway.status, viaGateway.text).toBe(201);
      const refused = await acme.http.POST('/v1/refunds/{id}/mark_paid', { path: { id: viaGateway.body.data.id }, body: { reference: 'X' } });
      expect(refused.status).toBe(409);
      expect(refused.error!.reason).toBe('refund_not_offline');
      expect((await acme.http.POST('/v1/refunds/{id}/mark_failed', { path: { id: viaGateway.body.data.id }, body: {} })).error!.reason).toBe(
        'refund_not_offline',
      );
      expect(await entriesOf(viaGateway.body.data.id)).toEqual(['refund.created']);

      const { payment } = await paidOffline();
      const offline = (await acme.http.POST('/v1/payments/{id}/refunds', { path: { id: payment }, body: { amount: 1_000, reason: 'r' } })).body.data;
      const future = new Date(t.clock.now().getTime() + 60_000).toISOString();
      const ahead = await acme.http.POST('/v1/refunds/{id}/mark_paid', { path: { id: offline.id }, body: { reference: 'UTR1', paid_at: future } });
      expect(ahead.status).toBe(400);
      expect(ahead.error!.details![0]!.field).toBe('paid_at');
      const before = new Date(t.clock.now().getTime() - 60_000).toISOString();
      expect((await acme.http.POST('/v1/refunds/{id}/mark_paid', { path: { id: offline.id }, body: { reference: 'UTR1', paid_at: before } })).status).toBe(400);
      expect((await acme.http.POST('/v1/refunds/{id}/mark_paid', { path: { id: offline.id }, body: { reference: '' } })).status).toBe(400);
      expect(
        (await acme.http.POST('/v1/refunds/{id}/mark_paid', { path: { id: '00000000-0000-4000-8000-000000000000' }, body: { reference: 'UTR1' } })).status,
      ).toBe(404);
      const other = await t.registerTenant();
      expect((await other.http.POST('/v1/refunds/{id}/mark_paid', { path: { id: offline.id }, body: { reference: 'UTR1' } })).status).toBe(404);
      expect((await acme.http.GET('/v1/refunds/{id}', { path: { id: offline.id } })).body.data.status).toBe('pending');
    });

    it('refuses a refund whose note still waits for approval (nothing is owed yet)', async () => {
      const { payment } = await paidOffline();
      await acme.http.PATCH('/v1/settings', { body: { credit_note_approval_required: true } });
      try {
        const res = await acme.http.POST('/v1/payments/{id}/refunds', { path: { id: payment }, body: { amount: 11_800, reason: 'r' } });
        expect(res.status, res.text).toBe(201);
        expect(await entriesOf(res.body.data.id)).toEqual([]);
        const early = await acme.http.POST('/v1/refunds/{id}/mark_paid', { path: { id: res.body.data.id }, body: { reference: 'UTR9' } });
        expect(early.status).toBe(409);
        expect(early.error!.reason).toBe('refund_awaiting_approval');
        expect((await (await secondActor(acme))('POST', `/v1/credit-notes/${res.body.data.credit_note_id}/approve`)).status).toBe(200);
        expect((await acme.http.POST('/v1/refunds/{id}/mark_paid', { path: { id: res.body.data.id }, body: { reference: 'UTR9' } })).status).toBe(200);
        // ₹118.00: owed at approval, paid now.
        expect(await entriesOf(res.body.data.id)).toEqual(['refund.created', 'refund.paid']);
        expect(await linesOf(res.body.data.id, 'refund.paid')).toEqual({ 2320: 11_800, 1000: -11_800 });
      } finally {
        await acme.http.PATCH('/v1/settings', { body: { credit_note_approval_required: false } });
      }
    });
  });

  describe('mark_failed', () => {
    it('gives the credit back to the note and the amount back to the payment', async () => {
      const { customer, payment } = await paidOffline();
      const refund = (await acme.http.POST('/v1/payments/{id}/refunds', { path: { id: payment }, body: { amount: 23_600, reason: 'Cheque' } })).body.data;
      expect((await acme.http.GET('/v1/payments/{id}', { path: { id: payment } })).body.data.amount_refunded).toBe(23_600);
      const res = await acme.http.POST('/v1/refunds/{id}/mark_failed', { path: { id: refund.id }, body: { failure_message: 'cheque returned unpaid' } });
      expect(res.status, res.text).toBe(200);
      expect(res.body.data).toMatchObject({ status: 'failed', failure_code: 'marked_failed', failure_message: 'cheque returned unpaid', paid_at: null });
      // Reversed: Dr 2320 236.00 / Cr 2300 236.00 (tagged with the note).
      expect(await linesOf(refund.id, 'refund.failed')).toEqual({ 2320: 23_600, 2300: -23_600 });
      expect(await customerBalance(customer, 2320)).toBe(0);
      expect(await customerBalance(customer, 2300)).toBe(-23_600);
      expect(await customerBalance(customer, 1000)).toBe(118_000);
      expect((await acme.http.GET('/v1/credit-notes/{id}', { path: { id: refund.credit_note_id! } })).body.data).toMatchObject({
        refund_status: 'refund_failed',
        balance: 23_600,
      });
      expect((await acme.http.GET('/v1/payments/{id}', { path: { id: payment } })).body.data.amount_refunded).toBe(0);
      expect(await eventTypes(refund.id)).toContain('refund.failed');
      expect((await acme.http.POST('/v1/refunds/{id}/mark_paid', { path: { id: refund.id }, body: { reference: 'late' } })).error!.reason).toBe(
        'refund_failed',
      );
    });

    it('spends the returned credit on what its own invoice still owes first', async () => {
      // ₹1,180.00 invoiced, ₹500.00 paid; ₹236.00 of that payment refunded, then the refund fails.
      const customer = await createCustomer(acme, { gstin: gstinFor('29', 'CCCCC3333C1Z') });
      const inv = await createInvoice(acme, customer, [100_000]);
      const payment = (
        await acme.http.POST('/v1/payments/offline', { body: { customer_id: customer, invoice_id: inv.id, payment_type: 'bank_transfer', amount: 50_000 } })
      ).body.data;
      const refund = (await acme.http.POST('/v1/payments/{id}/refunds', { path: { id: payment.id }, body: { amount: 23_600, reason: 'Cheque' } })).body.data;
      expect((await acme.http.GET('/v1/invoices/{id}', { path: { id: inv.id } })).body.data.amount_due).toBe(68_000);
      const res = await acme.http.POST('/v1/refunds/{id}/mark_failed', { path: { id: refund.id }, body: { failure_message: 'cheque returned unpaid' } });
      expect(res.status, res.text).toBe(200);
      // The ₹236.00 is the customer's again, and the invoice it belongs to still owes ₹680.00: it pays that.
      expect((await acme.http.GET('/v1/credit-notes/{id}', { path: { id: refund.credit_note_id! } })).body.data).toMatchObject({
        refund_status: 'refund_failed',
        balance: 0,
        status: 'used',
      });
      expect((await acme.http.GET('/v1/invoices/{id}', { path: { id: inv.id } })).body.data.amount_due).toBe(68_000 - 23_600);
      expect(await customerBalance(customer, 2300)).toBe(0);
      expect(await customerBalance(customer, 1100)).toBe(68_000 - 23_600);
    });
  });

  describe("an advance's refund paid by hand (decision 0740)", () => {
    it('issues the refund voucher with an offline refund that mark_paid pays out of 2320', async () => {
      // ₹11,800 received by bank transfer with no invoice (intra-state, 18 %): value 10,000.00,
      // CGST 900.00, SGST 900.00 on the receipt voucher.
      const customer = await createCustomer(acme, { gstin: gstinFor('29', 'DDDDD4444D1Z') });
      const receipt = await acme.http.POST('/v1/payments/offline', { body: { customer_id: customer, payment_type: 'bank_transfer', amount: 1_180_000 } });
      expect(receipt.status, receipt.text).toBe(201);
      const [advance] = (await acme.http.GET('/v1/advances', { query: { customer_id: customer } })).body.data;
      expect(advance).toMatchObject({ amount: 1_180_000, subtotal: 1_000_000, cgst_amount: 90_000, sgst_amount: 90_000, balance: 1_180_000 });

      // ₹5,900 back: the refund voucher (rule 51) reverses 5,900/11,800 of the tax = CGST 450.00 +
      // SGST 450.00 — Dr 2310 5,900 / Cr 2320 5,900, Dr 2100 450, Dr 2110 450 / Cr 1300 900 — and
      // an offline refund of ₹5,900 waits to be paid by hand.
      const res = await acme.http.POST('/v1/advances/{id}/refunds', { path: { id: advance!.id }, body: { amount: 590_000, reason: 'Project reduced' } });
      expect(res.status, res.text).toBe(201);
      const voucher = res.body.data.movements[0];
      expect(voucher).toMatchObject({ kind: 'refunded', payout: 'offline', amount: 590_000, subtotal: 500_000, cgst_amount: 45_000, sgst_amount: 45_000 });
      expect(await linesOf(voucher!.id, 'advance.refunded')).toEqual({ 2310: 590_000, 2320: -590_000, 2100: 45_000, 2110: 45_000, 1300: -90_000 });
      expect(voucher!.refund_id).toEqual(expect.any(String));
      const refund = (await acme.http.GET('/v1/refunds/{id}', { path: { id: voucher!.refund_id! } })).body.data;
      expect(refund).toMatchObject({
        status: 'pending',
        gateway: null,
        advance_id: advance!.id,
        payment_id: receipt.body.data.id,
        customer_id: customer,
        amount: 590_000,
        credit_note_id: null,
        credit_notes: [],
      });
      expect(await eventTypes(refund.id)).toContain('refund.created');
      expect((await acme.http.GET('/v1/payments/{id}', { path: { id: receipt.body.data.id } })).body.data.amount_refunded).toBe(590_000);
      expect((await acme.http.GET('/v1/payments/{id}/refunds', { path: { id: receipt.body.data.id } })).body.data.map((r: { id: string }) => r.id)).toEqual([
        refund.id,
      ]);
      expect(await customerBalance(customer, 2320)).toBe(-590_000);

      // The voucher stands: the refund cannot be marked failed.
      const fail = await acme.http.POST('/v1/refunds/{id}/mark_failed', { path: { id: refund.id }, body: {} });
      expect(fail.status).toBe(409);
      expect(fail.error!.reason).toBe('refund_voucher_issued');

      const paid = await acme.http.POST('/v1/refunds/{id}/mark_paid', { path: { id: refund.id }, body: { reference: 'NEFT-ADV-77' } });
      expect(paid.status, paid.text).toBe(200);
      expect(paid.body.data).toMatchObject({ status: 'succeeded', reference: 'NEFT-ADV-77' });
      // refund.paid Dr 2320 5,900 / Cr 1000 5,900: cash 11,800 − 5,900 = 5,900; nothing owed; the
      // advance keeps 5,900 (2310) with its tax 900.00 open (1300).
      expect(await linesOf(refund.id, 'refund.paid')).toEqual({ 2320: 590_000, 1000: -590_000 });
      expect(await customerBalance(customer, 1000)).toBe(590_000);
      expect(await customerBalance(customer, 2320)).toBe(0);
      expect(await customerBalance(customer, 2310)).toBe(-590_000);
      expect(await customerBalance(customer, 1300)).toBe(90_000);
      expect((await acme.http.GET('/v1/advances/{id}', { path: { id: advance!.id } })).body.data).toMatchObject({ balance: 590_000, tax_open: 90_000 });
      expect((await acme.http.POST('/v1/refunds/{id}/mark_paid', { path: { id: refund.id }, body: { reference: 'again' } })).error!.reason).toBe(
        'refund_succeeded',
      );
    });
  });
});
