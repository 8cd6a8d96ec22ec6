/**
 * A supplier without a GSTIN is not registered for GST (DESIGN §20; CGST Act s.32(1): a person
 * who is not registered shall not collect tax): its invoices and credit notes carry no GST, are
 * titled "Invoice", post no output tax, and it has no GST returns and no IRNs. A tenant registered
 * the way the README's client example does it (name and e-mail only) is exactly such a supplier.
 * Entities outside India charge no GST either.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCustomer, gstinFor } from '../support/billing.js';
import { startTestKosh, type Tenant, type TestKosh } from '../support/harness.js';

let t: TestKosh;
let tenant: Tenant;
let entityId: string;
let registeredBuyer: string;
let otherStateBuyer: string;

beforeAll(async () => {
  t = await startTestKosh();
  tenant = await t.registerTenant({ name: 'Acme', email: 'billing@acme.in' });
  entityId = (await tenant.http.GET('/v1/entities')).body.data[0]!.id;
  registeredBuyer = await createCustomer(tenant, { gstin: gstinFor('29', 'BBBBB2222B1Z') });
  otherStateBuyer = await createCustomer(tenant, { billing_address: { state_code: '27', country: 'IN' } });
});
afterAll(() => t.close());

async function finalizedInvoice(customerId: string, extra: Record<string, unknown> = {}) {
  const res = await tenant.http.POST('/v1/invoices', {
    body: {
      customer_id: customerId,
      currency: 'INR',
      lines: [{ description: 'Seats', unit_amount: 59_000, quantity: 2 }],
      auto_finalize: true,
      ...extra,
    },
  });
  expect(res.status, res.text).toBe(201);
  return res.body.data;
}

/** The PDF's document title: the Info dictionary's /Title, an indirect string object pdfkit writes uncompressed. */
async function pdfTitle(path: string): Promise<string> {
  const res = await t.kosh.app.inject({ method: 'GET', url: path, headers: { authorization: `Bearer ${tenant.key}` } });
  expect(res.statusCode).toBe(200);
  const raw = res.rawPayload.toString('latin1');
  const ref = /\/Title (\d+) 0 R/.exec(raw);
  expect(ref, 'the PDF has a title').not.toBeNull();
  const title = new RegExp(`(?:^|\\n)${ref![1]} 0 obj\\s*\\(([^)]*)\\)`).exec(raw);
  expect(title, 'the title is a plain string').not.toBeNull();
  return title![1]!;
}

/** Output-tax postings (CGST 2100, SGST 2110, IGST 2120) in the tenant's books. */
async function outputTaxPostings(): Promise<number> {
  const rows = await sql<{ n: number }>`
    SELECT count(*)::int AS n FROM journal_lines WHERE tenant_id = ${tenant.tenantId} AND account_code IN (2100, 2110, 2120)`.execute(t.database.db);
  return rows.rows[0]!.n;
}

describe('a supplier without a GSTIN', () => {
  it('issues invoices without GST, titled "Invoice", to registered and unregistered buyers in any state', async () => {
    for (const customer of [registeredBuyer, otherStateBuyer]) {
      const invoice = await finalizedInvoice(customer);
      expect(invoice).toMatchObject({
        subtotal: 118_000,
        tax_amount: 0,
        cgst_amount: 0,
        sgst_amount: 0,
        igst_amount: 0,
        tax_type: '',
        place_of_supply: null,
        total: 118_000,
      });
      expect(invoice.lines[0]).toMatchObject({ tax_rate_bp: 0, tax_amount: 0 });
      expect(await pdfTitle(`/v1/invoices/${invoice.id}/pdf`)).toBe(`Invoice ${invoice.number}`);
    }
  });

  it('credits without GST: the credit note reverses no tax and is no GST credit note', async () => {
    const invoice = await finalizedInvoice(registeredBuyer);
    const res = await tenant.http.POST('/v1/credit-notes', { body: { customer_id: registeredBuyer, invoice_id: invoice.id, amount: 59_000 } });
    expect(res.status, res.text).toBe(201);
    expect(res.body.data).toMatchObject({ amount: 59_000, subtotal: 59_000, tax_amount: 0, igst_amount: 0, cgst_amount: 0, sgst_amount: 0, tax_type: '' });
    expect(await pdfTitle(`/v1/credit-notes/${res.body.data.id}/pdf`)).toBe(`Credit Note ${res.body.data.number}`);
  });

  it('posts no output tax to its ledger', async () => {
    await finalizedInvoice(otherStateBuyer);
    expect(await outputTaxPostings()).toBe(0);
  });

  it('has no GST returns (409 entity_not_gst_registered) and cannot turn on e-invoicing', async () => {
    for (const form of ['gstr1', 'gstr3b']) {
      const res = await tenant.api('GET', `/v1/gst/${form}?entity_id=${entityId}&period=042026`);
      expect(res.status, form).toBe(409);
      expect(res.body.error).toMatchObject({ code: 'conflict', reason: 'entity_not_gst_registered' });
    }
    const einvoicing = await tenant.http.PATCH('/v1/entities/{id}', { path: { id: entityId }, body: { einvoicing: { enabled: true, provider: 'sandbox' } } });
    expect(einvoicing.status).toBe(400);
    expect(einvoicing.error!.details![0]!.field).toBe('einvoicing.enabled');
  });

  it('charges no GST from an entity outside India either', async () => {
    const us = await tenant.http.POST('/v1/entities', { body: { name: 'Acme Inc', invoice_prefix: 'US-', country_code: 'US' } });
    expect(us.status, us.text).toBe(201);
    const invoice = await finalizedInvoice(otherStateBuyer, { entity_id: us.body.data.id });
    expect(invoice).toMatchObject({ tax_amount: 0, tax_type: '', total: 118_000 });
  });

  it('charges GST once it registers: the GSTIN, not the country, makes the supplier a GST supplier', async () => {
    const registered = await tenant.http.PATCH('/v1/settings', { body: { gstin: gstinFor('29') } });
    expect(registered.status, registered.text).toBe(200);
    const invoice = await finalizedInvoice(otherStateBuyer);
    expect(invoice).toMatchObject({ subtotal: 118_000, igst_amount: 21_240, tax_type: 'inter_state', place_of_supply: '27', total: 139_240 });
    expect(await pdfTitle(`/v1/invoices/${invoice.id}/pdf`)).toBe(`Tax Invoice ${invoice.number}`);
    expect(await outputTaxPostings()).toBeGreaterThan(0);
  });
});
