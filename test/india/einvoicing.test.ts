import { execFile } from 'node:child_process';
import { createHash, createVerify } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { pdfText } from '../support/pdf-text.js';
import { HTML_ANSWER, startNicIrp } from '../support/nic-irp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKosh, type Tenant, type TestKosh } from '../support/harness.js';
import { gstinCheckCharacter } from '../../src/modules/tax/index.js';
import { sandboxPublicKey } from '../../src/modules/einvoicing/index.js';

const gstin = (state: string, pan: string) => {
  const first14 = `${state}${pan}1Z`;
  return first14 + gstinCheckCharacter(first14);
};
const SUPPLIER = gstin('29', 'AAECK4321L');
const BUYER = gstin('27', 'AABCB1234C');

/** The IRN recomputed here, independently of Kosh: SHA-256 hex of the four fields concatenated. */
const irnOf = (fy: string, type: string, number: string) => createHash('sha256').update(`${SUPPLIER}${fy}${type}${number}`).digest('hex');

function verifyJwt(token: string, publicKey: string): Record<string, unknown> {
  const [head, body, signature] = token.split('.');
  const ok = createVerify('RSA-SHA256').update(`${head}.${body}`).verify(publicKey, Buffer.from(signature!, 'base64url'));
  expect(ok).toBe(true);
  return JSON.parse(Buffer.from(body!, 'base64url').toString('utf8'));
}

let t: TestKosh;
let acme: Tenant;
let entityId: string;
let buyerId: string;

async function invoiceFor(customerId: string, amount = 100_000) {
  const res = await acme.http.POST('/v1/invoices', {
    body: {
      customer_id: customerId,
      currency: 'INR',
      lines: [{ description: 'Platform subscription', quantity: 1, unit_amount: amount }],
    },
  });
  expect(res.status).toBe(201);
  return res.body.data as { id: string; number: string; total: number };
}

let nic: Awaited<ReturnType<typeof startNicIrp>>;

beforeAll(async () => {
  nic = await startNicIrp({ username: 'nic_user', password: 'nic-pass', clientId: 'cid', clientSecret: 'csecret', now: () => t.clock.now() });
  // The IRP's address is the deployment's (DESIGN §21), never a tenant's.
  t = await startTestKosh({ env: { KOSH_IRP_NIC_URL: nic.url } });
  t.clock.set('2026-03-31T18:00:00Z'); // 23:30 on 31 March in India
  acme = await t.registerTenant({ state_code: '29', gstin: SUPPLIER });
  entityId = (await acme.http.GET('/v1/entities')).body.data[0]!.id;
  const buyer = await acme.http.POST('/v1/customers', {
    body: {
      email: 'accounts@buyer.test',
      name: 'Buyer Industries Pvt Ltd',
      gstin: BUYER,
      billing_address: { line1: '12 MG Road', city: 'Pune', state_code: '27', postal_code: '411001', country: 'IN' },
    },
  });
  buyerId = buyer.body.data.id;
});
afterAll(async () => {
  await t.close();
  await nic.close();
});

describe('e-invoicing', () => {
  describe('settings (PATCH /v1/entities/{id})', () => {
    it('refuses e-invoicing for an entity without a GSTIN (400)', async () => {
      const other = await acme.http.POST('/v1/entities', { body: { name: 'No GST Branch', invoice_prefix: 'NOG-', state_code: '29' } });
      const res = await acme.http.PATCH('/v1/entities/{id}', {
        path: { id: other.body.data.id },
        body: { einvoicing: { enabled: true, provider: 'sandbox' } },
      });
      expect(res.status).toBe(400);
      expect(res.error!.code).toBe('validation_failed');
    });

    it.each([
      'http://[::ffff:127.0.0.1]:8080/',
      'http://2130706433/',
      'http://0177.0.0.1/',
      'http://0x7f.1/',
      'http://169.254.169.254/latest/meta-data/',
      'file:///etc/passwd',
      'gopher://127.0.0.1:6379/_INFO',
      'data:text/plain,hello',
      'https://gsp.example.com/',
    ])("refuses a tenant's IRP base_url %s with 400: the address is the deployment's", async (baseUrl) => {
      const res = await acme.http.PATCH('/v1/entities/{id}', {
        path: { id: entityId },
        body: {
          einvoicing: { enabled: true, provider: 'gsp', credentials: { username: 'u', password: 'p', client_id: 'c', client_secret: 's', base_url: baseUrl } },
        },
      });
      expect(res.status).toBe(400);
      expect(res.error!.code).toBe('validation_failed');
      expect(res.error!.details).toEqual([{ field: 'einvoicing.credentials.base_url', message: expect.stringMatching(/set by the deployment/) }]);
    });

    it('turns the sandbox on and never answers credentials', async () => {
      const res = await acme.http.PATCH('/v1/entities/{id}', {
        path: { id: entityId },
        body: {
          address: { line1: '1 Residency Road', city: 'Bengaluru', postal_code: '560025' },
          einvoicing: { enabled: true, provider: 'sandbox', credentials: { username: 'api_user', password: 's3cret' } },
        },
      });
      expect(res.status).toBe(200);
      expect(res.body.data.einvoicing).toEqual({ enabled: true, provider: 'sandbox', credentials_set: true });
      expect(res.text).not.toContain('s3cret');
    });
  });

  describe('submission on finalization', () => {
    let march: { id: string; number: string };
    let april: { id: string; number: string };

    it('registers invoices and credit notes on either side of 1 April with IRNs of their own financial year', async () => {
      march = await invoiceFor(buyerId);
      expect((await acme.http.GET('/v1/invoices/{id}/einvoice', { path: { id: march.id } })).body.data.status).toBe('pending');
      const marchNote = (await acme.http.POST('/v1/credit-notes', { body: { customer_id: buyerId, invoice_id: march.id, amount: 1_180, reason: 'Rounding' } }))
        .body.data;
      t.clock.set('2026-03-31T18:30:00Z'); // 00:00 on 1 April in India
      april = await invoiceFor(buyerId);
      const aprilNote = (await acme.http.POST('/v1/credit-notes', { body: { customer_id: buyerId, invoice_id: march.id, amount: 1_180, reason: 'Rounding' } }))
        .body.data;
      await t.kosh.worker.drain();
      expect((await acme.http.GET('/v1/credit-notes/{id}/einvoice', { path: { id: marchNote.id } })).body.data.irn).toBe(
        irnOf('2025-26', 'CRN', marchNote.number!),
      );
      expect((await acme.http.GET('/v1/credit-notes/{id}/einvoice', { path: { id: aprilNote.id } })).body.data.irn).toBe(
        irnOf('2026-27', 'CRN', aprilNote.number!),
      );
      const a = (await acme.http.GET('/v1/invoices/{id}/einvoice', { path: { id: march.id } })).body.data;
      const b = (await acme.http.GET('/v1/invoices/{id}/einvoice', { path: { id: april.id } })).body.data;
      expect(a).toMatchObject({ status: 'generated', irn: irnOf('2025-26', 'INV', march.number), errors: [] });
      expect(b).toMatchObject({ status: 'generated', irn: irnOf('2026-27', 'INV', april.number), errors: [] });
      expect(a.ack_no).toMatch(/^\d{15}$/);
      expect(a.ack_date).toBe('2026-03-31T18:30:00.000Z');
    });

    it('signs the QR payload as a JWT the sandbox public key verifies', async () => {
      const e = (await acme.http.GET('/v1/invoices/{id}/einvoice', { path: { id: april.id } })).body.data;
      const claims = verifyJwt(e.signed_qr_code!, sandboxPublicKey(t.config));
      const qr = JSON.parse(String(claims.data));
      expect(qr).toMatchObject({
        SellerGstin: SUPPLIER,
        BuyerGstin: BUYER,
        DocNo: april.number,
        DocTyp: 'INV',
        DocDt: '01/04/2026',
        Irn: e.irn,
        TotInvVal: 1180,
      });
    });

    it('registers a credit note against a registered invoice as a CRN', async () => {
      const note = await acme.http.POST('/v1/credit-notes', { body: { customer_id: buyerId, invoice_id: april.id, amount: 11_800, reason: 'Service credit' } });
      expect(note.status).toBe(201);
      await t.kosh.worker.drain();
      const e = await acme.http.GET('/v1/credit-notes/{id}/einvoice', { path: { id: note.body.data.id } });
      expect(e.body.data).toMatchObject({ status: 'generated', irn: irnOf('2026-27', 'CRN', note.body.data.number!) });
    });

    it('stores schema errors and sends nothing when the document is invalid', async () => {
      const noAddress = await acme.http.POST('/v1/customers', { body: { email: 'x@noaddr.test', name: 'No Address Ltd', gstin: gstin('33', 'AACCN9876D') } });
      const invoice = await invoiceFor(noAddress.body.data.id);
      await t.kosh.worker.drain();
      const e = (await acme.http.GET('/v1/invoices/{id}/einvoice', { path: { id: invoice.id } })).body.data;
      expect(e.status).toBe('failed');
      expect(e.irn).toBeNull();
      expect(e.errors.map((x) => x.field)).toEqual(expect.arrayContaining(['BuyerDtls.Addr1', 'BuyerDtls.Loc']));
    });

    it('does not register B2C invoices', async () => {
      const b2c = await acme.http.POST('/v1/customers', { body: { email: 'person@b2c.test', name: 'A Person', billing_address: { state_code: '29' } } });
      const invoice = await invoiceFor(b2c.body.data.id);
      await t.kosh.worker.drain();
      expect((await acme.http.GET('/v1/invoices/{id}/einvoice', { path: { id: invoice.id } })).status).toBe(404);
    });
  });

  describe('cancel', () => {
    it('cancels within 24 hours, then answers 409; a later IRN cannot be canceled after 24 hours', async () => {
      const invoice = await invoiceFor(buyerId);
      await t.kosh.worker.drain();
      const ok = await acme.http.POST('/v1/invoices/{id}/einvoice/cancel', { path: { id: invoice.id }, body: { reason_code: 2, remarks: 'Wrong amount' } });
      expect(ok.status).toBe(200);
      expect(ok.body.data).toMatchObject({ status: 'canceled', cancel_reason_code: 2 });
      expect((await acme.http.POST('/v1/invoices/{id}/einvoice/cancel', { path: { id: invoice.id }, body: { reason_code: 2, remarks: 'again' } })).status).toBe(
        409,
      );

      const late = await invoiceFor(buyerId);
      await t.kosh.worker.drain();
      t.clock.advance(24 * 3600_000 + 1000);
      const res = await acme.http.POST('/v1/invoices/{id}/einvoice/cancel', { path: { id: late.id }, body: { reason_code: 1, remarks: 'Duplicate' } });
      expect(res.status).toBe(409);
      expect(res.error!.reason).toBe('einvoice_cancel_window_closed');
      expect((await acme.http.GET('/v1/invoices/{id}/einvoice', { path: { id: late.id } })).body.data.status).toBe('generated');
    });

    it('answers 409 for a document never generated and 400 for a bad reason code', async () => {
      const b2c = await acme.http.POST('/v1/customers', { body: { email: 'p2@b2c.test', name: 'Another Person' } });
      const invoice = await invoiceFor(b2c.body.data.id);
      expect((await acme.http.POST('/v1/invoices/{id}/einvoice/cancel', { path: { id: invoice.id }, body: { reason_code: 1, remarks: 'x' } })).status).toBe(
        409,
      );
      expect((await acme.http.POST('/v1/invoices/{id}/einvoice/cancel', { path: { id: invoice.id }, body: { reason_code: 5, remarks: 'x' } })).status).toBe(
        400,
      );
    });
  });
});

async function pdfOf(path: string): Promise<Buffer> {
  const res = await t.kosh.app.inject({ method: 'GET', url: path, headers: { authorization: `Bearer ${acme.key}` } });
  expect(res.statusCode).toBe(200);
  expect(res.headers['content-type']).toBe('application/pdf');
  return res.rawPayload;
}

/** Page 1 as a PNG in test-output/ (for a human look), by poppler's pdftoppm. */
async function renderFirstPage(pdf: Buffer, name: string): Promise<void> {
  await mkdir('test-output', { recursive: true });
  await writeFile(`test-output/${name}.pdf`, pdf);
  await promisify(execFile)('pdftoppm', ['-png', '-r', '110', '-f', '1', '-l', '1', '-singlefile', `test-output/${name}.pdf`, `test-output/${name}`]);
}

describe('PDFs of e-invoiced documents', () => {
  const DEVANAGARI = 'राजेश कुमार ट्रेडर्स';
  const TAMIL = 'முருகன் ஸ்டோர்ஸ்';
  let invoice: { id: string; number: string };

  it('prints a Devanagari name exactly, the ₹ sign, the IRN and Ack No, and a QR code', async () => {
    const customer = await acme.http.POST('/v1/customers', {
      body: {
        email: 'rajesh@traders.test',
        name: DEVANAGARI,
        gstin: gstin('09', 'AAFCR4455K'),
        billing_address: { line1: '4 Hazratganj', city: 'Lucknow', state_code: '09', postal_code: '226001', country: 'IN' },
      },
    });
    invoice = await invoiceFor(customer.body.data.id, 250_000);
    await t.kosh.worker.drain();
    const e = (await acme.http.GET('/v1/invoices/{id}/einvoice', { path: { id: invoice.id } })).body.data;
    expect(e.status).toBe('generated');
    const pdf = await pdfOf(`/v1/invoices/${invoice.id}/pdf`);
    const text = await pdfText(pdf);
    expect(text).toContain(DEVANAGARI);
    expect(text).toContain('₹');
    expect(text).toContain(e.irn);
    expect(text).toContain(`Ack No: ${e.ack_no}`);
    await renderFirstPage(pdf, 'einvoice-devanagari');
  });

  it('prints a Tamil name', async () => {
    const customer = await acme.http.POST('/v1/customers', { body: { email: 'murugan@stores.test', name: TAMIL, billing_address: { state_code: '33' } } });
    const b2c = await invoiceFor(customer.body.data.id, 1000);
    const text = await pdfText(await pdfOf(`/v1/invoices/${b2c.id}/pdf`));
    // Tamil vowel signs are reordered in shaping; the consonants all come out.
    for (const letter of ['ம', 'ர', 'க', 'ன', 'ஸ', 'ட']) expect(text).toContain(letter);
  });

  it('renders a credit note as a GST credit note with the original invoice, reason, lines and IRN', async () => {
    const note = await acme.http.POST('/v1/credit-notes', {
      body: {
        customer_id: (await acme.http.GET('/v1/invoices/{id}', { path: { id: invoice.id } })).body.data.customer_id,
        invoice_id: invoice.id,
        amount: 29_500,
        reason: 'Discount after review',
      },
    });
    expect(note.status).toBe(201);
    await t.kosh.worker.drain();
    const e = (await acme.http.GET('/v1/credit-notes/{id}/einvoice', { path: { id: note.body.data.id } })).body.data;
    const pdf = await pdfOf(`/v1/credit-notes/${note.body.data.id}/pdf`);
    const text = await pdfText(pdf);
    expect(text).toContain('Credit Note (GST)');
    expect(text).toContain(note.body.data.number);
    expect(text).toMatch(new RegExp(`Original invoice\\s+${invoice.number}`));
    expect(text).toMatch(/Original invoice date\s+02 Apr 2026/);
    expect(text).toContain('Discount after review');
    expect(text).toContain(DEVANAGARI);
    expect(text).toContain('₹ 295.00');
    expect(text).toContain(e.irn);
    await renderFirstPage(pdf, 'credit-note');
  });

  it("answers 404 for another tenant's credit note PDF", async () => {
    const other = await t.registerTenant();
    const notes = (await acme.http.GET('/v1/credit-notes')).body.data;
    const res = await other.http.GET('/v1/credit-notes/{id}/pdf', { path: { id: notes[0]!.id } });
    expect(res.status).toBe(404);
  });
});

type SentDocument = {
  DocDtls: { Typ: string; No: string };
  TranDtls: { SupTyp: string };
  BuyerDtls: { Gstin: string };
  ValDtls: Record<string, number>;
  ItemList: Record<string, unknown>[];
  ExpDtls?: Record<string, unknown>;
};

describe('the nic provider (against a local NIC-compatible IRP)', () => {
  const NIC_SUPPLIER = gstin('27', 'AAFCN1111N');
  let tenant: Tenant;
  let customerId: string;

  beforeAll(async () => {
    tenant = await t.registerTenant({ state_code: '27', gstin: NIC_SUPPLIER });
    const entity = (await tenant.http.GET('/v1/entities')).body.data[0]!.id;
    const res = await tenant.http.PATCH('/v1/entities/{id}', {
      path: { id: entity },
      body: {
        address: { line1: '7 Nariman Point', city: 'Mumbai', postal_code: '400021' },
        einvoicing: {
          enabled: true,
          provider: 'nic',
          credentials: { username: 'nic_user', password: 'nic-pass', client_id: 'cid', client_secret: 'csecret', public_key: nic.publicKey },
        },
      },
    });
    expect(res.status).toBe(200);
    customerId = (
      await tenant.http.POST('/v1/customers', {
        body: {
          email: 'ap@kar.test',
          name: 'Karnataka Buyer Ltd',
          gstin: gstin('29', 'AABCK2222K'),
          billing_address: { line1: '1 Brigade Road', city: 'Bengaluru', state_code: '29', postal_code: '560001', country: 'IN' },
        },
      })
    ).body.data.id;
  });
  const issue = async () =>
    (
      await tenant.http.POST('/v1/invoices', {
        body: {
          customer_id: customerId,
          currency: 'INR',
          lines: [{ description: 'Annual plan', quantity: 1, unit_amount: 500_000 }],
        },
      })
    ).body.data;

  it('authenticates with the encrypted app key, then sends the encrypted document with the session headers', async () => {
    const invoice = await issue();
    await t.kosh.worker.drain();
    const auth = nic.requests.find((r) => r.path === '/eivital/v1.04/auth')!;
    expect(auth.payload).toMatchObject({ UserName: 'nic_user', Password: 'nic-pass', ForceRefreshAccessToken: false });
    expect(Buffer.from((auth.payload as { AppKey: string }).AppKey, 'base64')).toHaveLength(32);
    expect(auth.headers.gstin).toBe(NIC_SUPPLIER);
    const sent = nic.requests.find((r) => r.path === '/eicore/v1.03/Invoice')!;
    expect(sent.headers).toMatchObject({ gstin: NIC_SUPPLIER, user_name: 'nic_user', client_id: 'cid' });
    expect(sent.headers.authtoken).toMatch(/^[0-9a-f]{32}$/);
    expect(sent.payload).toMatchObject({
      Version: '1.1',
      DocDtls: { Typ: 'INV', No: invoice.number },
      ValDtls: { AssVal: 5000, IgstVal: 900, TotInvVal: 5900 },
    });
    const e = (await tenant.http.GET('/v1/invoices/{id}/einvoice', { path: { id: invoice.id } })).body.data;
    expect(e).toMatchObject({ status: 'generated', provider: 'nic', ack_no: expect.stringMatching(/^\d{15}$/) });
    expect(e.irn).toBe(createHash('sha256').update(`${NIC_SUPPLIER}2026-27INV${invoice.number}`).digest('hex'));
  });

  it('takes the existing IRN when the IRP answers 2150 (duplicate IRN)', async () => {
    const invoice = await issue();
    const date = (await tenant.http.GET('/v1/invoices/{id}', { path: { id: invoice.id } })).body.data.issued_at;
    const dt = new Intl.DateTimeFormat('en-GB', { timeZone: 'Asia/Kolkata', day: '2-digit', month: '2-digit', year: 'numeric' }).format(new Date(date!));
    nic.preRegister('INV', invoice.number!, dt, 'f'.repeat(64));
    await t.kosh.worker.drain();
    expect(nic.requests.some((r) => r.path === '/eicore/v1.03/Invoice/irnbydocdetails' && (r.payload as { docnum: string }).docnum === invoice.number)).toBe(
      true,
    );
    const e = (await tenant.http.GET('/v1/invoices/{id}/einvoice', { path: { id: invoice.id } })).body.data;
    expect(e).toMatchObject({ status: 'generated', irn: 'f'.repeat(64), ack_no: '999000000000001' });
  });

  it('retries an unreachable IRP after 5 minutes, keeping the record pending meanwhile', async () => {
    nic.setDown(true);
    const invoice = await issue();
    await t.kosh.worker.drain();
    let e = (await tenant.http.GET('/v1/invoices/{id}/einvoice', { path: { id: invoice.id } })).body.data;
    expect(e.status).toBe('pending');
    expect(e.errors[0]!.code).toBe('irp.unavailable');
    nic.setDown(false);
    t.clock.advance(4 * 60_000);
    await t.kosh.worker.drain();
    expect((await tenant.http.GET('/v1/invoices/{id}/einvoice', { path: { id: invoice.id } })).body.data.status).toBe('pending');
    t.clock.advance(60_000);
    await t.kosh.worker.drain();
    e = (await tenant.http.GET('/v1/invoices/{id}/einvoice', { path: { id: invoice.id } })).body.data;
    expect(e).toMatchObject({ status: 'generated', errors: [] });
  });

  it("stores Kosh's words, never the text of an answer that is not the IRP's JSON", async () => {
    nic.setDown('html');
    const invoice = await issue();
    await t.kosh.worker.drain();
    nic.setDown(false);
    const e = (await tenant.http.GET('/v1/invoices/{id}/einvoice', { path: { id: invoice.id } })).body.data;
    expect(e).toMatchObject({ status: 'pending', errors: [{ code: 'irp.unavailable', message: 'the IRP answered HTTP 200 without JSON' }] });
    expect(JSON.stringify(e)).not.toContain('Router admin');
    expect(JSON.stringify(e)).not.toContain(HTML_ANSWER.slice(0, 6));
    t.clock.advance(5 * 60_000);
    await t.kosh.worker.drain();
    expect((await tenant.http.GET('/v1/invoices/{id}/einvoice', { path: { id: invoice.id } })).body.data).toMatchObject({ status: 'generated', errors: [] });
  });

  it('never sends a document that fails the schema', async () => {
    const noAddress = (await tenant.http.POST('/v1/customers', { body: { email: 'bare@kar.test', name: 'Bare Ltd', gstin: gstin('29', 'AABCK3333K') } })).body
      .data.id;
    const invoice = (
      await tenant.http.POST('/v1/invoices', {
        body: {
          customer_id: noAddress,
          currency: 'INR',
          lines: [{ description: 'Annual plan', quantity: 1, unit_amount: 500_000 }],
        },
      })
    ).body.data;
    await t.kosh.worker.drain();
    const e = (await tenant.http.GET('/v1/invoices/{id}/einvoice', { path: { id: invoice.id } })).body.data;
    expect(e.status).toBe('failed');
    expect(e.errors.length).toBeGreaterThan(0);
    expect(nic.requests.some((r) => (r.payload as { DocDtls?: { No: string } }).DocDtls?.No === invoice.number)).toBe(false);
  });

  const sentDocument = (number: string) =>
    nic.requests.filter((r) => r.path === '/eicore/v1.03/Invoice' && (r.payload as { DocDtls?: { No: string } }).DocDtls?.No === number).at(-1)?.payload as
      SentDocument | undefined;

  it('resubmits a refused invoice once the customer GSTIN is fixed (retry), and answers 409 for a record not failed', async () => {
    const stale = gstin('29', 'AABCK4444K');
    nic.deactivate(stale);
    const buyer = (
      await tenant.http.POST('/v1/customers', {
        body: {
          email: 'ap@stale.test',
          name: 'Stale GSTIN Ltd',
          gstin: stale,
          billing_address: { line1: '3 Residency Road', city: 'Bengaluru', state_code: '29', postal_code: '560025', country: 'IN' },
        },
      })
    ).body.data.id;
    const invoice = (
      await tenant.http.POST('/v1/invoices', {
        body: {
          customer_id: buyer,
          currency: 'INR',
          lines: [{ description: 'Annual plan', quantity: 1, unit_amount: 200_000 }],
        },
      })
    ).body.data;
    await t.kosh.worker.drain();
    let e = (await tenant.http.GET('/v1/invoices/{id}/einvoice', { path: { id: invoice.id } })).body.data;
    // Kosh's words, not the IRP's text ("GSTIN - … is not present in taxpayer master").
    expect(e).toMatchObject({ status: 'failed', errors: [{ code: 'irp.3028', message: 'the IRP refused the request (IRP error 3028)' }] });
    // A GSTIN of another state would turn IGST into CGST/SGST: not a resubmission.
    expect((await tenant.http.PATCH('/v1/customers/{id}', { path: { id: buyer }, body: { gstin: gstin('27', 'AABCK5555K') } })).status).toBe(200);
    const moved = await tenant.http.POST('/v1/invoices/{id}/einvoice/retry', { path: { id: invoice.id }, body: {} });
    expect(moved.status, moved.text).toBe(409);
    expect(moved.error!.reason).toBe('einvoice_buyer_changes_supply');
    const fixed = gstin('29', 'AABCK6666K');
    expect((await tenant.http.PATCH('/v1/customers/{id}', { path: { id: buyer }, body: { gstin: fixed } })).status).toBe(200);
    const retry = await tenant.http.POST('/v1/invoices/{id}/einvoice/retry', { path: { id: invoice.id }, body: {} });
    expect(retry.status, retry.text).toBe(202);
    expect(retry.body.data.status).toBe('pending');
    await t.kosh.worker.drain();
    e = (await tenant.http.GET('/v1/invoices/{id}/einvoice', { path: { id: invoice.id } })).body.data;
    expect(e).toMatchObject({ status: 'generated', errors: [] });
    expect(sentDocument(invoice.number!)!.BuyerDtls.Gstin).toBe(fixed);
    expect((await tenant.http.GET('/v1/invoices/{id}', { path: { id: invoice.id } })).body.data.customer_details!.gstin).toBe(fixed);
    const again = await tenant.http.POST('/v1/invoices/{id}/einvoice/retry', { path: { id: invoice.id }, body: {} });
    expect(again.status).toBe(409);
    expect(again.error!.reason).toBe('einvoice_not_failed');
  });

  it('takes the IRN the IRP already holds when a resubmission meets 2150 (GetIRNByDocDetails)', async () => {
    const bare = (await tenant.http.POST('/v1/customers', { body: { email: 'bare2@kar.test', name: 'Bare Two Ltd', gstin: gstin('29', 'AABCK7777K') } })).body
      .data.id;
    const invoice = (
      await tenant.http.POST('/v1/invoices', {
        body: {
          customer_id: bare,
          currency: 'INR',
          lines: [{ description: 'Annual plan', quantity: 1, unit_amount: 300_000 }],
        },
      })
    ).body.data;
    await t.kosh.worker.drain();
    expect((await tenant.http.GET('/v1/invoices/{id}/einvoice', { path: { id: invoice.id } })).body.data.status).toBe('failed');
    // Meanwhile someone registered it on the portal by hand.
    const date = (await tenant.http.GET('/v1/invoices/{id}', { path: { id: invoice.id } })).body.data.issued_at;
    const dt = new Intl.DateTimeFormat('en-GB', { timeZone: 'Asia/Kolkata', day: '2-digit', month: '2-digit', year: 'numeric' }).format(new Date(date!));
    nic.preRegister('INV', invoice.number!, dt, 'e'.repeat(64));
    await tenant.http.PATCH('/v1/customers/{id}', {
      path: { id: bare },
      body: {
        billing_address: { line1: '8 Lavelle Road', city: 'Bengaluru', state_code: '29', postal_code: '560001', country: 'IN' },
      },
    });
    expect((await tenant.http.POST('/v1/invoices/{id}/einvoice/retry', { path: { id: invoice.id }, body: {} })).status).toBe(202);
    await t.kosh.worker.drain();
    expect((await tenant.http.GET('/v1/invoices/{id}/einvoice', { path: { id: invoice.id } })).body.data).toMatchObject({
      status: 'generated',
      irn: 'e'.repeat(64),
    });
  });

  it('sends a credit note line by line, each with its invoice line HSN, rate and tax', async () => {
    const invoice = (
      await tenant.http.POST('/v1/invoices', {
        body: {
          customer_id: customerId,
          currency: 'INR',
          lines: [
            { description: 'Platform fee', quantity: 1, unit_amount: 100_000, hsn_code: '998314' },
            { description: 'Tea hampers', quantity: 2, unit_amount: 50_000, hsn_code: '0902' },
          ],
        },
      })
    ).body.data;
    const [fee, tea] = invoice.lines;
    const note = await tenant.http.POST('/v1/credit-notes', {
      body: {
        customer_id: customerId,
        invoice_id: invoice.id,
        reason: 'Damaged goods and a day of downtime',
        lines: [
          { invoice_line_id: fee!.id, amount: 11_800 },
          { invoice_line_id: tea!.id, amount: 10_500 },
        ],
      },
    });
    expect(note.status, note.text).toBe(201);
    await t.kosh.worker.drain();
    expect((await tenant.http.GET('/v1/credit-notes/{id}/einvoice', { path: { id: note.body.data.id } })).body.data.status).toBe('generated');
    const doc = sentDocument(note.body.data.number!)!;
    expect(doc.DocDtls.Typ).toBe('CRN');
    expect(doc.ItemList).toEqual([
      expect.objectContaining({ SlNo: '1', HsnCd: '998314', GstRt: 18, AssAmt: 100, IgstAmt: 18, TotItemVal: 118 }),
      expect.objectContaining({ SlNo: '2', HsnCd: '0902', GstRt: 5, AssAmt: 100, IgstAmt: 5, TotItemVal: 105 }),
    ]);
    expect(doc.ValDtls).toMatchObject({ AssVal: 200, IgstVal: 23, TotInvVal: 223 });
  });

  it('registers a dollar export in rupees at the invoice rate, with the dollar value and currency, and its credit note at the same rate', async () => {
    const abroad = (
      await tenant.http.POST('/v1/customers', {
        body: {
          email: 'ap@abroad.test',
          name: 'Abroad Inc',
          billing_address: { line1: '1 Market Street', city: 'San Francisco', country: 'US' },
        },
      })
    ).body.data.id;
    const created = await tenant.http.POST('/v1/invoices', {
      body: {
        customer_id: abroad,
        currency: 'USD',
        exchange_rate: '83.2575',
        lines: [{ description: 'Annual plan', quantity: 1, unit_amount: 100_000 }],
      },
    });
    expect(created.status, created.text).toBe(201);
    const invoice = created.body.data;
    expect(invoice.inr_total).toBe(8_325_750);
    await t.kosh.worker.drain();
    expect((await tenant.http.GET('/v1/invoices/{id}/einvoice', { path: { id: invoice.id } })).body.data.status).toBe('generated');
    const doc = sentDocument(invoice.number!)!;
    expect(doc.TranDtls.SupTyp).toMatch(/^EXPW/);
    expect(doc.ValDtls).toMatchObject({ AssVal: 83_257.5, TotInvVal: invoice.inr_total! / 100, TotInvValFc: 1000 });
    expect(doc.ItemList[0]).toMatchObject({ AssAmt: 83_257.5, TotItemVal: invoice.inr_total! / 100 });
    expect(doc.ExpDtls).toMatchObject({ ForCur: 'USD', CntCode: 'US' });
    const note = await tenant.http.POST('/v1/credit-notes', {
      body: { customer_id: abroad, invoice_id: invoice.id, amount: 25_000, reason: 'Quarter unused' },
    });
    expect(note.status, note.text).toBe(201);
    await t.kosh.worker.drain();
    const crn = sentDocument(note.body.data.number!)!;
    // A quarter of the invoice, in rupees at the invoice's rate (not the day's): ₹20,814.38.
    expect(crn.ValDtls).toMatchObject({ AssVal: 20_814.38, TotInvVal: 20_814.38, TotInvValFc: 250 });
    expect(crn.ExpDtls).toMatchObject({ ForCur: 'USD' });
  });

  it('tells the IRP of a cancellation with the reason code and remarks', async () => {
    const invoice = await issue();
    await t.kosh.worker.drain();
    const irn = (await tenant.http.GET('/v1/invoices/{id}/einvoice', { path: { id: invoice.id } })).body.data.irn;
    expect(
      (await tenant.http.POST('/v1/invoices/{id}/einvoice/cancel', { path: { id: invoice.id }, body: { reason_code: 3, remarks: 'Order cancelled' } })).status,
    ).toBe(200);
    await t.kosh.worker.drain();
    const cancel = nic.requests.find((r) => r.path === '/eicore/v1.03/Invoice/Cancel');
    expect(cancel?.payload).toEqual({ Irn: irn, CnlRsn: '3', CnlRem: 'Order cancelled' });
  });
});
