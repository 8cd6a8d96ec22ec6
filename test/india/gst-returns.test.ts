import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKosh, type Tenant, type TestKosh } from '../support/harness.js';
import { gstinCheckCharacter } from '../../src/modules/tax/index.js';
import { validateGstr1 } from '../../src/modules/gst-returns/index.js';

const gstin = (state: string, pan: string) => {
  const first14 = `${state}${pan}1Z`;
  return first14 + gstinCheckCharacter(first14);
};
const SUPPLIER = gstin('29', 'AAECK4321L');
const B2B_KA = gstin('29', 'AABCB1234C');
const B2B_MH = gstin('27', 'AABCM5678D');

let t: TestKosh;
let acme: Tenant;
let entityId: string;
const inv: Record<string, { id: string; number: string | null; total: number }> = {};
const notes: Record<string, { id: string; number: string | null }> = {};

async function customer(email: string, extra: Record<string, unknown>) {
  const res = await acme.http.POST('/v1/customers', { body: { email, name: email.split('@')[0], ...extra } });
  expect(res.status).toBe(201);
  return res.body.data.id as string;
}

async function invoice(name: string, customerId: string, rupees: number) {
  const res = await acme.http.POST('/v1/invoices', {
    body: {
      customer_id: customerId,
      currency: 'INR',
      lines: [{ description: `Supply ${name}`, quantity: 1, unit_amount: rupees * 100, hsn_code: '998314' }],
    },
  });
  expect(res.status).toBe(201);
  inv[name] = res.body.data;
}

async function creditNote(name: string, invoiceName: string, rupees: number) {
  const original = inv[invoiceName]!;
  const res = await acme.http.POST('/v1/credit-notes', {
    body: {
      customer_id: (await acme.http.GET('/v1/invoices/{id}', { path: { id: original.id } })).body.data.customer_id,
      invoice_id: original.id,
      amount: rupees * 100,
      reason: 'Service credit',
    },
  });
  expect(res.status).toBe(201);
  notes[name] = res.body.data;
}

/**
 * A generated April 2026 (the supplier is in Karnataka, 29): every kind of supply GSTR-1
 * separates, a void, and credit notes of each kind. The expected figures below are worked out
 * by hand from these amounts at 18%.
 */
beforeAll(async () => {
  t = await startTestKosh();
  t.clock.set('2026-04-02T06:00:00Z');
  acme = await t.registerTenant({ state_code: '29', gstin: SUPPLIER });
  entityId = (await acme.http.GET('/v1/entities')).body.data[0]!.id;
  const b2bKa = await customer('ka@b2b.test', { gstin: B2B_KA });
  const b2bMh = await customer('mh@b2b.test', { gstin: B2B_MH });
  const b2cKa = await customer('ka@b2c.test', { billing_address: { state_code: '29' } });
  const b2cMh = await customer('mh@b2c.test', { billing_address: { state_code: '27' } });
  const abroad = await customer('buyer@abroad.test', { billing_address: { city: 'Austin', country: 'US' } });
  await invoice('b2bIntra', b2bKa, 10_000);
  await invoice('b2bInter', b2bMh, 20_000);
  await invoice('b2bVoid', b2bMh, 5_000);
  expect((await acme.http.POST('/v1/invoices/{id}/void', { path: { id: inv.b2bVoid!.id } })).status).toBe(200);
  await invoice('b2cSmallIntra', b2cKa, 1_000);
  await invoice('b2cSmallInter', b2cMh, 50_000);
  t.clock.set('2026-04-30T18:00:00Z'); // 23:30 on 30 April in India: still April
  await invoice('b2cLargeInter', b2cMh, 2_00_000);
  await invoice('b2cLargeIntra', b2cKa, 2_00_000);
  await invoice('export', abroad, 30_000);
  await creditNote('onB2b', 'b2bInter', 2_360);
  await creditNote('onB2cl', 'b2cLargeInter', 11_800);
  await creditNote('onB2cs', 'b2cSmallIntra', 118);
  await creditNote('onExport', 'export', 3_000);
  t.clock.set('2026-04-30T18:30:00Z'); // 1 May in India: the next period
  await invoice('may', b2bKa, 999);
  t.clock.set('2026-05-10T00:00:00Z');
});
afterAll(() => t.close());

const gstr1 = async () => {
  const res = await acme.http.GET('/v1/gst/gstr1', { query: { entity_id: entityId, period: '042026' } });
  expect(res.status).toBe(200);
  // Every return conforms to the committed offline-tool schema (decision 0361).
  expect(validateGstr1(res.body.data)).toEqual([]);
  return res.body.data;
};

/** Table 12's two tabs as one list (the totals below are over both). */
const hsnRows = (r: { hsn: { hsn_b2b: unknown[]; hsn_b2c: unknown[] } }) => [...r.hsn.hsn_b2b, ...r.hsn.hsn_b2c] as Record<string, number & string>[];

const item = (num: number, txval: number, rt: number, taxes: { iamt?: number; camt?: number; samt?: number }) => ({
  num,
  itm_det: { txval, rt, iamt: taxes.iamt ?? 0, camt: taxes.camt ?? 0, samt: taxes.samt ?? 0, csamt: 0 },
});

describe('GST returns', () => {
  describe('GSTR-1', () => {
    it('names the GSTIN and the period', async () => {
      const r = await gstr1();
      expect(r.gstin).toBe(SUPPLIER);
      expect(r.fp).toBe('042026');
    });

    it('b2b: registered recipients by GSTIN, intra- and inter-state, without the void', async () => {
      const r = await gstr1();
      expect(r.b2b).toEqual([
        {
          ctin: B2B_KA,
          inv: [
            {
              inum: inv.b2bIntra!.number,
              idt: '02-04-2026',
              val: 11800,
              pos: '29',
              rchrg: 'N',
              inv_typ: 'R',
              itms: [item(1, 10000, 18, { camt: 900, samt: 900 })],
            },
          ],
        },
        {
          ctin: B2B_MH,
          inv: [{ inum: inv.b2bInter!.number, idt: '02-04-2026', val: 23600, pos: '27', rchrg: 'N', inv_typ: 'R', itms: [item(1, 20000, 18, { iamt: 3600 })] }],
        },
      ]);
    });

    it('b2cl: the inter-state B2C invoice over ₹1 lakh only', async () => {
      const r = await gstr1();
      expect(r.b2cl).toEqual([
        { pos: '27', inv: [{ inum: inv.b2cLargeInter!.number, idt: '30-04-2026', val: 236000, itms: [item(1, 200000, 18, { iamt: 36000 })] }] },
      ]);
    });

    it('b2cs: the rest of B2C by supply type, place of supply and rate, net of B2C credit notes', async () => {
      const r = await gstr1();
      const byKey = Object.fromEntries(r.b2cs.map((e: { sply_ty: string; pos: string }) => [`${e.sply_ty}-${e.pos}`, e]));
      // 1,000 + 2,00,000 − 100 (credit note); CGST and SGST 90 + 18,000 − 9.
      expect(byKey['INTRA-29']).toEqual({ sply_ty: 'INTRA', pos: '29', typ: 'OE', rt: 18, txval: 200900, iamt: 0, camt: 18081, samt: 18081, csamt: 0 });
      expect(byKey['INTER-27']).toEqual({ sply_ty: 'INTER', pos: '27', typ: 'OE', rt: 18, txval: 50000, iamt: 9000, camt: 0, samt: 0, csamt: 0 });
      expect(r.b2cs).toHaveLength(2);
    });

    it('exp: the export without payment of tax', async () => {
      const r = await gstr1();
      expect(r.exp).toHaveLength(1);
      expect(r.exp[0]!.exp_typ).toBe('WOPAY');
      expect(r.exp[0]!.inv).toEqual([
        { inum: inv.export!.number, idt: '30-04-2026', val: 30000, itms: [{ txval: 30000, rt: expect.any(Number), iamt: 0, csamt: 0 }] },
      ]);
    });

    it('cdnr and cdnur: credit notes to registered recipients, and on B2CL and export invoices', async () => {
      const r = await gstr1();
      expect(r.cdnr).toEqual([
        {
          ctin: B2B_MH,
          nt: [
            {
              ntty: 'C',
              nt_num: notes.onB2b!.number,
              nt_dt: '30-04-2026',
              val: 2360,
              pos: '27',
              rchrg: 'N',
              inv_typ: 'R',
              itms: [item(1, 2000, 18, { iamt: 360 })],
            },
          ],
        },
      ]);
      expect(r.cdnur).toEqual([
        { ntty: 'C', nt_num: notes.onB2cl!.number, nt_dt: '30-04-2026', val: 11800, typ: 'B2CL', pos: '27', itms: [item(1, 10000, 18, { iamt: 1800 })] },
        { ntty: 'C', nt_num: notes.onExport!.number, nt_dt: '30-04-2026', val: 3000, typ: 'EXPWOP', pos: '96', itms: [item(1, 3000, 0, {})] },
      ]);
    });

    it("hsn: one row per code and rate, net of credit notes, equal to the sections' totals", async () => {
      const r = await gstr1();
      const rows = hsnRows(r).filter((h) => h.hsn_sc === '998314');
      const sum = (k: string) => Math.round(rows.reduce((s: number, h: Record<string, number>) => s + h[k]! * 100, 0)) / 100;
      // Invoices 10,000 + 20,000 + 1,000 + 50,000 + 2,00,000 + 2,00,000 + 30,000 = 5,11,000,
      // less credit notes 2,000 + 10,000 + 100 + 3,000.
      expect(sum('txval')).toBe(511000 - 15100);
      expect(sum('iamt')).toBe(3600 + 9000 + 36000 - 360 - 1800);
      expect(sum('camt')).toBe(900 + 90 + 18000 - 9);
    });

    it('doc_issue: the series from first to last number, the void counted as cancelled', async () => {
      const r = await gstr1();
      const invoices = r.doc_issue.doc_det.find((d: { doc_num: number }) => d.doc_num === 1);
      expect(invoices!.docs).toEqual([{ num: 1, from: inv.b2bIntra!.number, to: inv.export!.number, totnum: 8, cancel: 1, net_issue: 7 }]);
      const credit = r.doc_issue.doc_det.find((d: { doc_num: number }) => d.doc_num === 5);
      expect(credit!.docs).toEqual([{ num: 1, from: notes.onB2b!.number, to: notes.onExport!.number, totnum: 4, cancel: 0, net_issue: 4 }]);
    });

    it("answers CSV for accountants, its rows summing to the JSON's totals", async () => {
      const res = await acme.http.GET('/v1/gst/gstr1', { query: { entity_id: entityId, period: '042026', format: 'csv' } });
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toContain('text/csv');
      const lines = res.text.trim().split('\n');
      expect(lines[0]).toBe('section,recipient_gstin,document_number,document_date,place_of_supply,rate,taxable_value,igst,cgst,sgst,document_value');
      const b2b = lines.filter((l) => l.startsWith('b2b,'));
      expect(b2b.map((l) => l.split(',')[6])).toEqual(['10000.00', '20000.00']);
    });

    it("refuses a period not MMYYYY or in the future (400), and another tenant's entity (404)", async () => {
      for (const period of ['2026-04', '132026', '04202', '062026']) {
        const res = await acme.api('GET', `/v1/gst/gstr1?entity_id=${entityId}&period=${period}`);
        expect(res.status, period).toBe(400);
      }
      const other = await t.registerTenant({ state_code: '29' });
      expect((await other.http.GET('/v1/gst/gstr1', { query: { entity_id: entityId, period: '042026' } })).status).toBe(404);
    });
  });

  describe('GSTR-3B', () => {
    it('table 3.1: taxable, zero-rated and nil supplies net of credit notes', async () => {
      const res = await acme.http.GET('/v1/gst/gstr3b', { query: { entity_id: entityId, period: '042026' } });
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual({
        gstin: SUPPLIER,
        ret_period: '042026',
        // Nothing carried either way (decision 0362): April's supplies exceed its notes.
        carried_in: {},
        carry_forward: {},
        sup_details: {
          osup_det: { txval: 468900, iamt: 46440, camt: 18981, samt: 18981, csamt: 0 },
          osup_zero: { txval: 27000, iamt: 0, camt: 0, samt: 0, csamt: 0 },
          osup_nil_exmp: { txval: 0, iamt: 0, camt: 0, samt: 0, csamt: 0 },
          isup_rev: { txval: 0, iamt: 0, camt: 0, samt: 0, csamt: 0 },
          osup_nongst: { txval: 0, iamt: 0, camt: 0, samt: 0, csamt: 0 },
        },
      });
    });
  });
});

/**
 * March 2026 of a second supplier: a dollar export (₹80 per dollar) and an INR B2B invoice at two
 * rates, each with a credit note — the export's at the invoice's rate, the B2B one by line.
 */
describe('GSTR-1 in rupees, credit notes per rate', () => {
  let west: Tenant;
  let westEntity: string;
  const WEST = gstin('29', 'AAECW9999W');
  beforeAll(async () => {
    t.clock.set('2026-03-05T06:00:00Z');
    west = await t.registerTenant({ state_code: '29', gstin: WEST });
    westEntity = (await west.http.GET('/v1/entities')).body.data[0]!.id;
    const abroad = (
      await west.http.POST('/v1/customers', { body: { email: 'us@abroad.test', name: 'US Buyer', billing_address: { city: 'Austin', country: 'US' } } })
    ).body.data.id;
    const mh = (await west.http.POST('/v1/customers', { body: { email: 'mh@west.test', name: 'MH Buyer', gstin: B2B_MH } })).body.data.id;
    const exp = await west.http.POST('/v1/invoices', {
      body: {
        customer_id: abroad,
        currency: 'USD',
        exchange_rate: '80',
        lines: [{ description: 'Annual plan', quantity: 1, unit_amount: 100_000, hsn_code: '998314' }],
      },
    });
    expect(exp.status, exp.text).toBe(201);
    expect(exp.body.data.inr_total).toBe(8_000_000);
    const b2b = await west.http.POST('/v1/invoices', {
      body: {
        customer_id: mh,
        currency: 'INR',
        lines: [
          { description: 'Platform fee', quantity: 1, unit_amount: 100_000, hsn_code: '998314' },
          { description: 'Tea hampers', quantity: 1, unit_amount: 200_000, hsn_code: '0902' },
        ],
      },
    });
    expect(b2b.status, b2b.text).toBe(201);
    const [fee, tea] = b2b.body.data.lines;
    const byLine = await west.http.POST('/v1/credit-notes', {
      body: {
        customer_id: mh,
        invoice_id: b2b.body.data.id,
        reason: 'Partial return',
        lines: [
          { invoice_line_id: fee!.id, amount: 11_800 },
          { invoice_line_id: tea!.id, amount: 21_000 },
        ],
      },
    });
    expect(byLine.status, byLine.text).toBe(201);
    const onExport = await west.http.POST('/v1/credit-notes', {
      body: {
        customer_id: abroad,
        invoice_id: exp.body.data.id,
        amount: 25_000,
        reason: 'Quarter unused',
      },
    });
    expect(onExport.status, onExport.text).toBe(201);
    t.clock.set('2026-05-10T00:00:00Z');
  });

  it('exp, cdnr, cdnur, hsn and 3B in rupees; a note by line has one item per rate', async () => {
    const res = await west.http.GET('/v1/gst/gstr1', { query: { entity_id: westEntity, period: '032026' } });
    expect(res.status, res.text).toBe(200);
    const r = res.body.data;
    expect(r.exp).toEqual([{ exp_typ: 'WOPAY', inv: [expect.objectContaining({ val: 80_000, itms: [{ txval: 80_000, rt: 0, iamt: 0, csamt: 0 }] })] }]);
    expect(r.cdnr).toHaveLength(1);
    expect(r.cdnr[0]!.nt[0]).toMatchObject({
      val: 328,
      itms: [
        { num: 1, itm_det: { txval: 200, rt: 5, iamt: 10, camt: 0, samt: 0, csamt: 0 } },
        { num: 2, itm_det: { txval: 100, rt: 18, iamt: 18, camt: 0, samt: 0, csamt: 0 } },
      ],
    });
    // A quarter of the export at the invoice's ₹80, not at any later rate.
    expect(r.cdnur).toEqual([
      expect.objectContaining({ typ: 'EXPWOP', val: 20_000, itms: [{ num: 1, itm_det: expect.objectContaining({ txval: 20_000, rt: 0 }) }] }),
    ]);
    expect(validateGstr1(r)).toEqual([]);
    const hsn = Object.fromEntries(hsnRows(r).map((h) => [`${h.hsn_sc}@${h.rt}`, h.txval]));
    expect(hsn).toEqual({ '998314@18': 900, '998314@0': 60_000, '0902@5': 1_800 });
    const b3 = (await west.http.GET('/v1/gst/gstr3b', { query: { entity_id: westEntity, period: '032026' } })).body.data.sup_details;
    expect(b3.osup_zero).toMatchObject({ txval: 60_000, iamt: 0 });
    expect(b3.osup_det).toMatchObject({ txval: 2_700, iamt: 252 }); // 180 + 100 charged, 18 + 10 credited
  });
});
