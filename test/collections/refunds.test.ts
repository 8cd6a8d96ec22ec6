import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKosh, type Tenant, type TestKosh } from '../support/harness.js';
import { createCustomer, gstinFor } from '../support/billing.js';
import { testGatewayJournal } from '../../src/modules/collections/index.js';

/**
 * DESIGN §20: a refund never reverses tax twice (Kosh issue #28, item 1). Refunds by line, by a
 * note's balance, and the refund read API.
 */
let t: TestKosh;
let acme: Tenant;
let journal: ReturnType<typeof testGatewayJournal>;

beforeAll(async () => {
  t = await startTestKosh();
  journal = testGatewayJournal(t.kosh.deps.scope, 'memory:');
  acme = await t.registerTenant({ gstin: gstinFor('29') });
});
afterAll(async () => {
  await t?.close();
});

type Line = { id: string; total: number; hsn_code: string };

/** Net of an account (debit − credit) over the entries tagged with a document, by account. */
async function tagged(column: 'invoice_id' | 'credit_note_id', id: string): Promise<Record<number, number>> {
  const { rows } = await sql<{ account_code: number; net: string }>`
    SELECT account_code, sum(debit - credit)::text AS net FROM journal_lines
    WHERE tenant_id = ${acme.tenantId} AND ${sql.ref(column)} = ${id} GROUP BY account_code`.execute(t.database.db);
  return Object.fromEntries(rows.map((r) => [r.account_code, Number(r.net)]));
}

async function entryOf(referenceId: string, kind: string): Promise<Record<number, number>> {
  const { rows } = await sql<{ account_code: number; net: string }>`
    SELECT l.account_code, sum(l.debit - l.credit)::text AS net FROM journal_lines l JOIN journal_entries e ON e.tenant_id = l.tenant_id AND e.id = l.entry_id
    WHERE e.tenant_id = ${acme.tenantId} AND e.reference_id = ${referenceId} AND e.kind = ${kind} GROUP BY l.account_code`.execute(t.database.db);
  return Object.fromEntries(rows.map((r) => [r.account_code, Number(r.net)]));
}

const notesOf = async (invoiceId: string) =>
  (await acme.http.GET('/v1/credit-notes', { query: { invoice_id: invoiceId } })).body.data as Record<string, unknown>[];
const note = async (id: string) => (await acme.http.GET('/v1/credit-notes/{id}', { path: { id } })).body.data;

/**
 * The invoice (intra-state): services ₹1,000 + 18 % and tea ₹200 + 5 % = ₹1,390, paid
 * ₹400 offline with ₹100 TDS and ₹890 by card.
 */
async function teaAndServices(token = 'tok_visa') {
  const customer = await createCustomer(acme, { gstin: gstinFor('29', 'BBBBB2222B1Z') });
  const pm = await acme.http.POST('/v1/customers/{id}/payment-methods', { path: { id: customer }, body: { token } });
  expect(pm.status, pm.text).toBe(201);
  const created = await acme.http.POST('/v1/invoices', {
    body: {
      customer_id: customer,
      currency: 'INR',
      lines: [
        { description: 'Services', unit_amount: 100_000, hsn_code: '998314' },
        { description: 'Tea', unit_amount: 20_000, hsn_code: '0902' },
      ],
    },
  });
  expect(created.status, created.text).toBe(201);
  const invoice = created.body.data;
  expect(invoice.total).toBe(139_000);
  const [services, tea] = invoice.lines as Line[];
  const offline = await acme.http.POST('/v1/payments/offline', {
    body: {
      customer_id: customer,
      invoice_id: invoice.id,
      payment_type: 'bank_transfer',
      amount: 40_000,
      tds_amount: 10_000,
    },
  });
  expect(offline.status, offline.text).toBe(201);
  const paid = await acme.http.POST('/v1/invoices/{id}/pay', { path: { id: invoice.id }, body: {} });
  expect(paid.status, paid.text).toBe(200);
  expect(paid.body.data.status).toBe('paid');
  const card = (await acme.http.GET('/v1/payments', { query: { invoice_id: invoice.id } })).body.data.find(
    (p: { gateway: string | null }) => p.gateway !== null,
  )!;
  expect(card.amount).toBe(89_000);
  return { customer, invoice, services: services!, tea: tea!, offline: offline.body.data.id as string, card: card.id as string };
}

async function teaNote(invoiceId: string, customer: string, tea: Line) {
  const res = await acme.http.POST('/v1/credit-notes', {
    body: {
      customer_id: customer,
      invoice_id: invoiceId,
      lines: [{ invoice_line_id: tea.id, amount: 21_000 }],
    },
  });
  expect(res.status, res.text).toBe(201);
  expect(res.body.data).toMatchObject({ amount: 21_000, subtotal: 20_000, cgst_amount: 500, sgst_amount: 500, balance: 21_000, status: 'issued' });
  return res.body.data;
}

describe('refunds', () => {
  describe('a refund after a line credit note (issue #28 item 1)', () => {
    it('pays the tea note out instead of crediting the services line: output tax falls by ₹10, once', async () => {
      const { customer, invoice, tea, card } = await teaAndServices();
      const first = await teaNote(invoice.id, customer, tea);

      const res = await acme.http.POST('/v1/payments/{id}/refunds', { path: { id: card }, body: { amount: 21_000, reason: 'Tea returned' } });
      expect(res.status, res.text).toBe(201);
      expect(res.body.data).toMatchObject({
        payment_id: card,
        invoice_id: invoice.id,
        customer_id: customer,
        amount: 21_000,
        status: 'pending',
        credit_note_id: first.id,
        credit_note_issued: false,
        credit_notes: [{ credit_note_id: first.id, amount: 21_000 }],
      });
      // No second note: the tea note's credit became the cash, and nothing on the services line moved.
      expect((await notesOf(invoice.id)).map((n) => n.id)).toEqual([first.id]);
      expect(await note(first.id)).toMatchObject({ balance: 0, status: 'used', type: 'adjustment' });
      const books = await tagged('invoice_id', invoice.id);
      // Output tax of the invoice (credit balance): charged 90 + 5 CGST and 90 + 5 SGST, the tea's 5 + 5 reversed once.
      expect({ cgst: -books[2100]!, sgst: -books[2110]! }, 'output tax left after the tea note and its refund').toEqual({ cgst: 9_000, sgst: 9_000 });
      expect(await tagged('credit_note_id', first.id)).toMatchObject({ 2300: 0 });
      expect(await entryOf(res.body.data.id, 'refund.created')).toEqual({ 2300: 21_000, 1050: -21_000 });

      await t.kosh.worker.drain();
      expect(journal.refund(`kosh_ref_${res.body.data.id}`)?.amount, 'the card gets ₹210 back').toBe(21_000);
      expect((await acme.http.GET('/v1/refunds/{id}', { path: { id: res.body.data.id } })).body.data.status).toBe('succeeded');
      // The note was not a refund's own: its refund_status is not the gateway's to change.
      expect((await note(first.id)).refund_status).toBe('none');
    });

    it('then refunds the rest of the card pro rata over what is still creditable: the services line only, never the tea line again', async () => {
      const { customer, invoice, services, tea, card } = await teaAndServices();
      await teaNote(invoice.id, customer, tea);
      expect((await acme.http.POST('/v1/payments/{id}/refunds', { path: { id: card }, body: { amount: 21_000, reason: 'Tea' } })).status).toBe(201);
      const rest = await acme.http.POST('/v1/payments/{id}/refunds', { path: { id: card }, body: { reason: 'Services cancelled' } });
      expect(rest.status, rest.text).toBe(201);
      expect(rest.body.data).toMatchObject({ amount: 68_000, credit_note_issued: true });
      const issued = await note(rest.body.data.credit_note_id!);
      expect(issued.lines!.map((l: { invoice_line_id: string }) => l.invoice_line_id)).toEqual([services.id]);
      // ₹680 at 18 %, within the services line's ₹90 + ₹90.
      expect(issued).toMatchObject({ type: 'refund', amount: 68_000 });
      expect(issued.subtotal + issued.cgst_amount + issued.sgst_amount).toBe(68_000);
      expect(issued.cgst_amount).toBeLessThan(9_000);
      expect(issued.cgst_amount).toBeGreaterThan(5_000);
      const books = await tagged('invoice_id', invoice.id);
      expect(9_500 + books[2100]!, 'CGST reversed: the tea note once, and the services share').toBe(500 + issued.cgst_amount);
      expect(9_500 + books[2110]!, 'SGST reversed').toBe(500 + issued.sgst_amount);
    });
  });

  describe('a refund retried after the gateway refused it', () => {
    it("pays the refused refund's note out again instead of crediting the invoice a second time", async () => {
      const { invoice, card } = await teaAndServices('tok_refundFail');
      const refused = await acme.http.POST('/v1/payments/{id}/refunds', { path: { id: card }, body: { amount: 11_800, reason: 'First try' } });
      expect(refused.status, refused.text).toBe(201);
      expect(refused.body.data.credit_note_issued).toBe(true);
      await t.kosh.worker.drain();
      const refundNote = await note(refused.body.data.credit_note_id!);
      expect(refundNote).toMatchObject({ refund_status: 'refund_failed', status: 'issued', balance: 11_800 });
      const taxBefore = await tagged('invoice_id', invoice.id);

      const retry = await acme.http.POST('/v1/payments/{id}/refunds', { path: { id: card }, body: { amount: 11_800, reason: 'Second try' } });
      expect(retry.status, retry.text).toBe(201);
      expect(retry.body.data).toMatchObject({ credit_note_issued: false, credit_notes: [{ credit_note_id: refundNote.id, amount: 11_800 }] });
      expect(await notesOf(invoice.id), 'still one note').toHaveLength(1);
      const taxAfter = await tagged('invoice_id', invoice.id);
      expect({ cgst: taxAfter[2100], sgst: taxAfter[2110] }, 'no tax reversed by the retry').toEqual({ cgst: taxBefore[2100], sgst: taxBefore[2110] });
    });
  });

  describe('POST /v1/payments/{id}/refunds with lines', () => {
    it('credits the named lines and pays out; answers 400/409 for lines not of the invoice, above a line, or not adding up', async () => {
      const { invoice, services, tea, card } = await teaAndServices();
      const other = await teaAndServices();
      const refund = (body: Record<string, unknown>) => acme.http.POST('/v1/payments/{id}/refunds', { path: { id: card }, body: { reason: 'Lines', ...body } });

      const foreign = await refund({ lines: [{ invoice_line_id: other.tea.id, amount: 100 }] });
      expect(foreign.status, foreign.text).toBe(400);
      expect(foreign.error!.message).toMatch(/not a line of the invoice/);
      const mismatch = await refund({ amount: 500, lines: [{ invoice_line_id: tea.id, amount: 400 }] });
      expect(mismatch.status).toBe(400);
      expect(mismatch.error!.message).toMatch(/must equal the sum of lines/);
      const above = await refund({ lines: [{ invoice_line_id: tea.id, amount: 21_001 }] });
      expect(above.status, above.text).toBe(409);
      expect(above.error!.message).toMatch(/exceeds what remains creditable on it \(21000\)/);
      expect(await notesOf(invoice.id), 'nothing was issued by the refused refunds').toEqual([]);

      const ok = await refund({ lines: [{ invoice_line_id: tea.id, amount: 10_500 }] });
      expect(ok.status, ok.text).toBe(201);
      expect(ok.body.data).toMatchObject({ amount: 10_500, credit_note_issued: true });
      expect(await note(ok.body.data.credit_note_id!)).toMatchObject({ type: 'refund', subtotal: 10_000, cgst_amount: 250, sgst_amount: 250 });
      // The line has 10 500 left; a second refund above that is refused, on the services line it is fine.
      expect((await refund({ lines: [{ invoice_line_id: tea.id, amount: 10_501 }] })).status).toBe(409);
      const both = await refund({ lines: [{ invoice_line_id: services.id, amount: 11_800 }] });
      expect(both.status, both.text).toBe(201);
      expect(await note(both.body.data.credit_note_id!)).toMatchObject({ subtotal: 10_000, cgst_amount: 900, sgst_amount: 900 });
    });

    it('answers 409 when the invoice holds less unspent credit than asked, and when nothing is left to credit', async () => {
      const { customer, invoice, tea, card, offline } = await teaAndServices();
      await teaNote(invoice.id, customer, tea);
      const more = await acme.http.POST('/v1/payments/{id}/refunds', { path: { id: card }, body: { amount: 30_000, reason: 'More than the credit' } });
      expect(more.status, more.text).toBe(409);
      expect(more.error!.message).toMatch(/hold 21000 of unspent credit/);

      // Credit the rest of the invoice and spend it elsewhere: nothing creditable, nothing held.
      const whole = await acme.http.POST('/v1/credit-notes', { body: { customer_id: customer, invoice_id: invoice.id, amount: 118_000 } });
      expect(whole.status, whole.text).toBe(201);
      const next = await acme.http.POST('/v1/invoices', {
        body: { customer_id: customer, currency: 'INR', lines: [{ description: 'Next', unit_amount: 200_000 }] },
      });
      expect(next.status, next.text).toBe(201);
      const left = (await notesOf(invoice.id)).reduce((sum, n) => sum + Number(n.balance), 0);
      expect(left, 'the new invoice took all the credit').toBe(0);
      const none = await acme.http.POST('/v1/payments/{id}/refunds', { path: { id: offline }, body: { amount: 1_000, reason: 'Nothing left' } });
      expect(none.status, none.text).toBe(409);
      expect(none.error!.message).toMatch(/nothing left to credit/);
    });
  });

  describe('POST /v1/credit-notes/{id}/refunds', () => {
    it("pays a note's balance back to the card without a new note; the gateway's refusal gives the credit back", async () => {
      const { customer, invoice, tea, card } = await teaAndServices('tok_refundFail');
      const first = await teaNote(invoice.id, customer, tea);
      const res = await acme.http.POST('/v1/credit-notes/{id}/refunds', { path: { id: first.id }, body: { amount: 15_000, reason: 'Part of the tea' } });
      expect(res.status, res.text).toBe(201);
      expect(res.body.data).toMatchObject({
        payment_id: card,
        gateway: 'test',
        credit_note_issued: false,
        credit_notes: [{ credit_note_id: first.id, amount: 15_000 }],
      });
      expect(await note(first.id)).toMatchObject({ balance: 6_000, status: 'issued' });
      expect(await notesOf(invoice.id)).toHaveLength(1);
      expect(await entryOf(res.body.data.id, 'refund.created')).toEqual({ 2300: 15_000, 1050: -15_000 });
      expect((await acme.http.GET('/v1/payments/{id}', { path: { id: card } })).body.data.amount_refunded).toBe(15_000);

      await t.kosh.worker.drain();
      expect((await acme.http.GET('/v1/refunds/{id}', { path: { id: res.body.data.id } })).body.data.status).toBe('failed');
      expect(await note(first.id)).toMatchObject({ balance: 21_000, status: 'issued', refund_status: 'none' });
      expect(await entryOf(res.body.data.id, 'refund.failed')).toEqual({ 1050: 15_000, 2300: -15_000 });
      expect((await acme.http.GET('/v1/payments/{id}', { path: { id: card } })).body.data.amount_refunded).toBe(0);
      expect(await tagged('credit_note_id', first.id)).toMatchObject({ 2300: -21_000 });
    });

    it('records an offline refund of goodwill credit (no payment), and refuses above the balance, other customers’ payments and unknown notes', async () => {
      const customer = await createCustomer(acme);
      const goodwill = await acme.http.POST('/v1/credit-notes', { body: { customer_id: customer, amount: 5_000, currency: 'INR', reason: 'Sorry' } });
      expect(goodwill.status, goodwill.text).toBe(201);
      const id = goodwill.body.data.id;
      const over = await acme.http.POST('/v1/credit-notes/{id}/refunds', { path: { id }, body: { amount: 5_001 } });
      expect(over.status, over.text).toBe(409);
      expect(over.error!.message).toMatch(/exceeds the credit note's unspent balance of 5000/);
      const { card } = await teaAndServices();
      const foreign = await acme.http.POST('/v1/credit-notes/{id}/refunds', { path: { id }, body: { amount: 100, payment_id: card } });
      expect(foreign.status).toBe(400);
      expect(foreign.error!.message).toMatch(/not a payment of the credit note's customer/);
      expect(
        (await acme.http.POST('/v1/credit-notes/{id}/refunds', { path: { id: '00000000-0000-4000-8000-000000000000' }, body: { amount: 1 } })).status,
      ).toBe(404);

      const res = await acme.http.POST('/v1/credit-notes/{id}/refunds', { path: { id }, body: { amount: 5_000, reason: 'Cheque' } });
      expect(res.status, res.text).toBe(201);
      expect(res.body.data).toMatchObject({ payment_id: null, invoice_id: null, gateway: null, amount: 5_000 });
      expect(await note(id)).toMatchObject({ balance: 0, status: 'used' });
      expect(await entryOf(res.body.data.id, 'refund.created')).toEqual({ 2300: 5_000, 2320: -5_000 });
      const again = await acme.http.POST('/v1/credit-notes/{id}/refunds', { path: { id }, body: { amount: 1 } });
      expect(again.status).toBe(409);
      expect(again.error!.message).toMatch(/status is used/);
    });
  });

  describe('reading refunds', () => {
    it('lists refunds newest first with cursors, gets one, and lists a payment’s; unknown ids are 404', async () => {
      const { customer, invoice, tea, card, offline } = await teaAndServices();
      await teaNote(invoice.id, customer, tea);
      const made: string[] = [];
      for (const [payment, amount] of [
        [card, 1_000],
        [card, 2_000],
        [offline, 3_000],
      ] as const) {
        const res = await acme.http.POST('/v1/payments/{id}/refunds', { path: { id: payment }, body: { amount, reason: 'Read me' } });
        expect(res.status, res.text).toBe(201);
        made.push(res.body.data.id);
        t.clock.advance(1_000);
      }
      const page = await acme.http.GET('/v1/refunds', { query: { customer_id: customer, limit: 2 } });
      expect(page.status, page.text).toBe(200);
      expect(page.body.data.map((r: { id: string }) => r.id)).toEqual([made[2], made[1]]);
      expect(page.body.has_more).toBe(true);
      const after = await acme.http.GET('/v1/refunds', { query: { customer_id: customer, limit: 2, starting_after: made[1] } });
      expect(after.body.data.map((r: { id: string }) => r.id)).toEqual([made[0]]);
      expect(after.body.has_more).toBe(false);
      const ofCard = await acme.http.GET('/v1/payments/{id}/refunds', { path: { id: card } });
      expect(ofCard.body.data.map((r: { id: string }) => r.id)).toEqual([made[1], made[0]]);
      expect((await acme.http.GET('/v1/refunds/{id}', { path: { id: made[2]! } })).body.data).toMatchObject({
        payment_id: offline,
        amount: 3_000,
        credit_note_issued: false,
      });
      expect((await acme.http.GET('/v1/refunds/{id}', { path: { id: '00000000-0000-4000-8000-000000000000' } })).status).toBe(404);
      expect((await acme.http.GET('/v1/payments/{id}/refunds', { path: { id: '00000000-0000-4000-8000-000000000000' } })).status).toBe(404);
      const other = await t.registerTenant();
      expect((await other.http.GET('/v1/refunds/{id}', { path: { id: made[0]! } })).status).toBe(404);
      expect((await other.http.GET('/v1/refunds')).body.data).toEqual([]);
    });
  });
});
