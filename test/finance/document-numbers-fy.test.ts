import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gstinCheckCharacter } from '../../src/modules/tax/index.js';
import { startTestKosh, type Tenant, type TestKosh } from '../support/harness.js';

/**
 * A document made while its month is closed is the first open month's document (DESIGN §18), and
 * its number follows that date's financial year: with March 2027 closed on 20 March, an invoice
 * finalized that day is dated 1 April 2027 00:00 IST — financial year 2027-28 — and numbered
 * INV/27-28/…, not in the 2026-27 series of the day it was made; its credit note too. The voucher
 * exported to Tally (and pushed to the accounting connections, which send the document's number)
 * carries that number on that date.
 */
const gstin = (base: string) => base + gstinCheckCharacter(base);
const APRIL_FIRST_IST = '2027-03-31T18:30:00.000Z';

let t: TestKosh;
let acme: Tenant;
let entityId: string;
let customer: string;

beforeAll(async () => {
  t = await startTestKosh();
  acme = await t.registerTenant({ gstin: gstin('29AAACA1234A1Z'), state_code: '29' });
  entityId = (await acme.http.GET('/v1/entities')).body.data[0]!.id;
  const set = await acme.http.PATCH('/v1/entities/{id}', {
    path: { id: entityId },
    body: { invoice_prefix: 'INV/{FY}/', number_series_reset: 'financial_year' },
  });
  expect(set.status, set.text).toBe(200);
  customer = (await acme.http.POST('/v1/customers', { body: { email: 'ka@example.in', gstin: gstin('29BBBBB2222B1Z') } })).body.data.id;
});
afterAll(() => t.close());

describe('document numbers of a closed March', () => {
  it('numbers an invoice and a credit note dated into April in the new financial year', async () => {
    t.clock.set('2027-03-20T06:00:00Z');
    // One invoice in March 2027 first: financial year 2026-27.
    const march = await acme.http.POST('/v1/invoices', {
      body: {
        customer_id: customer,
        currency: 'INR',
        lines: [{ description: 'March', unit_amount: 10_000 }],
        auto_finalize: true,
      },
    });
    expect(march.status, march.text).toBe(201);
    expect(march.body.data.number).toBe('INV/26-27/000001');

    const closed = await acme.http.POST('/v1/entities/{id}/periods/{period}/close', { path: { id: entityId, period: '2027-03' } });
    expect(closed.status, closed.text).toBe(200);
    const invoice = await acme.http.POST('/v1/invoices', {
      body: {
        customer_id: customer,
        currency: 'INR',
        lines: [{ description: 'Plan', unit_amount: 10_000 }],
        auto_finalize: true,
      },
    });
    expect(invoice.status, invoice.text).toBe(201);
    expect(invoice.body.data.issued_at).toBe(APRIL_FIRST_IST);
    expect(invoice.body.data.number, 'the first invoice of 2027-28').toBe('INV/27-28/000001');
    const note = await acme.http.POST('/v1/credit-notes', {
      body: { customer_id: customer, invoice_id: invoice.body.data.id, amount: 1_180, reason: 'goodwill' },
    });
    expect(note.status, note.text).toBe(201);
    expect(note.body.data.number).toBe('CN-27-28/000001');

    // The Tally voucher of 1 April carries the 2027-28 number.
    const tally = await acme.http.GET('/v1/accounting/export/tally', { query: { entity_id: entityId, from: '2027-04-01', to: '2027-04-30' } });
    expect(tally.status, tally.text).toBe(200);
    expect(tally.text).toContain('<VOUCHERNUMBER>INV/27-28/000001</VOUCHERNUMBER>');
    expect(tally.text).toContain('<DATE>20270401</DATE>');
    expect(tally.text).not.toContain('INV/26-27/000002');
  });
});
