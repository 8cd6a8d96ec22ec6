import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKosh, type Tenant, type TestKosh } from '../../../test/support/harness.js';
import { startMailSink, type MailSink } from '../../../test/support/mail-sink.js';
import { pdfInfo, pdfText } from '../../../test/support/pdf-text.js';
import { MAIL_MAX_ATTEMPTS, MAIL_RETRY_DELAYS_MS } from '../../platform/mail/index.js';
import { gstinCheckCharacter } from '../tax/index.js';
import { pdfMoney } from './invoice-pdf.js';

const gstin = (first14: string) => first14 + gstinCheckCharacter(first14);
const SUPPLIER_GSTIN = gstin('29AAACA1234A1Z');
const CUSTOMER_GSTIN = gstin('29BBBBB2222B1Z');
const UNKNOWN_ID = '00000000-0000-7000-8000-000000000000';

let sink: MailSink;
let t: TestKosh;
let acme: Tenant;
let karnataka: { id: string; email: string };
let maharashtra: string;
let usCustomer: string;

beforeAll(async () => {
  sink = await startMailSink();
  t = await startTestKosh({ env: { SMTP_URL: sink.url, MAIL_FROM: 'Kosh Billing <billing@kosh.test>' } });
  acme = await t.registerTenant({ email: 'accounts@acme.test', gstin: SUPPLIER_GSTIN, state_code: '29' });
  const entity = (await acme.http.GET('/v1/entities')).body.data[0];
  const patched = await acme.http.PATCH('/v1/entities/{id}', {
    path: { id: entity!.id },
    body: {
      name: 'Acme',
      legal_name: 'Acme Software Private Limited',
      address: { line1: '12 MG Road', city: 'Bengaluru', state_code: '29', postal_code: '560001', country: 'IN' },
    },
  });
  expect(patched.status).toBe(200);
  const c1 = await acme.http.POST('/v1/customers', {
    body: {
      email: 'ap@karnataka.example',
      name: 'Karnataka Traders Pvt Ltd',
      gstin: CUSTOMER_GSTIN,
      billing_address: { line1: '4 Residency Road', city: 'Bengaluru', state_code: '29', postal_code: '560025', country: 'IN' },
    },
  });
  karnataka = { id: c1.body.data.id, email: c1.body.data.email };
  maharashtra = (
    await acme.http.POST('/v1/customers', {
      body: { email: 'mh@example.in', name: 'Pune Retail', billing_address: { state_code: '27', city: 'Pune', country: 'IN' } },
    })
  ).body.data.id;
  usCustomer = (
    await acme.http.POST('/v1/customers', {
      body: {
        email: 'ap@us.example',
        name: 'US Inc',
        billing_address: { line1: '1 Market St', city: 'San Francisco', state_code: 'CA', country: 'US' },
      },
    })
  ).body.data.id;
});
afterAll(async () => {
  await t?.close();
  await sink?.close();
});

// 1,00,000.00 + 3 × 333.33 = 1,00,999.99 taxable. CGST = SGST = 9,000.00 + 90.00 (8,999.91 paise
// rounded half-up per line) = 9,090.00; total 1,19,179.99.
const gstLines = [
  { description: 'Pro plan, April 2026', unit_amount: 100_000_00, quantity: 1 },
  { description: 'Extra seat', unit_amount: 333_33, quantity: 3 },
];

async function createInvoice(tenant: Tenant, body: Record<string, unknown>) {
  const res = await tenant.api('POST', '/v1/invoices', { currency: 'INR', lines: gstLines, ...body });
  expect(res.status).toBe(201);
  return res.body.data;
}

/** The PDF's raw bytes (the harness decodes bodies as text, which would mangle binary). */
async function fetchPdf(tenant: Tenant | undefined, id: string) {
  const res = await t.kosh.app.inject({ method: 'GET', url: `/v1/invoices/${id}/pdf`, headers: tenant ? { authorization: `Bearer ${tenant.key}` } : {} });
  return { status: res.statusCode, headers: res.headers, pdf: res.rawPayload, json: () => JSON.parse(res.body) };
}

async function sentEvents(tenantId: string, invoiceId: string) {
  return t.kosh.deps.db
    .selectFrom('events')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('type', '=', 'invoice.sent')
    .where('object_id', '=', invoiceId)
    .execute();
}

async function mailJobs(db: TestKosh['kosh']['deps']['db'], tenantId: string, invoiceId?: string) {
  let q = db.selectFrom('jobs').selectAll().where('kind', '=', 'mail.send').where('tenant_id', '=', tenantId);
  if (invoiceId) q = q.where(sql<string>`payload #>> '{on_sent,params,invoice_id}'`, '=', invoiceId);
  return q.orderBy('created_at').orderBy('id').execute();
}

describe('invoices', () => {
  describe('send (POST /v1/invoices/{id}/send)', () => {
    it('e-mails the invoice with its PDF to the customer, and records invoice.sent once the SMTP server accepted it', async () => {
      const invoice = await createInvoice(acme, { customer_id: karnataka.id });
      expect(invoice).toMatchObject({ subtotal: 1_00_999_99, cgst_amount: 9_090_00, sgst_amount: 9_090_00, total: 1_19_179_99 });
      const before = sink.messages.length;

      const res = await acme.http.POST('/v1/invoices/{id}/send', { path: { id: invoice.id } });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ message: `invoice ${invoice.number} queued for delivery to ${karnataka.email}` });
      // Queued, not sent: nothing has reached the server and nothing claims it was sent.
      expect(sink.messages.length).toBe(before);
      expect(await sentEvents(acme.tenantId, invoice.id)).toHaveLength(0);

      await t.kosh.worker.drain();
      expect(sink.messages.length).toBe(before + 1);
      const mail = sink.messages[before]!;
      expect(mail.envelope.to).toEqual([karnataka.email]);
      expect(mail.headers.to).toContain(karnataka.email);
      expect(mail.headers.from).toBe('Acme Software Private Limited <billing@kosh.test>');
      expect(mail.headers['reply-to']).toContain('accounts@acme.test');
      expect(mail.subject).toBe(`Tax Invoice ${invoice.number} from Acme Software Private Limited`);
      expect(mail.text).toContain('Dear Karnataka Traders Pvt Ltd,');
      expect(mail.text).toContain('for INR 1,19,179.99');
      expect(mail.headers['message-id']).toMatch(/^<[0-9a-f-]{36}@kosh\.test>$/);

      expect(mail.attachments).toHaveLength(1);
      const [attachment] = mail.attachments;
      expect(attachment!.filename).toBe(`${invoice.number}.pdf`);
      expect(attachment!.contentType).toBe('application/pdf');
      expect(attachment!.content.subarray(0, 5).toString('latin1')).toBe('%PDF-');
      const text = await pdfText(attachment!.content);
      for (const expected of [
        'Tax Invoice',
        invoice.number,
        'Acme Software Private Limited',
        `GSTIN: ${SUPPLIER_GSTIN}`,
        `GSTIN: ${CUSTOMER_GSTIN}`,
        'Karnataka Traders Pvt Ltd',
        'Place of supply',
        'Karnataka (29)',
        '9,090.00',
        '1,00,999.99',
        '₹ 1,19,179.99',
      ]) {
        expect(text).toContain(expected);
      }

      const events = await sentEvents(acme.tenantId, invoice.id);
      expect(events).toHaveLength(1);
      expect(events[0]!.payload).toMatchObject({ type: 'invoice.sent', data: { object: { id: invoice.id, number: invoice.number } } });
      const [job] = await mailJobs(t.kosh.deps.db, acme.tenantId, invoice.id);
      expect(job).toMatchObject({ state: 'done', attempts: 1, last_error: null });

      // Nothing is left to do: no second copy, no second event.
      await t.kosh.worker.drain();
      expect(sink.messages.length).toBe(before + 1);
      expect(await sentEvents(acme.tenantId, invoice.id)).toHaveLength(1);
    });

    it('sends again when asked again, but replays a repeated Idempotency-Key without queueing a second mail', async () => {
      const invoice = await createInvoice(acme, { customer_id: karnataka.id });
      const headers = { 'idempotency-key': `send-${invoice.id}` };
      const first = await acme.http.POST('/v1/invoices/{id}/send', { path: { id: invoice.id }, headers });
      const replay = await acme.http.POST('/v1/invoices/{id}/send', { path: { id: invoice.id }, headers });
      expect(replay.status).toBe(200);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.body).toEqual(first.body);
      const again = await acme.http.POST('/v1/invoices/{id}/send', { path: { id: invoice.id } });
      expect(again.status).toBe(200);

      const before = sink.messages.length;
      await t.kosh.worker.drain();
      const sent = sink.messages.slice(before).filter((m) => m.subject.includes(invoice.number!));
      expect(sent).toHaveLength(2);
      expect(await sentEvents(acme.tenantId, invoice.id)).toHaveLength(2);
    });

    it('sends a paid invoice, saying so, with amount paid and amount due on the PDF', async () => {
      const invoice = await createInvoice(acme, { customer_id: karnataka.id });
      await acme.http.POST('/v1/payments/offline', {
        body: {
          customer_id: karnataka.id,
          invoice_id: invoice.id,
          payment_type: 'bank_transfer',
          amount: invoice.total,
        },
      });
      expect((await acme.http.POST('/v1/invoices/{id}/send', { path: { id: invoice.id } })).status).toBe(200);
      const before = sink.messages.length;
      await t.kosh.worker.drain();
      const mail = sink.messages.slice(before).find((m) => m.subject.includes(invoice.number!))!;
      expect(mail.text).toContain('It has been paid in full.');
      const text = await pdfText(mail.attachments[0]!.content);
      expect(text).toMatch(/Amount paid\s+1,19,179\.99/);
      expect(text).toMatch(/Amount due\s+₹ 0\.00/);
    });

    describe('refuses with 400 validation_failed (SPEC 4.8), queueing nothing', () => {
      it('when the id is not a UUID', async () => {
        const res = await acme.http.POST('/v1/invoices/{id}/send', { path: { id: 'not-a-uuid' } });
        expect(res.status).toBe(400);
        expect(res.error!.code).toBe('validation_failed');
      });

      it('when no such invoice exists in the tenant, including another tenant’s invoice', async () => {
        const other = await t.registerTenant();
        const customer = (await other.http.POST('/v1/customers', { body: { email: 'x@other.test' } })).body.data.id;
        const foreign = await createInvoice(other, { customer_id: customer });
        const jobsBefore = (await mailJobs(t.kosh.deps.db, acme.tenantId)).length;
        for (const id of [UNKNOWN_ID, foreign.id]) {
          const res = await acme.http.POST('/v1/invoices/{id}/send', { path: { id } });
          expect(res.status).toBe(400);
          expect(res.error!).toMatchObject({ code: 'validation_failed', reason: 'invoice_not_found', message: 'invoice not found' });
        }
        expect(await mailJobs(t.kosh.deps.db, acme.tenantId)).toHaveLength(jobsBefore);
        expect(await mailJobs(t.kosh.deps.db, other.tenantId)).toHaveLength(0);
      });

      it('when the customer has no e-mail address', async () => {
        const customer = (await acme.http.POST('/v1/customers', { body: { email: 'soon-gone@example.in', name: 'No Mail Ltd' } })).body.data.id;
        const invoice = await createInvoice(acme, { customer_id: customer });
        // The API requires an e-mail on every customer; rows written before that rule (or by a
        // direct import) may lack one. Make such a row.
        await t.kosh.deps.db.updateTable('customers').set({ email: '' }).where('tenant_id', '=', acme.tenantId).where('id', '=', customer).execute();
        const res = await acme.http.POST('/v1/invoices/{id}/send', { path: { id: invoice.id } });
        expect(res.status).toBe(400);
        expect(res.error!).toMatchObject({ code: 'validation_failed', reason: 'customer_email_missing' });
        expect(await mailJobs(t.kosh.deps.db, acme.tenantId, invoice.id)).toHaveLength(0);
      });

      it('when the server has no e-mail provider configured (no SMTP_URL)', async () => {
        const plain = await startTestKosh();
        try {
          const tenant = await plain.registerTenant();
          const customer = (await tenant.http.POST('/v1/customers', { body: { email: 'c@example.in' } })).body.data.id;
          const invoice = (await tenant.http.POST('/v1/invoices', { body: { customer_id: customer, currency: 'INR', lines: gstLines } })).body.data;
          const res = await tenant.http.POST('/v1/invoices/{id}/send', { path: { id: invoice.id } });
          expect(res.status).toBe(400);
          expect(res.error!).toMatchObject({ code: 'validation_failed', reason: 'email_not_configured' });
          expect(await mailJobs(plain.kosh.deps.db, tenant.tenantId)).toHaveLength(0);
        } finally {
          await plain.close();
        }
      });

      it('when the invoice is a draft (it has no number yet) or void', async () => {
        const draft = await createInvoice(acme, { customer_id: karnataka.id, auto_finalize: false });
        const res = await acme.http.POST('/v1/invoices/{id}/send', { path: { id: draft.id } });
        expect(res.status).toBe(400);
        expect(res.error!).toMatchObject({ code: 'validation_failed', reason: 'invoice_not_finalized' });

        const voided = await createInvoice(acme, { customer_id: karnataka.id });
        await acme.http.POST('/v1/invoices/{id}/void', { path: { id: voided.id } });
        const refused = await acme.http.POST('/v1/invoices/{id}/send', { path: { id: voided.id } });
        expect(refused.status).toBe(400);
        expect(refused.error!).toMatchObject({ code: 'validation_failed', reason: 'invoice_void' });
        expect(await mailJobs(t.kosh.deps.db, acme.tenantId, draft.id)).toHaveLength(0);
        expect(await mailJobs(t.kosh.deps.db, acme.tenantId, voided.id)).toHaveLength(0);
      });
    });

    it('answers 401 without an API key', async () => {
      const invoice = await createInvoice(acme, { customer_id: karnataka.id });
      const res = await t.api('POST', `/v1/invoices/${invoice.id}/send`);
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('unauthorized');
    });
  });

  describe('pdf (GET /v1/invoices/{id}/pdf)', () => {
    it('answers a GST tax invoice as application/pdf', async () => {
      const invoice = await createInvoice(acme, { customer_id: karnataka.id, memo: 'Thank you for your business.' });
      const res = await fetchPdf(acme, invoice.id);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('application/pdf');
      expect(res.headers['content-disposition']).toBe(`inline; filename="${invoice.number}.pdf"`);
      const text = await pdfText(res.pdf);
      for (const expected of [
        'Tax Invoice',
        'Original for recipient',
        invoice.number,
        'Acme Software Private Limited',
        'Trade name: Acme',
        '12 MG Road',
        'Bengaluru 560001',
        `GSTIN: ${SUPPLIER_GSTIN}`,
        'BILL TO',
        'Karnataka Traders Pvt Ltd',
        '4 Residency Road',
        `GSTIN: ${CUSTOMER_GSTIN}`,
        'State: Karnataka (29)',
        'Email: ap@karnataka.example',
        'Invoice date',
        '01 Apr 2026',
        'Due date',
        'Place of supply',
        'Karnataka (29)',
        'Tax payable on reverse charge',
        'HSN/SAC',
        '998314',
        'Pro plan, April 2026',
        '1,00,000.00',
        '9%',
        'CGST',
        'SGST',
        'Indian Rupees One Lakh Nineteen Thousand One Hundred Seventy-Nine and Ninety-Nine Paise Only',
        'Thank you for your business.',
        'Authorised signatory',
        'Page 1 of 1',
      ]) {
        expect(text).toContain(expected);
      }
      expect(text).toMatch(/Taxable value\s+1,00,999\.99/);
      expect(text).toMatch(/CGST\s+9,090\.00/);
      expect(text).toMatch(/SGST\s+9,090\.00/);
      expect(text).toMatch(/Total\s+₹ 1,19,179\.99/);
      expect(text).toMatch(/Amount due\s+₹ 1,19,179\.99/);
      expect(text).not.toContain('IGST');
      expect(await pdfText(res.pdf, { raw: true })).not.toMatch(/DRAFT|VOID/);
      const info = await pdfInfo(res.pdf);
      expect(info.Title).toBe(`Tax Invoice ${invoice.number}`);
      expect(info.Pages).toBe('1');
    });

    it('prints IGST for another state and "Unregistered" for a customer without a GSTIN', async () => {
      const invoice = await createInvoice(acme, {
        customer_id: maharashtra,
        lines: [{ description: 'Consulting', unit_amount: 10_000_00, hsn_code: '998311' }],
      });
      const text = await pdfText((await fetchPdf(acme, invoice.id)).pdf);
      expect(text).toContain('GSTIN: Unregistered');
      expect(text).toContain('Maharashtra (27)');
      expect(text).toContain('998311');
      expect(text).toContain('18%');
      expect(text).toMatch(/IGST\s+1,800\.00/);
      expect(text).not.toContain('CGST');
    });

    it('labels the state tax UTGST for a supplier in a union territory without a legislature', async () => {
      const entity = await acme.http.POST('/v1/entities', {
        body: {
          name: 'Acme Chandigarh',
          legal_name: 'Acme Chandigarh LLP',
          invoice_prefix: 'CHD-',
          state_code: '04',
          gstin: gstin('04AAACA1234A1Z'),
        },
      });
      expect(entity.status).toBe(201);
      const customer = (
        await acme.http.POST('/v1/customers', {
          body: { email: 'chd@example.in', name: 'Sector 17 Stores', billing_address: { state_code: '04', country: 'IN' } },
        })
      ).body.data.id;
      const invoice = await createInvoice(acme, {
        customer_id: customer,
        entity_id: entity.body.data.id,
        lines: [{ description: 'Support', unit_amount: 1_000_00 }],
      });
      expect(invoice.utgst).toBe(true);
      const text = await pdfText((await fetchPdf(acme, invoice.id)).pdf);
      expect(text).toContain('Chandigarh (04)');
      expect(text).toMatch(/UTGST\s+90\.00/);
      expect(text).not.toContain('SGST');
    });

    it('marks an export with the LUT endorsement and no tax, in the invoice currency', async () => {
      const invoice = await createInvoice(acme, {
        customer_id: usCustomer,
        currency: 'USD',
        lines: [{ description: 'Annual licence', unit_amount: 1_234_567_89 }],
      });
      expect(invoice.tax_type).toBe('export');
      const text = await pdfText((await fetchPdf(acme, invoice.id)).pdf);
      expect(text).toContain('Export Invoice');
      expect(text).toContain('SUPPLY MEANT FOR EXPORT UNDER LETTER OF UNDERTAKING WITHOUT PAYMENT OF INTEGRATED TAX (IGST)');
      expect(text).toContain('Outside India (96)');
      expect(text).toContain('San Francisco');
      expect(text).toContain('United States');
      expect(text).toMatch(/Total\s+USD 1,234,567\.89/);
      expect(text).not.toMatch(/CGST|SGST|IGST\s+\d/);
      expect(text).not.toContain('Indian Rupees');
    });

    it('titles it "Invoice", without GST particulars, when the supplier is outside India', async () => {
      const entity = await acme.http.POST('/v1/entities', { body: { name: 'Acme Inc', legal_name: 'Acme Inc', invoice_prefix: 'US-', country_code: 'US' } });
      const invoice = await createInvoice(acme, {
        customer_id: usCustomer,
        entity_id: entity.body.data.id,
        currency: 'USD',
        lines: [{ description: 'Licence', unit_amount: 500_00 }],
      });
      expect(invoice.tax_type).toBe('');
      const text = await pdfText((await fetchPdf(acme, invoice.id)).pdf);
      expect(text.split('\n').some((l) => /^\s*Invoice\s*$/.test(l) || /\s{2,}Invoice\s*$/.test(l))).toBe(true);
      expect(text).not.toContain('Tax Invoice');
      expect(text).not.toContain('Place of supply');
      expect(text).not.toContain('GSTIN');
      expect(text).toMatch(/Total\s+USD 500\.00/);
    });

    it('shows a draft, unnumbered and marked DRAFT, with the parties as they are now', async () => {
      const draft = await createInvoice(acme, { customer_id: karnataka.id, auto_finalize: false });
      const res = await fetchPdf(acme, draft.id);
      expect(res.status).toBe(200);
      expect(res.headers['content-disposition']).toBe(`inline; filename="draft-${draft.id}.pdf"`);
      // The mark is drawn diagonally; raw mode reads it as the word it is.
      expect(await pdfText(res.pdf, { raw: true })).toMatch(/^DRAFT$/m);
      const text = await pdfText(res.pdf);
      expect(text).toContain('Draft (not yet numbered)');
      expect(text).toContain('Not issued');
      expect(text).toContain('Karnataka Traders Pvt Ltd');
      expect(text).toContain(`GSTIN: ${SUPPLIER_GSTIN}`);
    });

    it('marks a void invoice VOID', async () => {
      const invoice = await createInvoice(acme, { customer_id: karnataka.id });
      await acme.http.POST('/v1/invoices/{id}/void', { path: { id: invoice.id } });
      const text = await pdfText((await fetchPdf(acme, invoice.id)).pdf, { raw: true });
      expect(text).toMatch(/^VOID$/m);
      expect(text).toContain(invoice.number);
      expect(text).toMatch(/Status Void since \d\d \w{3} 2026/);
    });

    it('continues a long invoice on further pages, repeating the table header', async () => {
      const lines = Array.from({ length: 70 }, (_, i) => ({ description: `Item ${i + 1}`, unit_amount: 1_00 + i, hsn_code: '998314' }));
      const invoice = await createInvoice(acme, { customer_id: karnataka.id, lines });
      const res = await fetchPdf(acme, invoice.id);
      const pages = Number((await pdfInfo(res.pdf)).Pages);
      expect(pages).toBeGreaterThanOrEqual(2);
      const text = await pdfText(res.pdf);
      for (const l of lines) expect(text).toMatch(new RegExp(`\\b${l.description}\\b`));
      // The header is drawn again on every page the lines continue on.
      expect(text.match(/HSN\/SAC/g)!.length).toBeGreaterThanOrEqual(2);
      expect(text).toContain(`Page ${pages} of ${pages}`);
      expect(text).toContain(pdfMoney(invoice.total, 'INR'));
    });

    it('answers 404 for a missing or another tenant’s invoice, 400 for a bad id, 401 without a key', async () => {
      const other = await t.registerTenant();
      const customer = (await other.http.POST('/v1/customers', { body: { email: 'y@other.test' } })).body.data.id;
      const foreign = await createInvoice(other, { customer_id: customer });
      for (const id of [UNKNOWN_ID, foreign.id]) {
        const res = await fetchPdf(acme, id);
        expect(res.status).toBe(404);
        expect(res.json().error.code).toBe('not_found');
      }
      const bad = await fetchPdf(acme, 'not-a-uuid');
      expect(bad.status).toBe(400);
      expect(bad.json().error.code).toBe('validation_failed');
      expect((await fetchPdf(undefined, foreign.id)).status).toBe(401);
    });
  });

  describe('send, when the SMTP server refuses', () => {
    it('retries on the mail schedule, ends dead with the last error recorded, and never claims the invoice was sent', async () => {
      const invoice = await createInvoice(acme, { customer_id: karnataka.id });
      sink.behave({ kind: 'reject-recipient', code: 550, message: 'no such mailbox here' });
      try {
        const attemptsBefore = sink.recipientAttempts.length;
        const messagesBefore = sink.messages.length;
        expect((await acme.http.POST('/v1/invoices/{id}/send', { path: { id: invoice.id } })).status).toBe(200);
        await t.kosh.worker.drain();
        let [job] = await mailJobs(t.kosh.deps.db, acme.tenantId, invoice.id);
        expect(job).toMatchObject({ state: 'pending', attempts: 1 });
        expect(job!.last_error).toContain('550');

        for (const [i, delay] of MAIL_RETRY_DELAYS_MS.entries()) {
          // Not due a second early: the mail schedule decides, not the worker's default backoff.
          t.clock.advance(delay - 1000);
          await t.kosh.worker.drain();
          [job] = await mailJobs(t.kosh.deps.db, acme.tenantId, invoice.id);
          expect(job!.attempts).toBe(i + 1);
          t.clock.advance(1000);
          await t.kosh.worker.drain();
          [job] = await mailJobs(t.kosh.deps.db, acme.tenantId, invoice.id);
          expect(job!.attempts).toBe(i + 2);
        }
        [job] = await mailJobs(t.kosh.deps.db, acme.tenantId, invoice.id);
        expect(job).toMatchObject({ state: 'dead', attempts: MAIL_MAX_ATTEMPTS });
        expect(job!.last_error).toMatch(/SMTP delivery to ap@karnataka\.example failed: .*550.*no such mailbox here/);
        expect(sink.recipientAttempts.length - attemptsBefore).toBe(MAIL_MAX_ATTEMPTS);
        expect(sink.messages.length).toBe(messagesBefore);
        expect(await sentEvents(acme.tenantId, invoice.id)).toHaveLength(0);

        // Dead stays dead: the server recovering later sends nothing by itself.
        sink.behave({ kind: 'accept' });
        t.clock.advanceDays(2);
        await t.kosh.worker.drain();
        expect(sink.messages.length).toBe(messagesBefore);
      } finally {
        sink.behave({ kind: 'accept' });
      }
    });
  });
});
