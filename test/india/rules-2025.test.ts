/**
 * India's 2025–26 rules (DESIGN §25): GST rates by date, invoice series under Rule 46(b), and the
 * IRP's 30-day reporting limit. Figures worked by hand in the comments; sources in
 * docs/decisions/0360–0364.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKosh, type Tenant, type TestKosh } from '../support/harness.js';
import { gstinCheckCharacter, rateDate, timeOfSupplyForRate } from '../../src/modules/tax/index.js';
import { computeIrn } from '../../src/modules/einvoicing/irn.js';

const gstin = (state: string, pan: string) => {
  const first14 = `${state}${pan}1Z`;
  return first14 + gstinCheckCharacter(first14);
};
const SUPPLIER = gstin('29', 'AAECK4321L');
const BUYER = gstin('27', 'AABCB1234C');

let t: TestKosh;
let acme: Tenant;
let entityId: string;
let buyerId: string;
let noAddressId: string;

async function invoice(customerId: string, line: Record<string, unknown> = {}) {
  const res = await acme.http.POST('/v1/invoices', {
    body: {
      customer_id: customerId,
      currency: 'INR',
      lines: [{ description: 'Split air conditioner', quantity: 1, unit_amount: 10_000_00, ...line }],
    },
  });
  expect(res.status).toBe(201);
  return res.body.data as { id: string; number: string; total: number; igst_amount: number; lines: { tax_rate_bp: number }[] };
}

beforeAll(async () => {
  t = await startTestKosh();
  t.clock.set('2025-09-21T17:30:00Z'); // 23:00 on 21 September 2025 in India: the old rates
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
  // A registered buyer without an address: its e-invoice fails the IRP schema (and stays unreported).
  noAddressId = (await acme.http.POST('/v1/customers', { body: { email: 'x@noaddr.test', name: 'No Address Ltd', gstin: gstin('33', 'AACCN9876D') } })).body
    .data.id;
});
afterAll(async () => {
  await t.close();
});

describe('GST rates by date (decision 0360)', () => {
  let before: { id: string; number: string; total: number; igst_amount: number };

  it('an air conditioner (HSN 8415) is taxed at 28 % until 21 September 2025 and 18 % from 22 September (Notification 9/2025-CT(Rate))', async () => {
    // ₹10,000 inter-state (29 → 27): IGST 28 % = ₹2,800 → total ₹12,800.
    before = await invoice(buyerId, { hsn_code: '8415' });
    expect(before.igst_amount).toBe(2_800_00);
    expect(before.total).toBe(12_800_00);
    t.clock.set('2025-09-21T18:30:00Z'); // 00:00 on 22 September 2025 in India
    // The same supply a minute later: IGST 18 % = ₹1,800 → total ₹11,800.
    const after = await invoice(buyerId, { hsn_code: '8415' });
    expect(after.igst_amount).toBe(1_800_00);
    expect(after.total).toBe(11_800_00);
    // Packaged water (2201) went the other way: 18 % → 5 %. ₹10,000 → IGST ₹500.
    expect((await invoice(buyerId, { hsn_code: '2201' })).igst_amount).toBe(500_00);
  });

  it("a credit note after the change keeps its invoice's 28 % (the rate of the original supply)", async () => {
    // A full credit of the ₹12,800 invoice reverses exactly its ₹2,800 of IGST, not 18 % of it.
    const note = await acme.http.POST('/v1/credit-notes', { body: { customer_id: buyerId, invoice_id: before.id, amount: 12_800_00, reason: 'Returned' } });
    expect(note.status).toBe(201);
    expect(note.body.data).toMatchObject({ subtotal: 10_000_00, igst_amount: 2_800_00 });
  });

  it('a draft created before the change and finalized after it takes the rate of its finalization date', async () => {
    t.clock.set('2025-09-21T12:00:00Z'); // a test clock back on 21 September (a backdated run)
    const draft = await acme.http.POST('/v1/invoices', {
      body: {
        customer_id: buyerId,
        currency: 'INR',
        auto_finalize: false,
        lines: [{ description: 'AC', quantity: 1, unit_amount: 10_000_00, hsn_code: '8415' }],
      },
    });
    expect(draft.status).toBe(201);
    if (draft.body.data.status !== 'draft') return; // this API finalizes at once: covered by the first test
    t.clock.set('2025-09-22T06:30:00Z');
    const fin = await acme.http.POST('/v1/invoices/{id}/finalize', { path: { id: draft.body.data.id } });
    expect(fin.body.data.igst_amount).toBe(1_800_00);
  });

  it('CGST s.14: the six cases of a change of rate, each decided by hand', () => {
    const change = new Date('2025-09-21T18:30:00Z');
    const beforeChange = new Date('2025-09-10T06:00:00Z');
    const before2 = new Date('2025-09-15T06:00:00Z');
    const afterChange = new Date('2025-09-25T06:00:00Z');
    const after2 = new Date('2025-09-30T06:00:00Z');
    // (a) supplied before the change:
    // (i) invoice and payment after → the earlier of them (25 Sept: new rate)
    expect(rateDate({ supply: beforeChange, invoice: after2, payment: afterChange }, change)).toEqual(afterChange);
    // (ii) invoice before, payment after → the invoice date (old rate)
    expect(rateDate({ supply: beforeChange, invoice: before2, payment: afterChange }, change)).toEqual(before2);
    // (iii) payment before, invoice after → the payment date (old rate)
    expect(rateDate({ supply: beforeChange, invoice: afterChange, payment: before2 }, change)).toEqual(before2);
    // (b) supplied after the change:
    // (i) invoice before, payment after → the payment date (new rate)
    expect(rateDate({ supply: afterChange, invoice: before2, payment: after2 }, change)).toEqual(after2);
    // (ii) invoice and payment before → the earlier (10 Sept: old rate)
    expect(rateDate({ supply: afterChange, invoice: before2, payment: beforeChange }, change)).toEqual(beforeChange);
    // (iii) invoice after, payment before → the invoice date (new rate)
    expect(rateDate({ supply: afterChange, invoice: after2, payment: before2 }, change)).toEqual(after2);
    // A code without a change in between: the invoice date (s.12/s.13 as usual).
    expect(timeOfSupplyForRate('998314', { supply: beforeChange, invoice: afterChange })).toEqual(afterChange);
    // 8415 supplied on 10 Sept, invoiced 25 Sept, no advance → (a)(i): 25 Sept, 18 %.
    expect(timeOfSupplyForRate('8415', { supply: beforeChange, invoice: afterChange })).toEqual(afterChange);
  });
});

describe('invoice series (Rule 46(b); decision 0364)', () => {
  it('accepts a 10-character prefix such as INV/25-26/ (16 characters with the sequence)', async () => {
    const other = await acme.http.POST('/v1/entities', { body: { name: 'Branch', invoice_prefix: 'INV/25-26/', state_code: '29' } });
    expect(other.status).toBe(201);
    expect(other.body.data.invoice_prefix).toBe('INV/25-26/');
  });

  it('refuses lowercase (numbers are case-insensitive), a prefix leaving under 2 digits, and a yearly series without {FY}', async () => {
    for (const body of [
      { invoice_prefix: 'inv/' },
      { invoice_prefix: 'ABCDEFGHIJKLMNO' },
      { invoice_prefix: 'KOSH-', number_series_reset: 'financial_year' },
    ]) {
      const res = await acme.api('PATCH', `/v1/entities/${entityId}`, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.code).toBe('validation_failed');
    }
  });

  it('restarts every financial year at 1, gapless, with the year in the number', async () => {
    t.clock.set('2026-03-31T12:00:00Z'); // 17:30 on 31 March 2026 in India: FY 2025-26
    const set = await acme.http.PATCH('/v1/entities/{id}', {
      path: { id: entityId },
      body: { invoice_prefix: 'INV/{FY}/', number_series_reset: 'financial_year' },
    });
    expect(set.status).toBe(200);
    expect(set.body.data.number_series_reset).toBe('financial_year');
    const a = await invoice(buyerId);
    const b = await invoice(buyerId);
    // 'INV/25-26/' is 10 characters, the sequence 6: 16, Rule 46(b)'s limit.
    expect([a.number, b.number]).toEqual(['INV/25-26/000001', 'INV/25-26/000002']);
    t.clock.set('2026-03-31T18:30:00Z'); // 00:00 on 1 April 2026 in India: FY 2026-27
    const c = await invoice(buyerId);
    const d = await invoice(buyerId);
    expect([c.number, d.number]).toEqual(['INV/26-27/000001', 'INV/26-27/000002']);
    // Credit notes restart too; their fixed prefix takes the year after it.
    const note = await acme.http.POST('/v1/credit-notes', { body: { customer_id: buyerId, invoice_id: c.id, amount: 1_00, reason: 'Rounding' } });
    expect(note.body.data.number).toBe('CN-26-27/000001');
  });

  it('the IRN is computed on the number in capitals, as the IRP does from 1 June 2025', () => {
    expect(computeIrn(SUPPLIER, '2026-27', 'INV', 'inv/26-27/000001')).toBe(computeIrn(SUPPLIER, '2026-27', 'INV', 'INV/26-27/000001'));
  });
});

describe("the IRP's 30-day limit (decision 0363)", () => {
  let failing: { id: string };
  let reported: { id: string };

  it('answers irn_report_by: the 30th day from the document date for an entity of ₹10 crore or more, none below', async () => {
    t.clock.set('2026-04-01T04:30:00Z'); // 10:00 on 1 April 2026 in India
    const enabled = await acme.http.PATCH('/v1/entities/{id}', {
      path: { id: entityId },
      body: {
        einvoicing: { enabled: true, provider: 'sandbox' },
        address: { line1: '1 Residency Road', city: 'Bengaluru', postal_code: '560025' },
      },
    });
    expect(enabled.status).toBe(200);
    const small = await invoice(buyerId);
    expect((await acme.http.GET('/v1/invoices/{id}/einvoice', { path: { id: small.id } })).body.data.irn_report_by).toBeNull();
    expect((await acme.http.PATCH('/v1/entities/{id}', { path: { id: entityId }, body: { aato_band: '10_crore_or_more' } })).body.data.aato_band).toBe(
      '10_crore_or_more',
    );
    failing = await invoice(noAddressId);
    reported = await invoice(buyerId);
    // Dated 1 April: reportable 1–30 April (GSTN advisory of 5 November 2024: "by 30 April").
    expect((await acme.http.GET('/v1/invoices/{id}/einvoice', { path: { id: reported.id } })).body.data.irn_report_by).toBe('2026-04-30');
    await t.kosh.worker.drain();
    expect((await acme.http.GET('/v1/invoices/{id}/einvoice', { path: { id: failing.id } })).body.data.status).toBe('failed');
    const rep = (await acme.http.GET('/v1/invoices/{id}/einvoice', { path: { id: reported.id } })).body.data;
    expect(rep.status, JSON.stringify(rep.errors)).toBe('generated');
  });

  it('alerts 5 days and 1 day before the last day, once each, for the unreported document only', async () => {
    t.clock.set('2026-04-24T18:30:00Z'); // 00:00 on 25 April: 5 days before 30 April
    await t.kosh.worker.drain();
    let events = (await acme.http.GET('/v1/events', { query: { type: 'einvoice.report_due' } })).body.data;
    expect(events.map((e) => [e.data.object.document_id, e.data.object.days_left])).toEqual([[failing.id, 5]]);
    t.clock.set('2026-04-26T18:30:00Z'); // 27 April: nothing new
    await t.kosh.worker.drain();
    expect((await acme.http.GET('/v1/events', { query: { type: 'einvoice.report_due' } })).body.data).toHaveLength(1);
    t.clock.set('2026-04-28T18:30:00Z'); // 00:00 on 29 April: 1 day before
    await t.kosh.worker.drain();
    events = (await acme.http.GET('/v1/events', { query: { type: 'einvoice.report_due' } })).body.data;
    expect(events.map((e) => e.data.object.days_left).sort()).toEqual([1, 5]);
  });

  it('lists the unreported documents near their limit for the dashboard: GET /v1/einvoices/report-due', async () => {
    // 00:00 on 29 April in India: the failed document's last day (30 April) is 1 day away; the reported one is not listed.
    const due = await acme.http.GET('/v1/einvoices/report-due');
    expect(due.status, due.text).toBe(200);
    const numberOfFailing = (await acme.http.GET('/v1/invoices/{id}', { path: { id: failing.id } })).body.data.number;
    expect(
      due.body.data.map((d) => [d.einvoice.document_id, d.einvoice.status, d.einvoice.irn_report_by, d.document_number, d.buyer_name, d.days_left]),
    ).toEqual([[failing.id, 'failed', '2026-04-30', numberOfFailing, 'No Address Ltd', 1]]);
    // A window of 1 day still has it; the limit of another tenant is not this one's; 0 or 31 days is a 400.
    expect((await acme.http.GET('/v1/einvoices/report-due', { query: { days: 1 } })).body.data).toHaveLength(1);
    const stranger = await t.registerTenant();
    expect((await stranger.http.GET('/v1/einvoices/report-due', { query: { days: 30 } })).body.data).toEqual([]);
    for (const days of ['0', '31', 'week']) {
      const bad = await acme.api('GET', `/v1/einvoices/report-due?days=${days}`);
      expect(bad.status, bad.text).toBe(400);
      expect(bad.body.error.details[0].field).toContain('days');
    }
  });

  it('refuses a resubmission after the limit with a 409, never sending it', async () => {
    t.clock.set('2026-04-30T18:30:00Z'); // 00:00 on 1 May: the 31st day
    const res = await acme.http.POST('/v1/invoices/{id}/einvoice/retry', { path: { id: failing.id }, body: {} });
    expect(res.status).toBe(409);
    expect(res.error!.reason).toBe('irn_reporting_limit_passed');
    expect(res.error!.message).toContain('2026-04-30');
  });

  it('a document still queued when its limit passes is failed by Kosh, not sent', async () => {
    const late = await invoice(buyerId); // dated 1 May: last day 30 May
    t.clock.set('2026-05-30T18:30:00Z'); // 00:00 on 31 May
    await t.kosh.worker.drain();
    const e = (await acme.http.GET('/v1/invoices/{id}/einvoice', { path: { id: late.id } })).body.data;
    expect(e).toMatchObject({ status: 'failed', irn: null, irn_report_by: '2026-05-30' });
    expect(e.errors[0]!.code).toBe('irp.reporting_limit');
  });
});
