import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKosh, type Tenant, type TestKosh } from '../support/harness.js';
import { createCustomer, createInvoice, gstinFor } from '../support/billing.js';

/**
 * Paid prepaid credit in the GST returns (DESIGN §23, decision 0340). A top-up is sold on a tax
 * invoice, so it is a supply in GSTR-1 table 4 of its own month — not an advance under a receipt
 * voucher (table 11A). Drawing it down later is therefore no advance adjustment: table 11B stays
 * empty, and the draw's entry adjusts the top-up's output tax in the books (one 18 %, not two).
 * Supplier and customer in Karnataka (29): CGST 9 % + SGST 9 %.
 */
let t: TestKosh;
let acme: Tenant;
let entityId: string;

beforeAll(async () => {
  t = await startTestKosh();
  acme = await t.registerTenant({ gstin: gstinFor('29') });
  entityId = (await acme.api('GET', '/v1/entities')).body.data[0].id;
});
afterAll(() => t.close());

const gstr1 = async (period: string) => {
  const res = await acme.api('GET', `/v1/gst/gstr1?entity_id=${entityId}&period=${period}`);
  expect(res.status, res.text).toBe(200);
  return res.body.data;
};

/** Output tax (CGST + SGST + IGST) the books owe for entries dated in [from, to). */
async function outputTax(from: string, to: string): Promise<number> {
  const { rows } = await sql<{ n: string | null }>`
    SELECT sum(l.credit - l.debit) AS n FROM journal_lines l JOIN journal_entries e ON e.tenant_id = l.tenant_id AND e.id = l.entry_id
    WHERE l.tenant_id = ${acme.tenantId} AND l.account_code IN (2100, 2110, 2120)
      AND e.posted_at >= ${new Date(from)} AND e.posted_at < ${new Date(to)}`.execute(t.database.db);
  return Number(rows[0]?.n ?? 0);
}

describe('paid prepaid credit in the GST returns', () => {
  it('a top-up drawn down the next month is never an advance adjustment (11B), and its GST is owed once in the books', async () => {
    const customer = await createCustomer(acme, { gstin: gstinFor('29', 'BBBBB2222B1Z') });
    // April: ₹1,000 of credit, top-up invoice ₹1,000 + CGST 90 + SGST 90, paid.
    const grant = await acme.api('POST', `/v1/customers/${customer}/credit-grants`, { category: 'paid', amount: 100_000, currency: 'INR' });
    expect(grant.status, grant.text).toBe(201);
    const topUp = (await acme.api('GET', `/v1/invoices/${grant.body.data.invoice_id}`)).body.data;
    const paid = await acme.api('POST', '/v1/payments/offline', {
      customer_id: customer,
      invoice_id: topUp.id,
      amount: topUp.amount_due,
      payment_type: 'bank_transfer',
    });
    expect(paid.status, paid.text).toBe(201);

    // May: ₹500 of service (+ CGST 45 + SGST 45), settled entirely from the credit.
    t.clock.set('2026-05-10T00:00:00Z');
    const may = await createInvoice(acme, customer, [50_000]);
    expect(may).toMatchObject({ status: 'paid', total: 59_000, amount_credited: 59_000 });

    const april = await gstr1('042026');
    expect(april.b2b[0].inv.map((i: { inum: string }) => i.inum)).toEqual([topUp.number]);
    expect(april.b2b[0].inv[0].itms[0].itm_det).toMatchObject({ txval: 1000, camt: 90, samt: 90 });
    const mayReturn = await gstr1('052026');
    // Neither month reports an advance received (11A) or adjusted (11B): the top-up is a supply on
    // a tax invoice, and its draw-down is a settlement, not the adjustment of a receipt voucher.
    for (const r of [april, mayReturn]) {
      expect(r.at ?? []).toEqual([]);
      expect(r.txpd ?? []).toEqual([]);
    }
    // The draw created no customer advance and no advance movement (what 11A/11B are built from).
    const advances = await sql<{ n: string }>`
      SELECT (SELECT count(*) FROM customer_advances WHERE tenant_id = ${acme.tenantId})
           + (SELECT count(*) FROM advance_movements WHERE tenant_id = ${acme.tenantId}) AS n`.execute(t.database.db);
    expect(Number(advances.rows[0]!.n)).toBe(0);

    // The books: April owes the top-up's 180; in May the invoice's 90 is offset by the 90 of the
    // top-up's tax its draw adjusts — 180 in all, 18 % of the ₹1,000 paid for, charged once.
    expect(await outputTax('2026-03-01T00:00:00Z', '2026-05-01T00:00:00Z')).toBe(18_000);
    expect(await outputTax('2026-05-01T00:00:00Z', '2026-06-01T00:00:00Z')).toBe(0);
  });
});
