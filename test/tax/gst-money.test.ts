import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gstinCheckCharacter } from '../../src/modules/tax/index.js';
import { trialBalanceRows } from '../../src/modules/ledger/index.js';
import { startTestKosh, type Tenant, type TestKosh } from '../support/harness.js';
import { pdfText } from '../support/pdf-text.js';

const gstin = (base: string) => base + gstinCheckCharacter(base);
const line = (unit_amount: number, extra: Record<string, unknown> = {}) => ({ description: 'Service', unit_amount, quantity: 1, ...extra });

let t: TestKosh;
let acme: Tenant;
let entityId: string;
let karnataka: string; // same state as the entity (29)
let maharashtra: string;
let abroad: string;

async function customer(tenant: Tenant, body: { email: string } & Record<string, unknown>): Promise<string> {
  const res = await tenant.http.POST('/v1/customers', { body });
  expect(res.status, res.text).toBe(201);
  return res.body.data.id;
}

async function invoice(tenant: Tenant, body: { customer_id: string; lines: Record<string, unknown>[] } & Record<string, unknown>) {
  const res = await tenant.http.POST('/v1/invoices', { body: { currency: 'INR', ...body } });
  expect(res.status, res.text).toBe(201);
  return res.body.data;
}

beforeAll(async () => {
  t = await startTestKosh();
  acme = await t.registerTenant({ gstin: gstin('29AAACA1234A1Z'), state_code: '29' });
  entityId = (await acme.http.GET('/v1/entities')).body.data[0]!.id;
  karnataka = await customer(acme, { email: 'ka@example.in', gstin: gstin('29BBBBB2222B1Z') });
  maharashtra = await customer(acme, { email: 'mh@example.in', gstin: gstin('27CCCCC3333C1Z') });
  abroad = await customer(acme, { email: 'us@example.com', billing_address: { country: 'US' } });
});
afterAll(() => t.close());

describe('invoices', () => {
  describe('finalize', () => {
    it('recomputes place of supply and tax from the parties at finalization', async () => {
      const movingCustomer = await customer(acme, { email: 'moving@example.in', gstin: gstin('27GGGGG7777G1Z') });
      const draft = await invoice(acme, { customer_id: movingCustomer, lines: [line(10_000)], auto_finalize: false });
      expect(draft).toMatchObject({ tax_type: 'inter_state', place_of_supply: '27', igst_amount: 1800 });
      const moved = await acme.http.PUT('/v1/customers/{id}', { path: { id: movingCustomer }, body: { gstin: gstin('29DDDDD4444D1Z') } });
      expect(moved.status).toBe(200);

      const res = await acme.http.POST('/v1/invoices/{id}/finalize', { path: { id: draft.id } });
      expect(res.status, res.text).toBe(200);
      const inv = res.body.data;
      expect(inv.customer_details!.gstin).toMatch(/^29/);
      expect(inv).toMatchObject({
        tax_type: 'intra_state',
        place_of_supply: '29',
        cgst_amount: 900,
        sgst_amount: 900,
        igst_amount: 0,
        total: 11_800,
        amount_due: 11_800,
      });
      expect(inv.lines[0]).toMatchObject({ cgst_amount: 900, sgst_amount: 900, igst_amount: 0 });
      const journal = (await acme.http.GET('/v1/invoices/{id}/journal-entries', { path: { id: inv.id } })).body.data;
      const credited = (code: number) =>
        journal[0]!.lines.filter((l: { account_code: number }) => l.account_code === code).reduce((s: number, l: { credit: number }) => s + l.credit, 0);
      expect(credited(2100)).toBe(900); // CGST payable
      expect(credited(2120)).toBe(0); // IGST payable
    });
  });

  describe('amounts beyond 2^53 − 1', () => {
    it.each([
      ['a unit amount whose tax overflows', [line(Number.MAX_SAFE_INTEGER)], 'lines.0.unit_amount'],
      ['quantity × unit amount', [line(Number.MAX_SAFE_INTEGER / 7 + 1, { quantity: 1000 })], 'lines.0.unit_amount'],
      ['lines that overflow together', [line(5_000_000_000_000_000), line(5_000_000_000_000_000)], 'lines'],
    ])('refuses %s with 400 validation_failed naming the field', async (_what, lines, field) => {
      const res = await acme.api('POST', '/v1/invoices', {
        customer_id: karnataka,
        currency: 'INR',
        lines: lines.map((l) => ({ ...l, unit_amount: Math.floor(l.unit_amount) })),
      });
      expect(res.status, res.text).toBe(400);
      expect(res.body.error.code).toBe('validation_failed');
      expect(JSON.stringify(res.body.error)).toContain(field);
    });

    it('refuses a quote whose tax overflows with 400', async () => {
      const res = await acme.api('POST', '/v1/quotes', {
        customer_id: karnataka,
        line_items: [{ description: 'x', quantity: 1, unit_amount: Number.MAX_SAFE_INTEGER }],
      });
      expect(res.status, res.text).toBe(400);
      expect(JSON.stringify(res.body.error)).toContain('line_items.0.unit_amount');
    });

    it('refuses a gift whose price with tax overflows with 400', async () => {
      const plan = await acme.http.POST('/v1/plans', {
        body: {
          name: 'Huge',
          code: 'huge',
          interval_unit: 'month',
          amount: Number.MAX_SAFE_INTEGER,
          currency: 'INR',
        },
      });
      expect(plan.status, plan.text).toBe(201);
      const res = await acme.api('POST', '/v1/gifts', {
        plan_id: plan.body.data.id,
        buyer_customer_id: karnataka,
        recipient_email: 'r@example.in',
        duration_months: 1,
      });
      expect(res.status, res.text).toBe(400);
      expect(res.body.error.code).toBe('validation_failed');
    });
  });
});

describe('TDS', () => {
  it('refuses a payment that brings TDS above 20 % of the taxable value', async () => {
    const inv = await invoice(acme, { customer_id: maharashtra, lines: [line(10_000)] }); // 10 000 + 1 800
    const first = await acme.http.POST('/v1/payments/offline', {
      body: {
        customer_id: maharashtra,
        invoice_id: inv.id,
        payment_type: 'bank_transfer',
        amount: 1000,
        tds_amount: 1500,
      },
    });
    expect(first.status, first.text).toBe(201);
    const second = await acme.api('POST', '/v1/payments/offline', {
      customer_id: maharashtra,
      invoice_id: inv.id,
      payment_type: 'bank_transfer',
      amount: 1000,
      tds_amount: 501,
    });
    expect(second.status).toBe(400);
    expect(second.body.error.message).toMatch(/20 ?%/);
    const exact = await acme.http.POST('/v1/payments/offline', {
      body: {
        customer_id: maharashtra,
        invoice_id: inv.id,
        payment_type: 'bank_transfer',
        amount: 1000,
        tds_amount: 500,
      },
    });
    expect(exact.status, exact.text).toBe(201);
  });

  it('refuses TDS on an export invoice', async () => {
    const inv = await invoice(acme, { customer_id: abroad, currency: 'USD', lines: [line(10_000)] });
    expect(inv.tax_type).toBe('export');
    const res = await acme.api('POST', '/v1/payments/offline', {
      customer_id: abroad,
      invoice_id: inv.id,
      currency: 'USD',
      payment_type: 'bank_transfer',
      amount: 9000,
      tds_amount: 1000,
    });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/export/);
    const late = await acme.api('POST', `/v1/invoices/${inv.id}/tds`, { tds_amount: 1000 });
    expect(late.status).toBe(400);
  });

  it('settles TDS certified after the cash through POST /v1/invoices/{id}/tds', async () => {
    const inv = await invoice(acme, { customer_id: maharashtra, lines: [line(10_000)] }); // 11 800
    const cash = await acme.http.POST('/v1/payments/offline', {
      body: {
        customer_id: maharashtra,
        invoice_id: inv.id,
        payment_type: 'bank_transfer',
        amount: 10_800,
      },
    });
    expect(cash.status).toBe(201);
    const tooMuch = await acme.api('POST', `/v1/invoices/${inv.id}/tds`, { tds_amount: 2001 });
    expect(tooMuch.status).toBe(400);
    // Issued 1 April 2026 (IST): the Income-tax Act 2025's s.393 payment code 1027 (professional fees), not 194J (decision 0510).
    const part = await acme.http.POST('/v1/invoices/{id}/tds', {
      path: { id: inv.id },
      body: { tds_amount: 400, certificate_number: 'ABCD1234', section: '1027' },
    });
    expect(part.status, part.text).toBe(200);
    expect(part.body.data).toMatchObject({ status: 'open', amount_tds: 400, amount_due: 600 });
    const res = await acme.http.POST('/v1/invoices/{id}/tds', { path: { id: inv.id }, body: { tds_amount: 600, certificate_number: 'ABCD1235' } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toMatchObject({ status: 'paid', amount_tds: 1000, amount_due: 0 });
    const again = await acme.http.POST('/v1/invoices/{id}/tds', { path: { id: inv.id }, body: { tds_amount: 1 } });
    expect(again.status).toBe(409);
    const journal = (await acme.http.GET('/v1/invoices/{id}/journal-entries', { path: { id: inv.id } })).body.data;
    const entries = journal.filter((e: { kind: string }) => e.kind === 'invoice.tds_recorded');
    expect(entries).toHaveLength(2);
    const tds = entries[1]!;
    expect(tds.lines).toEqual(
      expect.arrayContaining([expect.objectContaining({ account_code: 1200, debit: 600 }), expect.objectContaining({ account_code: 1100, credit: 600 })]),
    );
  });
});

describe('foreign-currency invoices of an Indian entity', () => {
  it('stores the exchange rate and the INR tax amounts, from the entity rate table', async () => {
    const put = await acme.http.PUT('/v1/entities/{id}/exchange-rates', { path: { id: entityId }, body: { currency: 'USD', rate: '83.2575' } });
    expect(put.status, put.text).toBe(200);
    expect(put.body.data).toMatchObject({ currency: 'USD', rate: '83.2575' });
    const inv = await invoice(acme, { customer_id: karnataka, currency: 'USD', lines: [line(10_000)] }); // $100.00
    expect(inv).toMatchObject({ currency: 'USD', exchange_rate: '83.2575', cgst_amount: 900, sgst_amount: 900 });
    // ₹8 325.75 taxable; 9 % of it = ₹749.3175 → 749.32 each.
    expect(inv).toMatchObject({
      inr_subtotal: 832_575,
      inr_cgst_amount: 74_932,
      inr_sgst_amount: 74_932,
      inr_igst_amount: 0,
      inr_tax_amount: 149_864,
      inr_total: 982_439,
    });

    const pdf = await t.kosh.app.inject({ method: 'GET', url: `/v1/invoices/${inv.id}/pdf`, headers: { authorization: `Bearer ${acme.key}` } });
    const text = await pdfText(pdf.rawPayload);
    expect(text).toContain('83.2575');
    expect(text).toContain('8,325.75');
    expect(text).toContain('749.32');
  });

  it('uses a rate given on create, and refuses a taxable foreign-currency invoice without one', async () => {
    const given = await invoice(acme, { customer_id: maharashtra, currency: 'USD', exchange_rate: '80', lines: [line(10_000)] });
    expect(given).toMatchObject({ exchange_rate: '80', inr_subtotal: 800_000, inr_igst_amount: 144_000 });
    const res = await acme.api('POST', '/v1/invoices', { customer_id: karnataka, currency: 'EUR', lines: [line(10_000)] });
    expect(res.status).toBe(400);
    expect(res.body.error.details[0].field).toBe('exchange_rate');
    const bad = await acme.api('POST', '/v1/invoices', { customer_id: karnataka, currency: 'USD', exchange_rate: '8.3e1', lines: [line(10_000)] });
    expect(bad.status).toBe(400);
  });

  it('takes the entity rate in force at finalization, not at drafting', async () => {
    const draft = await invoice(acme, { customer_id: karnataka, currency: 'USD', lines: [line(10_000)], auto_finalize: false });
    expect(draft).toMatchObject({ exchange_rate: '83.2575', exchange_rate_source: 'entity_rate_table' });
    t.clock.advance(60_000);
    const later = new Date(t.clock.now().getTime() + 1000).toISOString();
    expect(
      (await acme.http.PUT('/v1/entities/{id}/exchange-rates', { path: { id: entityId }, body: { currency: 'USD', rate: '84.000', effective_from: later } }))
        .body.data.rate,
    ).toBe('84');
    const rates = await acme.http.GET('/v1/entities/{id}/exchange-rates', { path: { id: entityId } });
    expect(rates.body.data.map((r: { rate: string }) => r.rate)).toEqual(['84', '83.2575']);
    t.clock.advance(2000);
    const fin = await acme.http.POST('/v1/invoices/{id}/finalize', { path: { id: draft.id } });
    expect(fin.body.data).toMatchObject({ exchange_rate: '84', inr_subtotal: 840_000, inr_cgst_amount: 75_600 });
  });

  it('keeps one trial balance per currency', async () => {
    const rows = await trialBalanceRows(t.database.db, acme.tenantId);
    const receivables = rows.filter((r) => r.account_code === 1100);
    expect(new Set(receivables.map((r) => r.currency))).toEqual(new Set(['INR', 'USD']));
  });
});

describe('SEZ and LUT', () => {
  it('zero-rates a supply to an SEZ unit in the supplier state, under LUT by default', async () => {
    const sez = await customer(acme, { email: 'sez@example.in', gstin: gstin('29EEEEE5555E1Z'), sez: true });
    expect((await acme.http.GET('/v1/customers/{id}', { path: { id: sez } })).body.data.sez).toBe(true);
    const inv = await invoice(acme, { customer_id: sez, lines: [line(10_000)] });
    expect(inv).toMatchObject({ tax_type: 'sez', place_of_supply: '29', lut: true, tax_amount: 0, total: 10_000 });
  });

  it('charges IGST on exports and SEZ supplies when the entity has no LUT', async () => {
    const entity = await acme.http.POST('/v1/entities', {
      body: {
        name: 'No LUT',
        invoice_prefix: 'NOLUT',
        state_code: '29',
        gstin: gstin('29AAACA1234A2Z'),
        lut: false,
      },
    });
    expect(entity.status, entity.text).toBe(201);
    expect(entity.body.data.lut).toBe(false);
    const sez = await customer(acme, { email: 'sez2@example.in', gstin: gstin('29FFFFF6666F1Z'), sez: true });
    const s = await invoice(acme, { customer_id: sez, entity_id: entity.body.data.id, lines: [line(10_000)] });
    expect(s).toMatchObject({ tax_type: 'sez', lut: false, igst_amount: 1800, cgst_amount: 0, total: 11_800 });
    const e = await invoice(acme, { customer_id: abroad, entity_id: entity.body.data.id, currency: 'USD', exchange_rate: '83', lines: [line(10_000)] });
    expect(e).toMatchObject({ tax_type: 'export', lut: false, igst_amount: 1800, inr_igst_amount: 149_400 });
  });

  it.each([
    ['9963 accommodation', '996311'],
    ['9964 passenger transport', '996411'],
    ['9965 goods transport', '996511'],
  ])('does not tax %s at 18 %% by default', async (_what, code) => {
    const res = await acme.api('POST', '/v1/invoices', { customer_id: karnataka, currency: 'INR', lines: [line(10_000, { hsn_code: code })] });
    expect(res.status).toBe(400);
    expect(res.body.error.details[0].field).toBe('lines.0.tax_rate_bp');
    const given = await invoice(acme, { customer_id: karnataka, lines: [line(10_000, { hsn_code: code, tax_rate_bp: 500 })] });
    expect(given).toMatchObject({ cgst_amount: 250, sgst_amount: 250, total: 10_500 });
    expect(given.lines[0]).toMatchObject({ hsn_code: code, tax_rate_bp: 500 });
  });

  it('takes a listed SAC rate and refuses a code in neither list unless the rate is given', async () => {
    const courier = await invoice(acme, { customer_id: karnataka, lines: [line(10_000, { hsn_code: '996812' })] });
    expect(courier.tax_amount).toBe(1800);
    const unknown = await acme.api('POST', '/v1/invoices', { customer_id: karnataka, currency: 'INR', lines: [line(10_000, { hsn_code: '995099' })] });
    expect(unknown.status).toBe(400);
    const goods = await acme.api('POST', '/v1/invoices', { customer_id: karnataka, currency: 'INR', lines: [line(10_000, { hsn_code: '8471' })] });
    expect(goods.status).toBe(400);
    const plan = await acme.http.POST('/v1/plans', {
      body: {
        name: 'Laptops',
        code: 'laptops',
        interval_unit: 'month',
        amount: 10_000,
        currency: 'INR',
        hsn_code: '8471',
        tax_rate_bp: 1800,
      },
    });
    expect(plan.status, plan.text).toBe(201);
    const viaPlan = await invoice(acme, { customer_id: karnataka, lines: [{ plan_id: plan.body.data.id }] });
    expect(viaPlan).toMatchObject({ tax_amount: 1800 });
  });
});
