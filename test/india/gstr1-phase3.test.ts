/**
 * GSTR-1 in the Phase III format (decision 0361) and GSTR-3B 3.1 never negative (decision 0362):
 * one supplier in Karnataka (29), a month of documents worked by hand. Every return is validated
 * against the committed offline-tool schema (src/modules/gst-returns/gstr1-schema.json).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKosh, type Tenant, type TestKosh } from '../support/harness.js';
import { gstinCheckCharacter } from '../../src/modules/tax/index.js';
import { validateGstr1 } from '../../src/modules/gst-returns/index.js';

const gstin = (state: string, pan: string) => {
  const first14 = `${state}${pan}1Z`;
  return first14 + gstinCheckCharacter(first14);
};

let t: TestKosh;
let acme: Tenant;
let entityId: string;
const ids: Record<string, string> = {};

async function invoice(customer: string, lines: Record<string, unknown>[]) {
  const res = await acme.http.POST('/v1/invoices', { body: { customer_id: ids[customer]!, currency: 'INR', lines } });
  expect(res.status, res.text).toBe(201);
  return res.body.data as { id: string; number: string; total: number };
}
const line = (rupees: number, extra: Record<string, unknown> = {}) => ({
  description: 'Service',
  quantity: 1,
  unit_amount: rupees * 100,
  hsn_code: '998314',
  ...extra,
});

beforeAll(async () => {
  t = await startTestKosh();
  t.clock.set('2026-06-02T04:30:00Z'); // 10:00 on 2 June 2026 in India
  acme = await t.registerTenant({ state_code: '29', gstin: gstin('29', 'AAECK4321L') });
  entityId = (await acme.http.GET('/v1/entities')).body.data[0]!.id;
  const customer = async (name: string, body: Record<string, unknown>) => {
    const res = await acme.http.POST('/v1/customers', { body: { email: `${name}@c.test`, name, ...body } });
    expect(res.status, res.text).toBe(201);
    ids[name] = res.body.data.id;
  };
  await customer('b2b', { gstin: gstin('27', 'AABCB1234C') });
  await customer('person', { billing_address: { state_code: '29' } });
  await customer('sez', { gstin: gstin('33', 'AACCS5678E'), sez: true });

  // June. (1) B2B inter-state ₹10,000 at 18 %: IGST ₹1,800.
  await invoice('b2b', [line(10_000)]);
  // (2) B2C intra-state: ₹1,000 at 18 % (CGST ₹90 + SGST ₹90), ₹500 of exempt service (0 %) and
  // ₹200 of nil-rated goods (HSN 0902 at 0 %).
  await invoice('person', [line(1_000), line(500, { tax_rate_bp: 0 }), line(200, { hsn_code: '0902', tax_rate_bp: 0 })]);
  // (3) B2C intra-state ₹1,000 at 18 %: ₹1,180 — credited in full in July.
  ids.toCredit = (await invoice('person', [line(1_000)])).id;
  // (4) SEZ unit under LUT ₹5,000 (zero-rated, SEWOP) and a ₹1,000 credit note on it.
  const sez = await invoice('sez', [line(5_000)]);
  const note = await acme.http.POST('/v1/credit-notes', { body: { customer_id: ids.sez!, invoice_id: sez.id, amount: 1_000_00, reason: 'Discount' } });
  expect(note.status, note.text).toBe(201);

  // July: the whole of (3) credited, nothing sold.
  t.clock.set('2026-07-10T04:30:00Z');
  const july = await acme.http.POST('/v1/credit-notes', {
    body: { customer_id: ids.person!, invoice_id: ids.toCredit!, amount: 1_180_00, reason: 'Cancelled' },
  });
  expect(july.status, july.text).toBe(201);

  // August: ₹3,000 B2C at 18 % (CGST ₹270 + SGST ₹270).
  t.clock.set('2026-08-05T04:30:00Z');
  await invoice('person', [line(3_000)]);
  t.clock.set('2026-09-02T04:30:00Z');
});
afterAll(() => t.close());

const gstr1 = async (period: string) => {
  const res = await acme.http.GET('/v1/gst/gstr1', { query: { entity_id: entityId, period } });
  expect(res.status, res.text).toBe(200);
  expect(validateGstr1(res.body.data)).toEqual([]);
  return res.body.data;
};
const gstr3b = async (period: string) => {
  const res = await acme.http.GET('/v1/gst/gstr3b', { query: { entity_id: entityId, period } });
  expect(res.status, res.text).toBe(200);
  return res.body.data;
};

describe('GSTR-1, Phase III format', () => {
  it('names the format version and conforms to the committed schema', async () => {
    expect((await gstr1('062026')).version).toMatch(/^GST\d/);
  });

  it('table 8: 0 % lines go to nil (goods nil-rated, services exempt), never as 0 % b2cs rows', async () => {
    const r = await gstr1('062026');
    expect(r.nil).toEqual({ inv: [{ sply_ty: 'INTRAB2C', nil_amt: 200, expt_amt: 500, ngsup_amt: 0 }] });
    // B2CS: only the 18 % of (2) and (3): ₹2,000, CGST ₹180, SGST ₹180.
    expect(r.b2cs).toEqual([{ sply_ty: 'INTRA', pos: '29', typ: 'OE', rt: 18, txval: 2_000, iamt: 0, camt: 180, samt: 180, csamt: 0 }]);
  });

  it('table 12 in two tabs: B2B (registered and SEZ) and B2C', async () => {
    const r = await gstr1('062026');
    const tab = (rows: { hsn_sc: string; rt: number; txval: number }[]) => Object.fromEntries(rows.map((h) => [`${h.hsn_sc}@${h.rt}`, h.txval]));
    // B2B: ₹10,000 at 18 %; the SEZ supply ₹5,000 less its ₹1,000 note at 0 %.
    expect(tab(r.hsn.hsn_b2b)).toEqual({ '998314@18': 10_000, '998314@0': 4_000 });
    // B2C: ₹1,000 + ₹1,000 at 18 %, ₹500 exempt, ₹200 nil-rated tea.
    expect(tab(r.hsn.hsn_b2c)).toEqual({ '998314@18': 2_000, '998314@0': 500, '0902@0': 200 });
  });

  it('a credit note to an SEZ unit carries SEWOP like its invoice', async () => {
    const r = await gstr1('062026');
    expect(r.b2b.find((b: { ctin: string }) => b.ctin.startsWith('33'))!.inv[0]!.inv_typ).toBe('SEWOP');
    expect(r.cdnr).toHaveLength(1);
    expect(r.cdnr[0]!.nt[0]).toMatchObject({ ntty: 'C', inv_typ: 'SEWOP', val: 1_000 });
  });

  it('table 13 lists every series with its numbers', async () => {
    const r = await gstr1('062026');
    const kinds = Object.fromEntries(r.doc_issue.doc_det.map((d: { doc_num: number; docs: { totnum: number }[] }) => [d.doc_num, d.docs[0]!.totnum]));
    expect(kinds).toEqual({ 1: 4, 5: 1 });
  });

  it('above ₹5 crore of turnover an invoice needs a 6-digit HSN (Notification 78/2020-CT)', async () => {
    await acme.http.PATCH('/v1/entities/{id}', { path: { id: entityId }, body: { aato_band: 'above_5_crore' } });
    const res = await acme.api('POST', '/v1/invoices', { customer_id: ids.b2b, currency: 'INR', lines: [line(100, { hsn_code: '0902' })] });
    expect(res.status).toBe(400);
    expect(res.body.error.details[0].field).toBe('lines.0.hsn_code');
    await acme.http.PATCH('/v1/entities/{id}', { path: { id: entityId }, body: { aato_band: 'up_to_5_crore' } });
  });
});

describe('GSTR-3B 3.1 is never negative', () => {
  it('June: supplies, zero-rated and nil/exempt as worked by hand', async () => {
    const b = (await gstr3b('062026')).sup_details;
    // ₹10,000 + ₹1,000 + ₹1,000 taxable; IGST ₹1,800, CGST ₹90 + ₹90, SGST the same.
    expect(b.osup_det).toEqual({ txval: 12_000, iamt: 1_800, camt: 180, samt: 180, csamt: 0 });
    expect(b.osup_zero).toEqual({ txval: 4_000, iamt: 0, camt: 0, samt: 0, csamt: 0 });
    expect(b.osup_nil_exmp).toEqual({ txval: 700, iamt: 0, camt: 0, samt: 0, csamt: 0 });
  });

  it('July: a credit larger than the month shows 0 and carries ₹1,000 (CGST ₹90, SGST ₹90) forward', async () => {
    const r = await gstr3b('072026');
    expect(r.sup_details.osup_det).toEqual({ txval: 0, iamt: 0, camt: 0, samt: 0, csamt: 0 });
    expect(r.carry_forward).toEqual({ osup_det: { txval: 1_000, iamt: 0, camt: 90, samt: 90 } });
  });

  it('August: ₹3,000 less the ₹1,000 carried in = ₹2,000; CGST ₹270 − ₹90 = ₹180', async () => {
    const r = await gstr3b('082026');
    expect(r.sup_details.osup_det).toEqual({ txval: 2_000, iamt: 0, camt: 180, samt: 180, csamt: 0 });
    expect(r.carried_in).toEqual({ osup_det: { txval: 1_000, iamt: 0, camt: 90, samt: 90 } });
    expect(r.carry_forward).toEqual({});
  });
});
