import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKosh, type Tenant, type TestKosh } from '../support/harness.js';
import { gstinFor } from '../support/billing.js';

/**
 * CGST Act s.34(2) (as substituted by the Finance Act 2022): a credit note reducing output tax on
 * a supply of financial year N is declared by 30 November of year N+1. Later, only a commercial
 * credit (`tax_reversal: false`) — the customer's balance changes, output tax does not.
 */
let t: TestKosh;
let acme: Tenant;
let entityId: string;
let buyerId: string;
let march: { id: string; number: string; total: number };

const note = (body: Record<string, unknown>) => acme.http.POST('/v1/credit-notes', { body: { customer_id: buyerId, reason: 'Service credit', ...body } });

beforeAll(async () => {
  t = await startTestKosh({});
  t.clock.set('2026-03-15T06:00:00Z'); // financial year 2025-26
  acme = await t.registerTenant({ state_code: '29', gstin: gstinFor('29') });
  entityId = (await acme.http.GET('/v1/entities')).body.data[0]!.id;
  buyerId = (
    await acme.http.POST('/v1/customers', {
      body: {
        email: 'ap@buyer.test',
        name: 'Buyer Ltd',
        gstin: gstinFor('29', 'AABCB1234C1Z'),
        billing_address: { line1: '1 MG Road', city: 'Bengaluru', state_code: '29', postal_code: '560001', country: 'IN' },
      },
    })
  ).body.data.id;
  const res = await acme.http.POST('/v1/invoices', {
    body: {
      customer_id: buyerId,
      currency: 'INR',
      lines: [{ description: 'Annual plan', quantity: 1, unit_amount: 1_000_000 }],
    },
  });
  expect(res.status, res.text).toBe(201);
  march = res.body.data as typeof march;
});
afterAll(() => t?.close());

describe('credit notes: the s.34(2) time limit', () => {
  it('accepts a tax credit on a 2025-26 supply until the end of 30 November 2026 in India', async () => {
    t.clock.set('2026-11-30T18:00:00Z'); // 23:30 on 30 November in India
    const res = await note({ invoice_id: march.id, amount: 11_800 });
    expect(res.status, res.text).toBe(201);
    expect(res.body.data).toMatchObject({ tax_reversal: true, subtotal: 10_000, cgst_amount: 900, sgst_amount: 900 });
  });

  it('refuses it from 1 December 2026 with 409 credit_note_time_barred, pointing at tax_reversal: false', async () => {
    t.clock.set('2026-11-30T18:30:00Z'); // 00:00 on 1 December in India
    const res = await note({ invoice_id: march.id, amount: 11_800 });
    expect(res.status, res.text).toBe(409);
    expect(res.error!).toMatchObject({ code: 'conflict', reason: 'credit_note_time_barred' });
    expect(res.error!.message).toMatch(/30 November 2026.*tax_reversal: false/);
  });

  it('then takes a commercial credit: the balance changes, output tax and GSTR-1 do not', async () => {
    const before = (await acme.http.GET('/v1/invoices/{id}', { path: { id: march.id } })).body.data;
    const gstr3bBefore = (await acme.http.GET('/v1/gst/gstr3b', { query: { entity_id: entityId, period: '122026' } })).body.data;
    const res = await note({ invoice_id: march.id, amount: 23_600, tax_reversal: false });
    expect(res.status, res.text).toBe(201);
    expect(res.body.data).toMatchObject({ tax_reversal: false, amount: 23_600, tax_amount: 0, cgst_amount: 0, sgst_amount: 0, igst_amount: 0, tax_type: '' });
    const after = (await acme.http.GET('/v1/invoices/{id}', { path: { id: march.id } })).body.data;
    expect(after.amount_due).toBe(before.amount_due - 23_600);

    const entries = (await acme.http.GET('/v1/invoices/{id}/journal-entries', { path: { id: march.id } })).body.data as {
      kind: string;
      reference_id: string;
      lines: { account_code: number; debit: number; credit: number }[];
    }[];
    const issued = entries.find((e) => e.kind === 'credit_note.issued' && e.reference_id === res.body.data.id)!;
    expect(issued.lines.map((l) => [l.account_code, l.debit, l.credit]).sort()).toEqual([
      [2300, 0, 23_600],
      [4900, 23_600, 0],
    ]);

    const gstr1 = (await acme.http.GET('/v1/gst/gstr1', { query: { entity_id: entityId, period: '122026' } })).body.data;
    // The tax note of 30 November is in November's return; December's lists no note at all.
    expect(JSON.stringify([gstr1.cdnr ?? [], gstr1.cdnur ?? [], gstr1.b2cs ?? []])).not.toContain(res.body.data.number);
    expect(gstr1.cdnr ?? []).toEqual([]);
    expect((await acme.http.GET('/v1/gst/gstr3b', { query: { entity_id: entityId, period: '122026' } })).body.data).toEqual(gstr3bBefore);
  });

  it('keeps line credits working on the invoice after a commercial credit, and refuses lines on a commercial credit', async () => {
    const invoice = (await acme.http.GET('/v1/invoices/{id}', { path: { id: march.id } })).body.data;
    const lineId = invoice.lines[0]!.id;
    const withLines = await note({ invoice_id: march.id, tax_reversal: false, lines: [{ invoice_line_id: lineId, amount: 1_180 }] });
    expect(withLines.status, withLines.text).toBe(400);
    const tooMuch = await note({ invoice_id: march.id, amount: invoice.total, tax_reversal: false });
    expect(tooMuch.status).toBe(409);
    expect(tooMuch.error!.reason).toBe('amount_exceeds_invoice');

    // A supply of 2026-27 may still be credited with tax (until 30 November 2027), by line.
    const april = await acme.http.POST('/v1/invoices', {
      body: {
        customer_id: buyerId,
        currency: 'INR',
        lines: [{ description: 'Seats', quantity: 1, unit_amount: 500_000 }],
      },
    });
    const aprilLine = april.body.data.lines[0]!.id;
    expect((await note({ invoice_id: april.body.data.id, amount: 5_900, tax_reversal: false })).status).toBe(201);
    const byLine = await note({ invoice_id: april.body.data.id, lines: [{ invoice_line_id: aprilLine, amount: 11_800 }] });
    expect(byLine.status, byLine.text).toBe(201);
    expect(byLine.body.data).toMatchObject({ tax_reversal: true, subtotal: 10_000, tax_amount: 1_800 });
  });
});
