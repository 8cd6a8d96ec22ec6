/**
 * One ISO 4217 table (src/platform/currencies.ts, DESIGN §19): minor units come from it everywhere
 * — a 12.345 KWD invoice (12345 fils) goes to accounting software as 12.345, not 123.45 — and a
 * currency code outside it is refused with 400 wherever a currency enters Kosh.
 */
import { XMLParser } from 'fast-xml-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { majorUnits, majorUnitsText } from '../../src/modules/accounting/amounts.js';
import { currencyExponent, isKnownCurrency } from '../../src/platform/currencies.js';
import { convertMinorUnits } from '../../src/platform/money.js';
import { createCustomer, gstinFor } from '../support/billing.js';
import { startTestKosh, type Tenant, type TestKosh } from '../support/harness.js';

let t: TestKosh;
let tenant: Tenant;
beforeAll(async () => {
  t = await startTestKosh();
  tenant = await t.registerTenant({ gstin: gstinFor('29') });
});
afterAll(() => t.close());

describe('the ISO 4217 table', () => {
  it.each([
    ['INR', 2],
    ['USD', 2],
    ['JPY', 0],
    ['KRW', 0],
    ['KWD', 3],
    ['BHD', 3],
    ['IQD', 3], // CLDR (the runtime's Intl) says 0
    ['LBP', 2], // CLDR says 0
    ['CLF', 4],
  ])('%s has %i decimals', (code, digits) => {
    expect(currencyExponent(code)).toBe(digits);
    expect(isKnownCurrency(code)).toBe(true);
  });

  it('knows no code without a minor unit, and no made-up code', () => {
    for (const code of ['XAU', 'XDR', 'XTS', 'XXX', 'ABC', 'inr']) expect(isKnownCurrency(code), code).toBe(false);
    expect(() => currencyExponent('ABC')).toThrow(RangeError);
  });

  it('writes three-decimal amounts for accounting software in their own scale', () => {
    expect(majorUnitsText(12_345, 'KWD')).toBe('12.345');
    expect(majorUnitsText(-5, 'KWD')).toBe('-0.005');
    expect(majorUnits(12_345, 'KWD')).toBe(12.345);
    expect(majorUnitsText(1_500, 'JPY')).toBe('1500');
    // The INR value of 12.345 KWD at 270 is ₹3,333.15 — the same table converts.
    expect(convertMinorUnits(12_345, 'KWD', 'INR', '270')).toBe(333_315);
  });
});

describe('a KWD invoice in the Tally export', () => {
  it('carries 12.345 KWD at ₹270 as ₹3,333.15, with 12.345 KWD and the rate in the narration', async () => {
    const customer = await createCustomer(tenant, { name: 'Gulf Trading', billing_address: { city: 'Kuwait City', country: 'KW' } });
    const res = await tenant.api('POST', '/v1/invoices', {
      customer_id: customer,
      currency: 'KWD',
      exchange_rate: '270',
      lines: [{ description: 'Licence', unit_amount: 12_345 }],
      auto_finalize: true,
    });
    expect(res.status, res.text).toBe(201);
    expect(res.body.data).toMatchObject({ total: 12_345, tax_type: 'export', tax_amount: 0 });
    const tally = await tenant.api('GET', '/v1/accounting/export/tally?from=2026-04-01&to=2026-04-30');
    expect(tally.status).toBe(200);
    const doc = new XMLParser({ parseTagValue: false, isArray: (name) => ['TALLYMESSAGE', 'ALLLEDGERENTRIES.LIST'].includes(name) }).parse(tally.text);
    const messages = doc.ENVELOPE.BODY.IMPORTDATA.REQUESTDATA.TALLYMESSAGE as { VOUCHER?: Record<string, unknown> }[];
    const voucher = messages.map((m) => m.VOUCHER).find((v) => v?.VOUCHERNUMBER === res.body.data.number)!;
    const amounts = (voucher['ALLLEDGERENTRIES.LIST'] as { LEDGERNAME: string; AMOUNT: string }[]).map((e) => e.AMOUNT).sort();
    // The books are in rupees (DESIGN §19): 12.345 KWD × 270 = ₹3,333.15; the dinar amount (three
    // decimals, not 123.45) and the rate stand in the narration.
    expect(amounts).toEqual(['-3333.15', '3333.15']);
    expect(voucher.NARRATION).toContain('(KWD 12.345 @ 270 INR)');
  });
});

describe('an unknown currency code', () => {
  const uuid = '00000000-0000-7000-8000-000000000000';
  const cases: [string, 'POST' | 'PUT', string, unknown, string][] = [
    [
      'a plan price',
      'POST',
      '/v1/plans',
      { name: 'Pro', code: 'pro-abc', interval_unit: 'month', prices: [{ currency: 'ABC', amount: 1000 }] },
      'prices.0.currency',
    ],
    ['a new price', 'POST', `/v1/plans/${uuid}/prices`, { amount: 1000, currency: 'ABC' }, 'currency'],
    ['an invoice', 'POST', '/v1/invoices', { customer_id: uuid, currency: 'ABC', lines: [{ description: 'x', unit_amount: 100 }] }, 'currency'],
    [
      'an offline payment',
      'POST',
      '/v1/payments/offline',
      { customer_id: uuid, invoice_id: uuid, payment_type: 'bank_transfer', amount: 100, currency: 'ABC' },
      'currency',
    ],
    ['a credit note', 'POST', '/v1/credit-notes', { customer_id: uuid, amount: 100, currency: 'ABC' }, 'currency'],
    ['a gateway connection', 'POST', '/v1/gateway-connections', { provider: 'test', credentials: {}, currencies: ['INR', 'ABC'] }, 'currencies.1'],
    ['an exchange rate', 'PUT', `/v1/entities/${uuid}/exchange-rates`, { currency: 'ABC', rate: '1.5' }, 'currency'],
  ];

  it.each(cases)('is refused with 400 on %s', async (_what, method, url, body, field) => {
    const res = await tenant.api(method, url, body);
    expect(res.status, res.text).toBe(400);
    expect(res.body.error.code).toBe('validation_failed');
    expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
  });

  it('is refused as a base currency at registration, and a unit without minor units (gold) as a reporting currency', async () => {
    const register = await t.api('POST', '/auth/register', { name: 'Nowhere', email: 'abc@nowhere.test', base_currency: 'ABC' });
    expect(register.status).toBe(400);
    expect(register.body.error.details[0].field).toBe('base_currency');
    const org = await tenant.api('POST', '/v1/organizations', { name: 'Group', reporting_currency: 'XAU' });
    expect(org.status).toBe(400);
    expect(org.body.error.details[0].field).toBe('reporting_currency');
  });
});
