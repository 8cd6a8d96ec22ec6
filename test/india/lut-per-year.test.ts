import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKosh, type Tenant, type TestKosh } from '../support/harness.js';
import { createCustomer, gstinFor } from '../support/billing.js';

/**
 * An LUT is per financial year (issue #28 item 7, decision 0282): recorded with its ARN; after
 * 31 March, with no LUT for the new year, an export is charged IGST or refused, per the entity.
 */
let t: TestKosh;
let acme: Tenant;
let entityId: string;
let austin: string;

beforeAll(async () => {
  t = await startTestKosh(); // 1 April 2026, 05:30 IST: financial year 2026-27
  acme = await t.registerTenant({ gstin: gstinFor('29') });
  entityId = (await acme.http.GET('/v1/entities')).body.data[0]!.id;
  austin = await createCustomer(acme, { billing_address: { line1: '1 Congress Ave', city: 'Austin', country: 'US' } });
});
afterAll(() => t.close());

// ₹10,000 of services (SAC 998314, 18 %) exported: under LUT no IGST; without, IGST 1,800.00.
const exportInvoice = () =>
  acme.http.POST('/v1/invoices', {
    body: {
      customer_id: austin,
      currency: 'INR',
      lines: [{ description: 'Consulting', unit_amount: 1_000_000 }],
      auto_finalize: true,
    },
  });

describe('Letters of Undertaking per financial year', () => {
  it('records each year with its ARN; an export in a year without one pays IGST, or is refused when the entity says so', async () => {
    // No year recorded: the old flag (lut true) stands, year unstated.
    let inv = await exportInvoice();
    expect(inv.status, inv.text).toBe(201);
    expect(inv.body.data).toMatchObject({ tax_type: 'export', igst_amount: 0, total: 1_000_000 });

    const put = await acme.http.PUT('/v1/entities/{id}/luts/{financial_year}', {
      path: { id: entityId, financial_year: '2026-27' },
      body: { arn: 'AD290326012345X' },
    });
    expect(put.status, put.text).toBe(200);
    expect(put.body.data).toMatchObject({ entity_id: entityId, financial_year: '2026-27', arn: 'AD290326012345X' });
    let luts = (await acme.http.GET('/v1/entities/{id}/luts', { path: { id: entityId } })).body.data;
    expect(luts).toMatchObject({ lut: true, lut_missing: 'charge_igst', current_financial_year: '2026-27', in_force: true });
    inv = await exportInvoice();
    expect(inv.body.data).toMatchObject({ igst_amount: 0, total: 1_000_000 });

    // 1 April 2027 (IST) begins 2027-28, for which no LUT is recorded: IGST 18 % on ₹10,000 = 1,800.00.
    t.clock.advanceDays(365);
    luts = (await acme.http.GET('/v1/entities/{id}/luts', { path: { id: entityId } })).body.data;
    expect(luts).toMatchObject({ current_financial_year: '2027-28', in_force: false });
    inv = await exportInvoice();
    expect(inv.status, inv.text).toBe(201);
    expect(inv.body.data).toMatchObject({ tax_type: 'export', igst_amount: 180_000, total: 1_180_000 });

    // The entity refuses exports without an LUT: 409 lut_missing, nothing issued.
    expect((await acme.http.PATCH('/v1/entities/{id}', { path: { id: entityId }, body: { lut_missing: 'refuse' } })).status).toBe(200);
    const refused = await exportInvoice();
    expect(refused.status).toBe(409);
    expect(refused.error!.reason).toBe('lut_missing');
    expect(refused.error!.message).toMatch(/2027-28/);
    // A domestic invoice is not concerned.
    const local = await createCustomer(acme, { gstin: gstinFor('29', 'BBBBB2222B1Z') });
    const domestic = await acme.http.POST('/v1/invoices', {
      body: {
        customer_id: local,
        currency: 'INR',
        lines: [{ description: 'x', unit_amount: 1_000 }],
        auto_finalize: true,
      },
    });
    expect(domestic.status, domestic.text).toBe(201);

    // The year's LUT recorded: exports go without IGST again.
    expect(
      (await acme.http.PUT('/v1/entities/{id}/luts/{financial_year}', { path: { id: entityId, financial_year: '2027-28' }, body: { arn: 'AD290427000111Y' } }))
        .status,
    ).toBe(200);
    inv = await exportInvoice();
    expect(inv.status, inv.text).toBe(201);
    expect(inv.body.data).toMatchObject({ igst_amount: 0, total: 1_000_000 });
    const list = (await acme.http.GET('/v1/entities/{id}/luts', { path: { id: entityId } })).body.data;
    expect(list.luts.map((l: { financial_year: string }) => l.financial_year)).toEqual(['2027-28', '2026-27']);
    expect((await acme.http.GET('/v1/entities/{id}', { path: { id: entityId } })).body.data).toMatchObject({ lut: true, lut_missing: 'refuse' });

    // Not a financial year: 400.
    const bad = await acme.http.PUT('/v1/entities/{id}/luts/{financial_year}', { path: { id: entityId, financial_year: '2027-29' }, body: { arn: 'X' } });
    expect(bad.status).toBe(400);
  });
});
