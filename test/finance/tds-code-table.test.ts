import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTdsCodeTable, resolveTdsSection } from '../../src/modules/invoices/index.js';
import { loadConfig } from '../../src/platform/config.js';
import { startTestKosh, type Tenant, type TestKosh } from '../support/harness.js';
import { createCustomer, createInvoice } from '../support/billing.js';

/*
 * The operator's TDS code table (KOSH_TDS_CODES, decision 0610). Decision 0510 keeps only the
 * payment-code mappings several secondary sources agree on (194C and a bare 194J map to none);
 * once CBDT's notified table is at hand an operator adds or corrects entries, dated, without a
 * release. The entries below are an operator's configuration for the test, not statements of law:
 * - 194C → 1024 from 1 April 2025 (a mapping the built-in table leaves null);
 * - 1031 usable 1 April – 30 June 2026 only, at 2 % (200 bp).
 */
const TABLE = [
  { code: '194C', payment_code: '1024', description: 'payments to contractors', from: '2025-04-01' },
  { code: '1031', description: 'an operator-added code', rate_bp: 200, from: '2026-04-01', until: '2026-06-30' },
];

describe('the table (pure)', () => {
  const table = parseTdsCodeTable(JSON.stringify(TABLE));

  it('maps a configured old section, dates a configured code, and leaves the rest to the built-in table', () => {
    expect(resolveTdsSection('194C', '2026-03-15')).toMatchObject({ payment_code: null }); // built-in: no mapping
    expect(resolveTdsSection('194-C', '2026-03-15', table)).toEqual({
      section: '194C',
      payment_code: '1024',
      act: 'income_tax_act_1961',
      certificate_form: 'Form 16A',
    });
    // Before the entry's 1 April 2025 the section is refused: the code has entries, none covers the day.
    expect(() => resolveTdsSection('194C', '2025-03-31', table)).toThrow(/configured for deductions on 2025-04-01– only/);
    expect(resolveTdsSection('1031', '2026-06-30', table)).toEqual({
      section: '1031',
      payment_code: '1031',
      act: 'income_tax_act_2025',
      certificate_form: 'Form 131',
      rate_bp: 200,
    });
    expect(() => resolveTdsSection('1031', '2026-07-01', table)).toThrow(/2026-04-01–2026-06-30 only, not on 2026-07-01/);
    // Unconfigured codes as before: 194J(b) → 1027.
    expect(resolveTdsSection('194J(b)', '2026-03-31', table).payment_code).toBe('1027');
  });

  it('refuses a malformed table, naming each problem', () => {
    const refused = (entries: unknown) => () => parseTdsCodeTable(JSON.stringify(entries));
    expect(() => parseTdsCodeTable('{not json')).toThrow(/KOSH_TDS_CODES: must be a JSON array/);
    expect(refused([{ code: '1099', description: 'x', from: '2026-04-01' }])).toThrow(/\[0\]\.code: 1099 is not in 1001–1092/);
    expect(refused([{ code: '1031', description: 'x', from: '2026-03-01' }])).toThrow(/applies from 2026-04-01/);
    expect(refused([{ code: '194C', description: 'x', from: '2025-04-01' }])).toThrow(/payment_code: give the payment code/);
    expect(refused([{ code: '1031', description: 'x', from: '2026-05-01', until: '2026-04-30' }])).toThrow(/until: is before from/);
    expect(
      refused([
        { code: '1031', description: 'x', from: '2026-04-01', until: '2026-06-30' },
        { code: '1031', description: 'y', from: '2026-06-01' },
      ]),
    ).toThrow(/\[0\]: overlaps \[1\] for 1031/);
    expect(refused([{ code: '1031', description: 'x', from: '2026-04-01', rate_bp: 10_001 }])).toThrow(/KOSH_TDS_CODES/);
    expect(refused([{ code: '1031', description: 'x', from: '2026-04-01', extra: 1 }])).toThrow(/KOSH_TDS_CODES/);
  });

  it('is read from KOSH_TDS_CODES', () => {
    expect(loadConfig({ KOSH_TDS_CODES: JSON.stringify(TABLE) }).tdsCodes).toBe(JSON.stringify(TABLE));
  });
});

describe('POST /v1/invoices/{id}/tds with the table', () => {
  let t: TestKosh;
  let tenant: Tenant;
  beforeAll(async () => {
    t = await startTestKosh({ env: { KOSH_TDS_CODES: JSON.stringify(TABLE) } });
    tenant = await t.registerTenant();
  });
  afterAll(() => t?.close());

  it('records 194C with its configured payment code, and refuses 1031 outside its dates', async () => {
    const customer = await createCustomer(tenant);
    // Issued 15 March 2026 (1961 Act), taxable 1,00,000.00: TDS of 2,000.00 (2 %) under 194C.
    t.clock.set('2026-03-15T06:30:00Z');
    const a = await createInvoice(tenant, customer, [10_000_000]);
    t.clock.set('2026-07-02T06:30:00Z');
    const certA = await tenant.http.POST('/v1/invoices/{id}/tds', { path: { id: a.id }, body: { tds_amount: 200_000, section: '194C' } });
    expect(certA.status, certA.text).toBe(200);
    const entityId = (await tenant.http.GET('/v1/entities')).body.data[0]!.id;
    const q4 = await tenant.http.GET('/v1/tds/report', { query: { entity_id: entityId, quarter: '2025-26-Q4' } });
    expect(q4.status, q4.text).toBe(200);
    expect(q4.body.data.customers[0]!.rows).toEqual([
      expect.objectContaining({ invoice_id: a.id, section: '194C', payment_code: '1024', certificate_form: 'Form 16A' }),
    ]);

    // Issued 1 July 2026: 1031 is configured until 30 June only.
    t.clock.set('2026-07-01T06:30:00Z');
    const b = await createInvoice(tenant, customer, [10_000_000]);
    t.clock.set('2026-07-02T06:30:00Z');
    const late = await tenant.http.POST('/v1/invoices/{id}/tds', { path: { id: b.id }, body: { tds_amount: 200_000, section: '1031' } });
    expect(late.status, late.text).toBe(400);
    expect(late.text).toContain('2026-04-01–2026-06-30 only');
    // Dated 30 June (deducted_on), the same code is accepted.
    const inside = await tenant.http.POST('/v1/invoices/{id}/tds', {
      path: { id: b.id },
      body: { tds_amount: 200_000, section: '1031', deducted_on: '2026-06-30' },
    });
    expect(inside.status, inside.text).toBe(200);
  });

  it('a malformed table stops Kosh starting', async () => {
    await expect(startTestKosh({ env: { KOSH_TDS_CODES: JSON.stringify([{ code: '1099', description: 'x', from: '2026-04-01' }]) } })).rejects.toThrow(
      /KOSH_TDS_CODES: \[0\]\.code: 1099 is not in 1001–1092/,
    );
  });
});
