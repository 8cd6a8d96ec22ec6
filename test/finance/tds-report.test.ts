import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveTdsSection } from '../../src/modules/invoices/index.js';
import { startTestKosh, type Tenant, type TestKosh } from '../support/harness.js';
import { createCustomer, createInvoice } from '../support/billing.js';

/*
 * TDS under the Income-tax Act 2025 (docs/decisions/0510).
 * - The 2025 Act is in force from 1 April 2026 (CBDT's notice on the draft Income-tax Rules 2026); s.393(1)'s Table
 *   (https://indiankanoon.org/doc/103383880/ — sl. 6(iii): fees for professional / technical
 *   services) replaces ss.194C–194J of the 1961 Act.
 * - Payment codes 1026 (technical services, 2 %) and 1027 (professional services, 10 %): the notes
 *   to the draft Forms 138/140 as read by secondary sources (no primary CBDT table found; see the
 *   decision): https://taxroutine.com/income-tax-act-2025/new-tds-and-tcs-payment-codes,
 *   https://goforfiling.com/tds-code-1027/.
 * - Form 16A for deductions under the 1961 Act: Income-tax Rules 1962 rule 31(1)(b)
 *   (http://law.incometaxindia.gov.in/DitTaxmann/IncomeTaxActs/2001ITAct/Rules2001/rules031.htm);
 *   Form 131 under the 2025 Act (as the issue and DESIGN §25 name it; not verified against the
 *   notified Income-tax Rules 2026, see the decision).
 * - A TDS quarter is the financial year's: Q1 April–June … Q4 January–March.
 */

let t: TestKosh;

beforeAll(async () => {
  t = await startTestKosh();
});
afterAll(() => t?.close());

async function entityOf(tenant: Tenant): Promise<string> {
  const res = await tenant.http.GET('/v1/entities');
  expect(res.status, res.text).toBe(200);
  return res.body.data[0]!.id;
}

describe('TDS sections: old codes before 1 April 2026, s.393 payment codes from then', () => {
  it('maps old codes, refuses each Act’s codes on the other side of 1 April 2026 (pure)', () => {
    expect(resolveTdsSection('194-J(b)', '2026-03-31')).toEqual({
      section: '194J(b)',
      payment_code: '1027',
      act: 'income_tax_act_1961',
      certificate_form: 'Form 16A',
    });
    expect(resolveTdsSection('194J(a)', '2025-10-01').payment_code).toBe('1026');
    expect(resolveTdsSection('194-I(b)', '2025-10-01').payment_code).toBe('1009');
    // 194C and a bare 194J have no corroborated single new code: accepted, mapped to null.
    expect(resolveTdsSection('194J', '2026-01-15').payment_code).toBeNull();
    expect(resolveTdsSection('1026', '2026-04-01')).toEqual({
      section: '1026',
      payment_code: '1026',
      act: 'income_tax_act_2025',
      certificate_form: 'Form 131',
    });
    expect(() => resolveTdsSection('194J(b)', '2026-04-01')).toThrow(/its payment code is 1027/);
    expect(() => resolveTdsSection('1027', '2026-03-31')).toThrow(/in force from 1 April 2026/);
    expect(() => resolveTdsSection('1093', '2026-05-01')).toThrow(/1001–1092/);
    // 194IA is s.194-IA (immovable property), not 194-I(a): not a section Kosh takes.
    expect(() => resolveTdsSection('194IA', '2025-05-01')).toThrow(/not a section Kosh knows/);
  });
});

describe('GET /v1/tds/report', () => {
  it('lists each customer’s deductions in a TDS quarter, certified (Form 16A / Form 131) and pending', async () => {
    const tenant = await t.registerTenant();
    const entityId = await entityOf(tenant);
    const acme = await createCustomer(tenant);

    // Invoice A, issued 10 March 2026 (IST): 1961 Act. Taxable value 1,00,000.00 → TDS at most 20 % = 20,000.00.
    t.clock.set('2026-03-10T06:30:00Z');
    const a = await createInvoice(tenant, acme, [10_000_000]);
    // Invoice C, issued 20 March 2026, taxable 50,000.00.
    t.clock.set('2026-03-20T06:30:00Z');
    const c = await createInvoice(tenant, acme, [5_000_000]);
    // C: 20,000.00 paid at 19:00 UTC on 31 March = 00:30 IST on 1 April 2026 with 1,000.00 withheld:
    // India's day is 1 April, so it is in Q1 of 2026-27 and its certificate will be a Form 131.
    t.clock.set('2026-03-31T19:00:00Z');
    const payC = await tenant.http.POST('/v1/payments/offline', {
      body: {
        customer_id: acme,
        invoice_id: c.id,
        payment_type: 'cheque',
        amount: 2_000_000,
        tds_amount: 100_000,
      },
    });
    expect(payC.status, payC.text).toBe(201);
    // Invoice B, issued 5 May 2026: 2025 Act. Taxable 2,00,000.00 → TDS at most 40,000.00.
    t.clock.set('2026-05-05T06:30:00Z');
    const b = await createInvoice(tenant, acme, [20_000_000]);

    // A's certificate: 10,000.00 under 194J(b) (10 % of 1,00,000.00), deducted on A's issue date (the default).
    t.clock.set('2026-06-01T06:30:00Z');
    const certA = await tenant.http.POST('/v1/invoices/{id}/tds', {
      path: { id: a.id },
      body: { tds_amount: 1_000_000, section: '194J(b)', certificate_number: 'FORM16A-1' },
    });
    expect(certA.status, certA.text).toBe(200);
    expect(certA.body.data.amount_tds).toBe(1_000_000);

    // On B (May 2026) an old code is refused, naming the new one; a new code before 1 April 2026 too.
    const oldOnB = await tenant.api('POST', `/v1/invoices/${b.id}/tds`, { tds_amount: 400_000, section: '194J(a)' });
    expect(oldOnB.status, oldOnB.text).toBe(400);
    expect(oldOnB.text).toContain('1026');
    const newOnA = await tenant.api('POST', `/v1/invoices/${a.id}/tds`, { tds_amount: 100_000, section: '1027' });
    expect(newOnA.status, newOnA.text).toBe(400);
    const unknown = await tenant.api('POST', `/v1/invoices/${a.id}/tds`, { tds_amount: 100_000, section: '194Z' });
    expect(unknown.status, unknown.text).toBe(400);
    // A deduction cannot be dated after today (1 June 2026 here).
    const future = await tenant.api('POST', `/v1/invoices/${b.id}/tds`, { tds_amount: 100_000, section: '1027', deducted_on: '2026-06-02' });
    expect(future.status, future.text).toBe(400);
    // Refusals settle nothing: A still carries only its 10,000.00.
    expect((await tenant.http.GET('/v1/invoices/{id}', { path: { id: a.id } })).body.data.amount_tds).toBe(1_000_000);

    // B's certificate: 20,000.00 under 1027 (10 % of 2,00,000.00), deducted 20 May 2026 → Form 131.
    const certB = await tenant.http.POST('/v1/invoices/{id}/tds', {
      path: { id: b.id },
      body: {
        tds_amount: 2_000_000,
        section: '1027',
        certificate_number: 'F131-77',
        deducted_on: '2026-05-20',
      },
    });
    expect(certB.status, certB.text).toBe(200);

    // B: 1,00,000.00 paid on 10 June 2026 with 2,000.00 withheld (no certificate yet → pending).
    t.clock.set('2026-06-10T06:30:00Z');
    const payB = await tenant.http.POST('/v1/payments/offline', {
      body: {
        customer_id: acme,
        invoice_id: b.id,
        payment_type: 'bank_transfer',
        amount: 10_000_000,
        tds_amount: 200_000,
      },
    });
    expect(payB.status, payB.text).toBe(201);
    t.clock.set('2026-07-01T06:30:00Z');

    // Q1 2026-27 (1 April – 30 June 2026): C's withheld 1,000.00 (1 April), B's certificate 20,000.00 (20 May),
    // B's withheld 2,000.00 (10 June). Paid 20,000.00 + 1,00,000.00 = 1,20,000.00; TDS 23,000.00 of which
    // 20,000.00 certified and 3,000.00 pending.
    const q1 = await tenant.http.GET('/v1/tds/report', { query: { entity_id: entityId, quarter: '2026-27-Q1' } });
    expect(q1.status, q1.text).toBe(200);
    expect(q1.body.data.from).toBe('2026-04-01');
    expect(q1.body.data.to).toBe('2026-06-30');
    expect(q1.body.data.totals).toEqual({ amount_paid: 12_000_000, tds_deducted: 2_300_000, tds_certified: 2_000_000, tds_pending: 300_000 });
    expect(q1.body.data.customers).toHaveLength(1);
    const rows = q1.body.data.customers[0]!.rows;
    expect(rows.map((r: Record<string, unknown>) => [r.invoice_id, r.deducted_on, r.status, r.tds_amount, r.amount_paid, r.certificate_form])).toEqual([
      [c.id, '2026-04-01', 'pending', 100_000, 2_000_000, 'Form 131'],
      [b.id, '2026-05-20', 'certified', 2_000_000, 0, 'Form 131'],
      [b.id, '2026-06-10', 'pending', 200_000, 10_000_000, 'Form 131'],
    ]);
    expect(rows[1]).toMatchObject({ section: '1027', payment_code: '1027', certificate_number: 'F131-77', invoice_number: b.number, invoice_total: b.total });
    expect(rows[2]!.payment_id).toBe(payB.body.data.id);

    // Q4 2025-26 (January – March 2026): A's certificate alone, Form 16A, 194J(b) mapped to 1027.
    const q4 = await tenant.http.GET('/v1/tds/report', { query: { entity_id: entityId, quarter: '2025-26-Q4' } });
    expect(q4.status, q4.text).toBe(200);
    expect(q4.body.data.totals).toEqual({ amount_paid: 0, tds_deducted: 1_000_000, tds_certified: 1_000_000, tds_pending: 0 });
    expect(q4.body.data.customers[0]!.rows).toEqual([
      expect.objectContaining({
        invoice_id: a.id,
        invoice_date: '2026-03-10',
        deducted_on: '2026-03-10',
        section: '194J(b)',
        payment_code: '1027',
        certificate_form: 'Form 16A',
        certificate_number: 'FORM16A-1',
      }),
    ]);

    // CSV: a header and one line per deduction.
    const csv = await tenant.http.GET('/v1/tds/report', { query: { entity_id: entityId, quarter: '2026-27-Q1', format: 'csv' } });
    expect(csv.status, csv.text).toBe(200);
    expect(csv.headers['content-type']).toContain('text/csv');
    const lines = csv.text.trim().split('\n');
    expect(lines[0]).toBe(
      'customer_id,customer_name,customer_gstin,invoice_number,invoice_date,currency,invoice_total,deducted_on,amount_paid,tds_amount,status,section,payment_code,certificate_form,certificate_number',
    );
    expect(lines).toHaveLength(4);
    expect(lines[2]).toContain(',2026-05-20,0,2000000,certified,1027,1027,Form 131,F131-77');

    // Another customer's filter leaves nothing; a wrong year pair is a 400; another tenant's entity a 404.
    const other = await createCustomer(tenant);
    const none = await tenant.http.GET('/v1/tds/report', { query: { entity_id: entityId, quarter: '2026-27-Q1', customer_id: other } });
    expect(none.body.data.customers).toEqual([]);
    expect(none.body.data.totals.tds_deducted).toBe(0);
    expect((await tenant.api('GET', `/v1/tds/report?entity_id=${entityId}&quarter=2026-28-Q1`)).status).toBe(400);
    const stranger = await t.registerTenant();
    expect((await stranger.http.GET('/v1/tds/report', { query: { entity_id: entityId, quarter: '2026-27-Q1' } })).status).toBe(404);
  });
});

describe('POST /v1/payments/{id}/tds-certificate (decision 0770)', () => {
  it('records the certificate for TDS withheld with a payment: certified in the report, its quarter the day of deduction, no money moved', async () => {
    const tenant = await t.registerTenant();
    const entityId = await entityOf(tenant);
    const acme = await createCustomer(tenant);

    // Invoice M issued 25 March 2026, taxable 1,00,000.00; paid 5 April 2026: 98,000.00 with 2,000.00 withheld.
    // The customer booked (credited) it in March, so it deducted on 28 March: 1961 Act, Form 16A, Q4 2025-26.
    t.clock.set('2026-03-25T06:30:00Z');
    const m = await createInvoice(tenant, acme, [10_000_000]);
    t.clock.set('2026-04-05T06:30:00Z');
    const payM = await tenant.http.POST('/v1/payments/offline', {
      body: {
        customer_id: acme,
        invoice_id: m.id,
        payment_type: 'bank_transfer',
        amount: 9_800_000,
        tds_amount: 200_000,
      },
    });
    expect(payM.status, payM.text).toBe(201);
    expect(payM.body.data.tds_certificate).toBeNull();
    // Invoice J issued 5 May 2026, taxable 50,000.00; paid 10 June: 49,000.00 with 1,000.00 withheld (the payment's day).
    t.clock.set('2026-05-05T06:30:00Z');
    const j = await createInvoice(tenant, acme, [5_000_000]);
    t.clock.set('2026-06-10T06:30:00Z');
    const payJ = await tenant.http.POST('/v1/payments/offline', {
      body: {
        customer_id: acme,
        invoice_id: j.id,
        payment_type: 'cheque',
        amount: 4_900_000,
        tds_amount: 100_000,
      },
    });
    expect(payJ.status, payJ.text).toBe(201);
    const noTds = await tenant.http.POST('/v1/payments/offline', { body: { customer_id: acme, payment_type: 'cash', amount: 1_000 } });
    expect(noTds.status, noTds.text).toBe(201);

    t.clock.set('2026-07-02T06:30:00Z');
    const before = await tenant.http.GET('/v1/tds/report', { query: { entity_id: entityId, quarter: '2026-27-Q1' } });
    expect(before.body.data.totals).toEqual({ amount_paid: 14_700_000, tds_deducted: 300_000, tds_certified: 0, tds_pending: 300_000 });
    const entriesBefore = (await tenant.http.GET('/v1/invoices/{id}/journal-entries', { path: { id: m.id } })).body.data.length;

    // Refused, and nothing recorded: a day after the payment's; a 2025 Act code on a March deduction; no TDS; another tenant.
    const late = await tenant.api('POST', `/v1/payments/${payJ.body.data.id}/tds-certificate`, { certificate_number: 'F131-1', deducted_on: '2026-06-11' });
    expect(late.status, late.text).toBe(400);
    expect(late.body.error.message).toContain('2026-06-10');
    const newCodeInMarch = await tenant.api('POST', `/v1/payments/${payM.body.data.id}/tds-certificate`, {
      certificate_number: 'X',
      section: '1027',
      deducted_on: '2026-03-28',
    });
    expect(newCodeInMarch.status, newCodeInMarch.text).toBe(400);
    const nothing = await tenant.http.POST('/v1/payments/{id}/tds-certificate', { path: { id: noTds.body.data.id }, body: { certificate_number: 'X' } });
    expect(nothing.status, nothing.text).toBe(409);
    expect(nothing.error!.reason).toBe('payment_has_no_tds');
    const stranger = await t.registerTenant();
    expect((await stranger.http.POST('/v1/payments/{id}/tds-certificate', { path: { id: payJ.body.data.id }, body: { certificate_number: 'X' } })).status).toBe(
      404,
    );

    // M: 194J(b) on 28 March → payment code 1027, Form 16A. J: 1027 on its payment's day → Form 131.
    const certM = await tenant.http.POST('/v1/payments/{id}/tds-certificate', {
      path: { id: payM.body.data.id },
      body: {
        certificate_number: 'F16A-9',
        section: '194J(b)',
        deducted_on: '2026-03-28',
      },
    });
    expect(certM.status, certM.text).toBe(200);
    expect(certM.body.data.tds_certificate).toMatchObject({
      certificate_number: 'F16A-9',
      section: '194J(b)',
      payment_code: '1027',
      certificate_form: 'Form 16A',
      deducted_on: '2026-03-28',
    });
    const certJ = await tenant.http.POST('/v1/payments/{id}/tds-certificate', {
      path: { id: payJ.body.data.id },
      body: { certificate_number: 'F131-2', section: '1027' },
    });
    expect(certJ.status, certJ.text).toBe(200);
    expect(certJ.body.data.tds_certificate).toMatchObject({ section: '1027', payment_code: '1027', certificate_form: 'Form 131', deducted_on: '2026-06-10' });
    expect((await tenant.http.GET('/v1/payments/{id}', { path: { id: payJ.body.data.id } })).body.data.tds_certificate!.certificate_number).toBe('F131-2');
    const again = await tenant.http.POST('/v1/payments/{id}/tds-certificate', { path: { id: payJ.body.data.id }, body: { certificate_number: 'F131-3' } });
    expect(again.status, again.text).toBe(409);
    expect(again.error!.reason).toBe('tds_already_certified');

    // Q1 2026-27 now holds J alone, certified (M moved to Q4 2025-26 with its day of deduction).
    const q1 = await tenant.http.GET('/v1/tds/report', { query: { entity_id: entityId, quarter: '2026-27-Q1' } });
    expect(q1.body.data.totals).toEqual({ amount_paid: 4_900_000, tds_deducted: 100_000, tds_certified: 100_000, tds_pending: 0 });
    expect(q1.body.data.customers[0]!.rows).toEqual([
      expect.objectContaining({
        invoice_id: j.id,
        deducted_on: '2026-06-10',
        status: 'certified',
        certificate_number: 'F131-2',
        payment_id: payJ.body.data.id,
      }),
    ]);
    const q4 = await tenant.http.GET('/v1/tds/report', { query: { entity_id: entityId, quarter: '2025-26-Q4' } });
    expect(q4.body.data.totals).toEqual({ amount_paid: 9_800_000, tds_deducted: 200_000, tds_certified: 200_000, tds_pending: 0 });
    expect(q4.body.data.customers[0]!.rows[0]).toMatchObject({ invoice_id: m.id, deducted_on: '2026-03-28', section: '194J(b)', certificate_form: 'Form 16A' });

    // No money moved; the event says what happened.
    expect((await tenant.http.GET('/v1/invoices/{id}/journal-entries', { path: { id: m.id } })).body.data.length).toBe(entriesBefore);
    const events = await tenant.http.GET('/v1/events', { query: { type: 'payment.tds_certified' } });
    expect(events.body.data.map((e) => e.data.object.id).sort()).toEqual([payM.body.data.id, payJ.body.data.id].sort());
  });
});
