import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNicIrp } from '../support/nic-irp.js';
import { startTestKosh, type Tenant, type TestKosh } from '../support/harness.js';
import { gstinCheckCharacter } from '../../src/modules/tax/index.js';

/**
 * DESIGN §18, "Voids and IRNs" (Kosh issue #34): an invoice is voided only while its tax period
 * is open and, when it has an IRN, only while the IRP still cancels it — and then the IRN and the
 * invoice go together, whichever route is called. Against a local NIC-compatible IRP.
 */
const gstin = (state: string, pan: string) => `${state}${pan}1Z${gstinCheckCharacter(`${state}${pan}1Z`)}`;
const SUPPLIER = gstin('27', 'AAFCV3333V');

let t: TestKosh;
let nic: Awaited<ReturnType<typeof startNicIrp>>;
let acme: Tenant;
let entityId: string;
let buyerId: string;
let personId: string;

async function issue(customerId = buyerId): Promise<{ id: string; number: string | null; total: number }> {
  const res = await acme.http.POST('/v1/invoices', {
    body: {
      customer_id: customerId,
      currency: 'INR',
      lines: [{ description: 'Annual plan', quantity: 1, unit_amount: 500_000 }],
    },
  });
  expect(res.status, res.text).toBe(201);
  return res.body.data;
}

const einvoiceOf = async (id: string) => (await acme.http.GET('/v1/invoices/{id}/einvoice', { path: { id } })).body.data;
const invoiceOf = async (id: string) => (await acme.http.GET('/v1/invoices/{id}', { path: { id } })).body.data;
const gstr3b = async (period: string) => {
  const res = await acme.http.GET('/v1/gst/gstr3b', { query: { entity_id: entityId, period } });
  expect(res.status, res.text).toBe(200);
  return res.body.data;
};

beforeAll(async () => {
  nic = await startNicIrp({ username: 'nic_user', password: 'nic-pass', clientId: 'cid', clientSecret: 'csecret', now: () => t.clock.now() });
  // The IRP's address is the deployment's (decision 0211), never a tenant's.
  t = await startTestKosh({ env: { KOSH_IRP_NIC_URL: nic.url } });
  t.clock.set('2025-12-01T06:00:00Z'); // 11:30 on 1 December in India
  acme = await t.registerTenant({ state_code: '27', gstin: SUPPLIER });
  entityId = (await acme.http.GET('/v1/entities')).body.data[0]!.id;
  const patched = await acme.http.PATCH('/v1/entities/{id}', {
    path: { id: entityId },
    body: {
      address: { line1: '7 Nariman Point', city: 'Mumbai', postal_code: '400021' },
      einvoicing: {
        enabled: true,
        provider: 'nic',
        credentials: { username: 'nic_user', password: 'nic-pass', client_id: 'cid', client_secret: 'csecret', public_key: nic.publicKey },
      },
    },
  });
  expect(patched.status, patched.text).toBe(200);
  buyerId = (
    await acme.http.POST('/v1/customers', {
      body: {
        email: 'ap@buyer.test',
        name: 'Karnataka Buyer Ltd',
        gstin: gstin('29', 'AABCK2222K'),
        billing_address: { line1: '1 Brigade Road', city: 'Bengaluru', state_code: '29', postal_code: '560001', country: 'IN' },
      },
    })
  ).body.data.id;
  personId = (await acme.http.POST('/v1/customers', { body: { email: 'person@b2c.test', name: 'A Person', billing_address: { state_code: '27' } } })).body.data
    .id;
});
afterAll(async () => {
  await t?.close();
  await nic?.close();
});

describe('voiding an invoice with an IRN', () => {
  it('refuses on 5 January the void of a 1 December invoice whose IRN the IRP no longer cancels: IRN, invoice and December stay as they were', async () => {
    const december = await issue();
    await t.kosh.worker.drain();
    expect(await einvoiceOf(december.id)).toMatchObject({ status: 'generated' });
    t.clock.set('2026-01-05T06:00:00Z');
    const before = await gstr3b('122025');

    const res = await acme.http.POST('/v1/invoices/{id}/void', { path: { id: december.id } });
    expect(res.status, res.text).toBe(409);
    expect(res.error).toMatchObject({ code: 'conflict', reason: 'void_not_allowed' });
    expect(res.error!.message).toMatch(/credit note/);
    expect(await einvoiceOf(december.id)).toMatchObject({ status: 'generated', canceled_at: null });
    expect((await invoiceOf(december.id)).status).toBe('open');
    expect(await gstr3b('122025')).toEqual(before);

    t.clock.set('2026-12-05T06:00:00Z'); // a year later
    const late = await acme.http.POST('/v1/invoices/{id}/void', { path: { id: december.id } });
    expect(late.status, late.text).toBe(409);
    expect(late.error!.reason).toBe('void_not_allowed');
    expect((await invoiceOf(december.id)).status).toBe('open');
  });

  it('voids within 24 hours and cancels the IRN in the same action; the job tells the IRP', async () => {
    t.clock.set('2027-01-10T06:00:00Z');
    const invoice = await issue();
    await t.kosh.worker.drain();
    const irn = (await einvoiceOf(invoice.id)).irn;
    t.clock.advance(23 * 3600_000);
    const res = await acme.http.POST('/v1/invoices/{id}/void', { path: { id: invoice.id }, body: { reason_code: '3', remarks: 'Order cancelled' } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.status).toBe('void');
    expect(await einvoiceOf(invoice.id)).toMatchObject({ status: 'canceled', cancel_reason_code: 3, cancel_remarks: 'Order cancelled' });
    await t.kosh.worker.drain();
    const told = nic.requests.filter((r) => r.path === '/eicore/v1.03/Invoice/Cancel');
    expect(told.map((r) => r.payload)).toContainEqual({ Irn: irn, CnlRsn: '3', CnlRem: 'Order cancelled' });
  });

  it('cancels the IRN of a void without a body as "4 others"', async () => {
    const invoice = await issue();
    await t.kosh.worker.drain();
    expect((await acme.http.POST('/v1/invoices/{id}/void', { path: { id: invoice.id } })).status).toBe(200);
    expect(await einvoiceOf(invoice.id)).toMatchObject({ status: 'canceled', cancel_reason_code: 4, cancel_remarks: 'Invoice voided' });
  });

  it('refuses the void while the IRP registration is still pending (a live IRN could follow)', async () => {
    const invoice = await issue();
    const res = await acme.http.POST('/v1/invoices/{id}/void', { path: { id: invoice.id } });
    expect(res.status, res.text).toBe(409);
    expect(res.error!.reason).toBe('void_not_allowed');
    await t.kosh.worker.drain();
    expect(await einvoiceOf(invoice.id)).toMatchObject({ status: 'generated' });
  });
});

describe('voiding an invoice whose IRN registration failed', () => {
  it('voids it, and a retry then never registers the void invoice', async () => {
    const noAddress = await acme.http.POST('/v1/customers', { body: { email: 'x@noaddr.test', name: 'No Address Ltd', gstin: gstin('33', 'AACCN9876D') } });
    const invoice = await issue(noAddress.body.data.id);
    await t.kosh.worker.drain();
    expect(await einvoiceOf(invoice.id)).toMatchObject({ status: 'failed' });
    expect((await acme.http.POST('/v1/invoices/{id}/void', { path: { id: invoice.id } })).status).toBe(200);
    const retry = await acme.http.POST('/v1/invoices/{id}/einvoice/retry', { path: { id: invoice.id }, body: { refresh_buyer: false } });
    expect(retry.status, retry.text).toBe(409);
    expect(retry.error!.reason).toBe('invoice_void');
    expect(await einvoiceOf(invoice.id)).toMatchObject({ status: 'failed', irn: null });
  });
});

describe('POST /v1/invoices/{id}/einvoice/cancel', () => {
  it('voids the invoice with its IRN: it leaves receivables and GSTR-1', async () => {
    t.clock.set('2027-02-03T06:00:00Z');
    const invoice = await issue();
    await t.kosh.worker.drain();
    const res = await acme.http.POST('/v1/invoices/{id}/einvoice/cancel', { path: { id: invoice.id }, body: { reason_code: '2', remarks: 'Wrong rate' } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toMatchObject({ status: 'canceled', cancel_reason_code: 2 });
    const voided = await invoiceOf(invoice.id);
    expect(voided.status).toBe('void');
    const entries = (await acme.http.GET('/v1/invoices/{id}/journal-entries', { path: { id: invoice.id } })).body.data as {
      kind: string;
      lines: { account_code: number; debit: number; credit: number }[];
    }[];
    expect(entries.map((e) => e.kind).sort()).toEqual(['invoice.finalized', 'invoice.voided']);
    const receivable = entries.flatMap((e) => e.lines).filter((l) => l.account_code === 1100);
    expect(receivable.reduce((sum, l) => sum + l.debit - l.credit, 0)).toBe(0);
    const gstr1 = (await acme.http.GET('/v1/gst/gstr1', { query: { entity_id: entityId, period: '022027' } })).body.data;
    const listed = (gstr1.b2b ?? []).flatMap((b: { inv: { inum: string }[] }) => b.inv.map((i) => i.inum));
    expect(listed).not.toContain(invoice.number);
  });

  it('takes NIC reason codes as numbers or the strings "1"–"4", nothing else', async () => {
    const invoice = await issue();
    await t.kosh.worker.drain();
    for (const bad of ['5', '0', 'one', 5]) {
      const res = await acme.api('POST', `/v1/invoices/${invoice.id}/einvoice/cancel`, { reason_code: bad, remarks: 'x' });
      expect(res.status, String(bad)).toBe(400);
    }
    const ok = await acme.http.POST('/v1/invoices/{id}/einvoice/cancel', { path: { id: invoice.id }, body: { reason_code: '1', remarks: 'Duplicate' } });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.data.cancel_reason_code).toBe(1);
  });

  it('cancels neither the IRN nor the invoice when the invoice cannot be voided (a payment applied)', async () => {
    const invoice = await issue();
    await t.kosh.worker.drain();
    const pay = await acme.http.POST('/v1/payments/offline', {
      body: {
        customer_id: buyerId,
        invoice_id: invoice.id,
        payment_type: 'bank_transfer',
        currency: 'INR',
        amount: 1_000,
      },
    });
    expect(pay.status, pay.text).toBe(201);
    const res = await acme.http.POST('/v1/invoices/{id}/einvoice/cancel', { path: { id: invoice.id }, body: { reason_code: 2, remarks: 'Wrong amount' } });
    expect(res.status, res.text).toBe(409);
    expect(await einvoiceOf(invoice.id)).toMatchObject({ status: 'generated' });
    expect((await invoiceOf(invoice.id)).status).toBe('open');
  });
});

describe('voiding in a closed period', () => {
  it('refuses the void of an invoice whose month is closed, with or without an IRN, and cancels no IRN', async () => {
    t.clock.set('2027-03-10T06:00:00Z');
    const b2c = await issue(personId);
    const b2b = await issue();
    await t.kosh.worker.drain();
    const close = await acme.http.POST('/v1/entities/{id}/periods/{period}/close', { path: { id: entityId, period: '2027-03' } });
    expect(close.status, close.text).toBe(200);
    for (const invoice of [b2c, b2b]) {
      const res = await acme.http.POST('/v1/invoices/{id}/void', { path: { id: invoice.id } });
      expect(res.status, res.text).toBe(409);
      expect(res.error!.reason).toBe('void_not_allowed');
      expect(res.error!.message).toMatch(/2027-03.*credit note/);
    }
    const cancel = await acme.http.POST('/v1/invoices/{id}/einvoice/cancel', { path: { id: b2b.id }, body: { reason_code: 2, remarks: 'Wrong' } });
    expect(cancel.status).toBe(409);
    expect(await einvoiceOf(b2b.id)).toMatchObject({ status: 'generated' });
  });

  it('dates the void of an invoice of an open month in the first open month when this one is closed', async () => {
    t.clock.set('2027-04-30T06:00:00Z');
    const april = await issue(personId);
    t.clock.set('2027-05-10T06:00:00Z');
    expect((await acme.http.POST('/v1/entities/{id}/periods/{period}/close', { path: { id: entityId, period: '2027-05' } })).status).toBe(200);
    const res = await acme.http.POST('/v1/invoices/{id}/void', { path: { id: april.id } });
    expect(res.status, res.text).toBe(200);
    // 1 June 00:00 in India.
    expect(res.body.data.voided_at).toBe('2027-05-31T18:30:00.000Z');
    const entries = (await acme.http.GET('/v1/invoices/{id}/journal-entries', { path: { id: april.id } })).body.data as { kind: string; posted_at: string }[];
    expect(entries.find((e) => e.kind === 'invoice.voided')!.posted_at).toBe('2027-05-31T18:30:00.000Z');
  });
});
