/**
 * Corrections of filed GSTR-1 data (decision 0365): a June B2B invoice whose buyer GSTIN is
 * corrected in July, after June's GSTR-1 was marked filed. Until June's GSTR-3B is filed the
 * correction is GSTR-1A of June; after it, the next unfiled GSTR-1 carries it in `b2ba` with the
 * original number and date; once declared in a filed return it is not declared again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKosh, type Tenant, type TestKosh } from '../support/harness.js';
import { gstinCheckCharacter } from '../../src/modules/tax/index.js';
import { validateGstr1 } from '../../src/modules/gst-returns/index.js';

const gstin = (state: string, pan: string) => {
  const first14 = `${state}${pan}1Z`;
  return first14 + gstinCheckCharacter(first14);
};
const WRONG = gstin('27', 'AABCB1234C');
const RIGHT = gstin('27', 'AABCR9876K');

let t: TestKosh;
let acme: Tenant;
let entityId: string;
let buyerId: string;
let june: { id: string; number: string | null };

beforeAll(async () => {
  t = await startTestKosh();
  t.clock.set('2026-06-10T04:30:00Z'); // 10 June 2026, 10:00 in India
  acme = await t.registerTenant({ state_code: '29', gstin: gstin('29', 'AAECK4321L') });
  entityId = (await acme.http.GET('/v1/entities')).body.data[0]!.id;
  await acme.http.PATCH('/v1/entities/{id}', {
    path: { id: entityId },
    body: {
      einvoicing: { enabled: true, provider: 'sandbox' },
      address: { line1: '1 Residency Road', city: 'Bengaluru', postal_code: '560025' },
    },
  });
  // Registered with the wrong GSTIN and no address: the e-invoice fails and waits for a correction.
  buyerId = (await acme.http.POST('/v1/customers', { body: { email: 'ap@buyer.test', name: 'Buyer Ltd', gstin: WRONG } })).body.data.id;
  const res = await acme.http.POST('/v1/invoices', {
    body: {
      customer_id: buyerId,
      currency: 'INR',
      lines: [{ description: 'Platform', quantity: 1, unit_amount: 10_000_00, hsn_code: '998314' }],
    },
  });
  june = res.body.data;
  await t.kosh.worker.drain();
  t.clock.set('2026-07-05T04:30:00Z');
  const filed = await acme.http.POST('/v1/gst/returns/gstr1/{period}/filed', {
    path: { period: '2026-06' },
    body: { entity_id: entityId, arn: 'AA290626000001A' },
  });
  expect(filed.status, filed.text).toBe(200);
});
afterAll(() => t.close());

const gstr1 = (period: string) => acme.http.GET('/v1/gst/gstr1', { query: { entity_id: entityId, period } });
const gstr1a = (period: string) => acme.http.GET('/v1/gst/gstr1a', { query: { entity_id: entityId, period } });

describe('GSTR-1A and amendments', () => {
  it('GSTR-1A before its GSTR-1 is filed → 409 gstr1_not_filed', async () => {
    const res = await gstr1a('072026');
    expect(res.status).toBe(409);
    expect(res.error!.reason).toBe('gstr1_not_filed');
  });

  it('June GSTR-1 filed with the wrong GSTIN; GSTR-1A is empty until something changes', async () => {
    const filed = (await gstr1('062026')).body.data;
    expect(filed.b2b.map((b: { ctin: string }) => b.ctin)).toEqual([WRONG]);
    const a = (await gstr1a('062026')).body.data;
    expect(a).toMatchObject({ fp: '062026', b2b: [], cdnr: [] });
  });

  it('the buyer GSTIN corrected in July: GSTR-1A of June lists the invoice under the right GSTIN; June GSTR-1 unchanged', async () => {
    await acme.http.PATCH('/v1/customers/{id}', {
      path: { id: buyerId },
      body: {
        gstin: RIGHT,
        billing_address: { line1: '12 MG Road', city: 'Pune', state_code: '27', postal_code: '411001', country: 'IN' },
      },
    });
    const retry = await acme.http.POST('/v1/invoices/{id}/einvoice/retry', { path: { id: june.id }, body: { refresh_buyer: true } });
    expect(retry.status, retry.text).toBe(202);
    const a = (await gstr1a('062026')).body.data;
    // ₹10,000 + IGST 18 % ₹1,800 = ₹11,800, dated 10 June.
    expect(a.b2b).toEqual([
      {
        ctin: RIGHT,
        inv: [
          expect.objectContaining({
            inum: june.number,
            idt: '10-06-2026',
            val: 11_800,
            itms: [{ num: 1, itm_det: expect.objectContaining({ txval: 10_000, iamt: 1_800 }) }],
          }),
        ],
      },
    ]);
    expect((await gstr1('062026')).body.data.b2b[0]!.ctin).toBe(WRONG);
    // While GSTR-1A is open, July's GSTR-1 carries no amendment.
    expect((await gstr1('072026')).body.data.b2ba).toBeUndefined();
  });

  it("after June's GSTR-3B is filed: GSTR-1A closed (409), July's GSTR-1 carries b2ba with the original number and date", async () => {
    expect((await acme.http.POST('/v1/gst/returns/gstr3b/{period}/filed', { path: { period: '2026-06' }, body: { entity_id: entityId } })).status).toBe(200);
    const closed = await gstr1a('062026');
    expect(closed.status).toBe(409);
    expect(closed.error!.reason).toBe('gstr1a_closed');
    t.clock.set('2026-08-05T04:30:00Z');
    const july = (await gstr1('072026')).body.data;
    expect(validateGstr1(july)).toEqual([]);
    expect(july.b2ba).toEqual([{ ctin: RIGHT, inv: [expect.objectContaining({ oinum: june.number, oidt: '10-06-2026', inum: june.number, val: 11_800 })] }]);
  });

  it('once July is filed with the amendment, August does not declare it again', async () => {
    expect((await acme.http.POST('/v1/gst/returns/gstr1/{period}/filed', { path: { period: '2026-07' }, body: { entity_id: entityId } })).status).toBe(200);
    expect((await acme.http.POST('/v1/gst/returns/gstr3b/{period}/filed', { path: { period: '2026-07' }, body: { entity_id: entityId } })).status).toBe(200);
    t.clock.set('2026-09-05T04:30:00Z');
    const august = (await gstr1('082026')).body.data;
    expect(august.b2ba).toBeUndefined();
    expect(validateGstr1(august)).toEqual([]);
  });
});
