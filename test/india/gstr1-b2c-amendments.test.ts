/**
 * Amendments of B2C and export supplies (decision 0610). June 2026, a supplier in Karnataka (29):
 * small inter-state invoices to unregistered buyers in Maharashtra (27) and Delhi (07), an export
 * under LUT, a large one (B2CL) to Tamil Nadu (33). June's GSTR-1 is filed; in July one B2CS
 * invoice's place of supply is corrected 27 → 33, the Delhi one 07 → 33, and the export's shipping
 * bill is recorded. Until June's 3B is filed that is GSTR-1A of June; then July's GSTR-1 carries
 * `b2csa` (June's figures of each place of supply touched, as they now are, `omon` 062026) and
 * `expa` (the export with its shipping bill, `oinum`/`oidt`); once July is filed, August declares
 * nothing again. Field names: the GSTN offline tool (decision 0610).
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
const inv: Record<string, { id: string; number: string | null }> = {};

async function customer(email: string, extra: Record<string, unknown>) {
  const res = await acme.http.POST('/v1/customers', { body: { email, name: email.split('@')[0], ...extra } });
  expect(res.status, res.text).toBe(201);
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
  expect(res.status, res.text).toBe(201);
  inv[name] = res.body.data;
}

const gstr1 = async (period: string) => {
  const res = await acme.http.GET('/v1/gst/gstr1', { query: { entity_id: entityId, period } });
  expect(res.status, res.text).toBe(200);
  expect(validateGstr1(res.body.data)).toEqual([]);
  return res.body.data;
};
const correct = (name: string, body: Record<string, unknown>) => acme.http.POST('/v1/invoices/{id}/gst-details', { path: { id: inv[name]!.id }, body });
/** A correction the API refuses as input (400). */
const badCorrection = (name: string, body: Record<string, unknown>) => acme.api('POST', `/v1/invoices/${inv[name]!.id}/gst-details`, body);

beforeAll(async () => {
  t = await startTestKosh();
  t.clock.set('2026-06-10T04:30:00Z'); // 10 June 2026, 10:00 in India
  acme = await t.registerTenant({ state_code: '29', gstin: gstin('29', 'AAECK4321L') });
  entityId = (await acme.http.GET('/v1/entities')).body.data[0]!.id;
  const mh = await customer('mh@b2c.test', { billing_address: { state_code: '27' } });
  const dl = await customer('dl@b2c.test', { billing_address: { state_code: '07' } });
  const tn = await customer('tn@b2c.test', { billing_address: { state_code: '33' } });
  const ka = await customer('ka@b2c.test', { billing_address: { state_code: '29' } });
  const abroad = await customer('buyer@abroad.test', { billing_address: { city: 'Austin', country: 'US' } });
  await invoice('mhA', mh, 10_000); // ₹10,000 + IGST 18 % ₹1,800
  await invoice('mhB', mh, 20_000); // ₹20,000 + ₹3,600
  await invoice('dl', dl, 1_000); // ₹1,000 + ₹180
  await invoice('tnLarge', tn, 2_00_000); // ₹2,00,000 + ₹36,000 = ₹2,36,000 > ₹1,00,000: B2CL
  await invoice('kaIntra', ka, 5_000);
  await invoice('export', abroad, 30_000); // under LUT: no IGST
  t.clock.set('2026-07-05T04:30:00Z');
  const filed = await acme.http.POST('/v1/gst/returns/gstr1/{period}/filed', {
    path: { period: '2026-06' },
    body: { entity_id: entityId, arn: 'AA290626000001A' },
  });
  expect(filed.status, filed.text).toBe(200);
});
afterAll(() => t.close());

describe('corrections of B2C and export invoices', () => {
  it("June's GSTR-1 as filed: B2CS by place of supply, the export without a shipping bill", async () => {
    const june = await gstr1('062026');
    // INTER 27: ₹10,000 + ₹20,000 = ₹30,000, IGST ₹5,400; INTER 07: ₹1,000, ₹180.
    expect(june.b2cs).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ sply_ty: 'INTER', pos: '27', rt: 18, txval: 30_000, iamt: 5_400 }),
        expect.objectContaining({ sply_ty: 'INTER', pos: '07', rt: 18, txval: 1_000, iamt: 180 }),
      ]),
    );
    expect(june.exp[0]!.inv[0]).not.toHaveProperty('sbnum');
  });

  it('refuses a correction that would change the tax or the table (409 gst_correction_changes_supply)', async () => {
    const refused = async (name: string, body: Record<string, unknown>) => {
      const res = await correct(name, body);
      expect(res.status, res.text).toBe(409);
      expect(res.error!.reason).toBe('gst_correction_changes_supply');
    };
    await refused('kaIntra', { place_of_supply: '27' }); // intra-state: CGST/SGST would become IGST
    await refused('mhA', { place_of_supply: '29' }); // into the supplier's state: IGST would become CGST/SGST
    await refused('tnLarge', { place_of_supply: '27' }); // B2CL: b2cla keeps the original place of supply
    await refused('mhA', { shipping_bill: { port_code: 'INMAA1', number: '1234567', date: '2026-06-12' } }); // not an export
    const early = await badCorrection('export', { shipping_bill: { port_code: 'INMAA1', number: '1234567', date: '2026-06-09' } });
    expect(early.status, early.text).toBe(400); // dated before the 10 June invoice
    expect((await badCorrection('export', { shipping_bill: { port_code: 'INMAA1', number: '12', date: '2026-06-12' } })).status).toBe(400); // 3–7 digits
  });

  it('corrections in July: the invoices read corrected; GSTR-1A of June lists them; June GSTR-1 unchanged', async () => {
    const moved = await correct('mhA', { place_of_supply: '33' });
    expect(moved.status, moved.text).toBe(200);
    expect(moved.body.data).toMatchObject({ place_of_supply: '33', igst_amount: 1_800_00, total: 11_800_00 });
    expect((await correct('dl', { place_of_supply: '33' })).status).toBe(200);
    const sb = await correct('export', { shipping_bill: { port_code: 'inmaa1', number: '1234567', date: '2026-06-12' } });
    expect(sb.status, sb.text).toBe(200);
    expect(sb.body.data.shipping_bill).toEqual({ port_code: 'INMAA1', number: '1234567', date: '2026-06-12' });

    const a = (await acme.http.GET('/v1/gst/gstr1a', { query: { entity_id: entityId, period: '062026' } })).body.data;
    // 27: ₹20,000, ₹3,600 left; 07: nothing left (0); 33: ₹10,000 + ₹1,000 = ₹11,000, ₹1,800 + ₹180 = ₹1,980.
    expect(a.b2cs).toEqual(
      expect.arrayContaining([
        { sply_ty: 'INTER', pos: '27', typ: 'OE', rt: 18, txval: 20_000, iamt: 3_600, camt: 0, samt: 0, csamt: 0 },
        { sply_ty: 'INTER', pos: '07', typ: 'OE', rt: 18, txval: 0, iamt: 0, camt: 0, samt: 0, csamt: 0 },
        { sply_ty: 'INTER', pos: '33', typ: 'OE', rt: 18, txval: 11_000, iamt: 1_980, camt: 0, samt: 0, csamt: 0 },
      ]),
    );
    expect(a.b2cs).toHaveLength(3);
    expect(a.exp).toEqual([
      { exp_typ: 'WOPAY', inv: [expect.objectContaining({ inum: inv.export!.number, sbpcode: 'INMAA1', sbnum: '1234567', sbdt: '12-06-2026' })] },
    ]);
    expect(a.b2cl).toEqual([]); // the B2CL invoice did not change
    const june = await gstr1('062026');
    expect(june.b2cs.find((r: { pos: string }) => r.pos === '33')).toBeUndefined();
    const july = await gstr1('072026');
    expect(july.b2csa).toBeUndefined(); // GSTR-1A is open: nothing in July's amendment tables yet
    expect(july.expa).toBeUndefined();
  });

  it("after June's 3B is filed: July's GSTR-1 carries b2csa (omon 062026) and expa with the original number and date", async () => {
    expect((await acme.http.POST('/v1/gst/returns/gstr3b/{period}/filed', { path: { period: '2026-06' }, body: { entity_id: entityId } })).status).toBe(200);
    t.clock.set('2026-08-05T04:30:00Z');
    const july = await gstr1('072026');
    expect(july.b2csa).toEqual(
      expect.arrayContaining([
        { omon: '062026', sply_ty: 'INTER', pos: '27', typ: 'OE', itms: [{ rt: 18, txval: 20_000, iamt: 3_600, camt: 0, samt: 0, csamt: 0 }] },
        { omon: '062026', sply_ty: 'INTER', pos: '07', typ: 'OE', itms: [{ rt: 18, txval: 0, iamt: 0, camt: 0, samt: 0, csamt: 0 }] },
        { omon: '062026', sply_ty: 'INTER', pos: '33', typ: 'OE', itms: [{ rt: 18, txval: 11_000, iamt: 1_980, camt: 0, samt: 0, csamt: 0 }] },
      ]),
    );
    expect(july.b2csa).toHaveLength(3);
    // The export: ₹30,000 under LUT (rate 0), dated 10 June; its shipping bill of 12 June.
    expect(july.expa).toEqual([
      {
        exp_typ: 'WOPAY',
        inv: [
          {
            oinum: inv.export!.number,
            oidt: '10-06-2026',
            inum: inv.export!.number,
            idt: '10-06-2026',
            val: 30_000,
            sbpcode: 'INMAA1',
            sbnum: '1234567',
            sbdt: '12-06-2026',
            itms: [{ txval: 30_000, rt: 0, iamt: 0, csamt: 0 }],
          },
        ],
      },
    ]);
    for (const table of ['b2ba', 'b2cla', 'cdnra', 'cdnura'] as const) expect(july[table], table).toBeUndefined();
    expect(july.b2cs).toEqual([]); // July itself has no supplies
  });

  it('once July is filed with them, August declares nothing again', async () => {
    expect((await acme.http.POST('/v1/gst/returns/gstr1/{period}/filed', { path: { period: '2026-07' }, body: { entity_id: entityId } })).status).toBe(200);
    expect((await acme.http.POST('/v1/gst/returns/gstr3b/{period}/filed', { path: { period: '2026-07' }, body: { entity_id: entityId } })).status).toBe(200);
    t.clock.set('2026-09-05T04:30:00Z');
    const august = await gstr1('082026');
    for (const table of ['b2ba', 'b2cla', 'b2csa', 'expa', 'cdnra', 'cdnura'] as const) expect(august[table], table).toBeUndefined();
  });
});
