/**
 * Two details of the IRP document (schema 1.1) that used to be fixed values:
 * - ExpDtls.RefClm: an exporter that pays IGST on its exports (no LUT, EXPWP) may claim that IGST
 *   back (IGST Act s.16(3)(b)); whether it does is the entity's `export_refund_claim` (default
 *   false, "N"). Under LUT nothing was paid, so nothing is claimed.
 * - A credit note that takes back whole units of an invoice line (a goods return) is registered
 *   with that quantity, not as one unit.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { irpDocumentOf, validateIrpDocument } from '../../src/modules/einvoicing/index.js';
import { createCustomer, gstinFor } from '../support/billing.js';
import { startTestKosh, type Tenant, type TestKosh } from '../support/harness.js';

let t: TestKosh;
let tenant: Tenant;
let entityId: string;
let abroad: string;

beforeAll(async () => {
  t = await startTestKosh();
  tenant = await t.registerTenant({ gstin: gstinFor('29') });
  entityId = (await tenant.http.GET('/v1/entities')).body.data[0]!.id;
  await tenant.http.PATCH('/v1/entities/{id}', { path: { id: entityId }, body: { address: { line1: '1 MG Road', city: 'Bengaluru', postal_code: '560001' } } });
  abroad = await createCustomer(tenant, { name: 'Abroad Inc', billing_address: { line1: '1 Market Street', city: 'San Francisco', country: 'US' } });
});
afterAll(() => t.close());

type IrpDoc = {
  TranDtls: { SupTyp: string };
  ExpDtls?: { RefClm?: string };
  ItemList: { Qty: number; UnitPrice: number; TotAmt: number; AssAmt: number }[];
};

async function documentOf(type: 'invoice' | 'credit_note', id: string): Promise<IrpDoc> {
  const document = await irpDocumentOf({ tx: t.database.db, tenantId: tenant.tenantId, now: t.clock.now() }, type, id);
  expect(validateIrpDocument(document), `IRP document of ${type} ${id}`).toEqual([]);
  return document as unknown as IrpDoc;
}

async function exportInvoice(): Promise<string> {
  const res = await tenant.http.POST('/v1/invoices', {
    body: {
      customer_id: abroad,
      entity_id: entityId,
      currency: 'INR',
      lines: [{ description: 'Annual plan', unit_amount: 100_000 }],
      auto_finalize: true,
    },
  });
  expect(res.status, res.text).toBe(201);
  return res.body.data.id;
}

async function setEntity(body: Record<string, unknown>) {
  const res = await tenant.http.PATCH('/v1/entities/{id}', { path: { id: entityId }, body });
  expect(res.status, res.text).toBe(200);
  return res.body.data;
}

describe('ExpDtls.RefClm', () => {
  it('says "N" by default, even on an export that paid IGST', async () => {
    expect((await setEntity({ lut: false })).export_refund_claim).toBe(false);
    const doc = await documentOf('invoice', await exportInvoice());
    expect(doc.TranDtls.SupTyp).toBe('EXPWP');
    expect(doc.ExpDtls?.RefClm).toBe('N');
  });

  it('says "Y" on an export with payment of IGST when the entity claims the refund, and on its credit note', async () => {
    expect((await setEntity({ lut: false, export_refund_claim: true })).export_refund_claim).toBe(true);
    const invoiceId = await exportInvoice();
    const doc = await documentOf('invoice', invoiceId);
    expect(doc.TranDtls.SupTyp).toBe('EXPWP');
    expect(doc.ExpDtls?.RefClm).toBe('Y');
    const note = await tenant.http.POST('/v1/credit-notes', { body: { customer_id: abroad, invoice_id: invoiceId, amount: 11_800, reason: 'Unused month' } });
    expect(note.status, note.text).toBe(201);
    expect((await documentOf('credit_note', note.body.data.id)).ExpDtls?.RefClm).toBe('Y');
  });

  it('says "N" under LUT: no IGST was paid, so none is claimed', async () => {
    await setEntity({ lut: true, export_refund_claim: true });
    const doc = await documentOf('invoice', await exportInvoice());
    expect(doc.TranDtls.SupTyp).toBe('EXPWOP');
    expect(doc.ExpDtls?.RefClm).toBe('N');
  });
});

describe('a goods return on the IRP', () => {
  it('registers the units credited: 3 of 5 returned go as quantity 3; a price reduction as one item', async () => {
    const buyer = await createCustomer(tenant, {
      name: 'Tile Buyer',
      gstin: gstinFor('27', 'BBBBB2222B1Z'),
      billing_address: { line1: '5 Marine Drive', city: 'Mumbai', postal_code: '400002', state_code: '27', country: 'IN' },
    });
    const created = await tenant.http.POST('/v1/invoices', {
      body: {
        customer_id: buyer,
        currency: 'INR',
        lines: [{ description: 'Clay tiles', quantity: 5, unit_amount: 10_000, hsn_code: '6904' }],
        auto_finalize: true,
      },
    });
    expect(created.status, created.text).toBe(201);
    const line = created.body.data.lines[0];
    const unitGross = line!.total / 5;
    const returned = await tenant.http.POST('/v1/credit-notes', {
      body: {
        customer_id: buyer,
        invoice_id: created.body.data.id,
        reason: 'Three tiles returned broken',
        lines: [{ invoice_line_id: line!.id, amount: 3 * unitGross }],
      },
    });
    expect(returned.status, returned.text).toBe(201);
    const [item] = (await documentOf('credit_note', returned.body.data.id)).ItemList;
    expect(item).toMatchObject({ Qty: 3, UnitPrice: 100, TotAmt: 300, AssAmt: 300 });

    const reduced = await tenant.http.POST('/v1/credit-notes', {
      body: {
        customer_id: buyer,
        invoice_id: created.body.data.id,
        reason: 'Price reduction',
        lines: [{ invoice_line_id: line!.id, amount: Math.floor(unitGross / 2) }],
      },
    });
    expect(reduced.status, reduced.text).toBe(201);
    expect((await documentOf('credit_note', reduced.body.data.id)).ItemList[0]).toMatchObject({ Qty: 1 });
  });
});
