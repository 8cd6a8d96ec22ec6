import { XMLParser } from 'fast-xml-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gstinCheckCharacter } from '../../src/modules/tax/index.js';
import { startTestKosh, type Tenant, type TestKosh } from '../support/harness.js';

/**
 * Functional-currency books (DESIGN §19): an Indian entity's dollar documents reach its rupee
 * books at their own rates, and settling them at another rate books a realized exchange gain or
 * loss. Every figure below is worked by hand in the comments.
 */
const gstin = (base: string) => base + gstinCheckCharacter(base);
const DAY = 86_400_000;

type Line = { account_code: number; debit: number; credit: number; functional_debit: number | null; functional_credit: number | null };
type Entry = { kind: string; currency: string; functional_currency: string | null; exchange_rate: string | null; lines: Line[] };

let t: TestKosh;
let acme: Tenant;
let entityId: string;
let maharashtra: string; // the entity is in Karnataka (29): inter-state, IGST 18 %
let abroad: string;

/** Net functional amount (debit − credit) of the entry on one account. */
const functionalNet = (entry: Entry, code: number) =>
  entry.lines.filter((l) => l.account_code === code).reduce((s, l) => s + (l.functional_debit ?? 0) - (l.functional_credit ?? 0), 0);

async function journalOf(invoiceId: string): Promise<Entry[]> {
  const res = await acme.http.GET('/v1/invoices/{id}/journal-entries', { path: { id: invoiceId } });
  expect(res.status, res.text).toBe(200);
  return res.body.data;
}

async function functionalTrialBalance() {
  const res = await acme.http.GET('/v1/ledger/trial-balance', { query: { entity_id: entityId, basis: 'functional' } });
  expect(res.status, res.text).toBe(200);
  const tb = res.body.data;
  const balance = (code: number) => tb.accounts.find((a: { code: number }) => a.code === code)?.balance ?? 0;
  return { tb, balance };
}

beforeAll(async () => {
  t = await startTestKosh();
  acme = await t.registerTenant({ gstin: gstin('29AAACA1234A1Z'), state_code: '29' });
  entityId = (await acme.http.GET('/v1/entities')).body.data[0]!.id;
  maharashtra = (await acme.http.POST('/v1/customers', { body: { email: 'mh@example.in', gstin: gstin('27CCCCC3333C1Z') } })).body.data.id;
  abroad = (await acme.http.POST('/v1/customers', { body: { email: 'us@example.com', billing_address: { country: 'US' } } })).body.data.id;
});
afterAll(() => t.close());

describe('functional-currency books of an Indian entity', () => {
  it('keeps its books in INR', async () => {
    const entity = await acme.http.GET('/v1/entities/{id}', { path: { id: entityId } });
    expect(entity.body.data.functional_currency).toBe('INR');
  });

  it("takes an entity inserted without a functional currency (the previous release's insert, during a rolling upgrade)", async () => {
    // Copy the entity's row without the new column, as a release before migration 0290 inserts it.
    const { rows } = await t.database.pool.query<{ id: string; functional_currency: string; country_code: string }>(
      `WITH src AS (SELECT * FROM legal_entities WHERE id = $1)
       INSERT INTO legal_entities SELECT (json_populate_record(NULL::legal_entities,
         (to_jsonb(src) - 'functional_currency' || jsonb_build_object('id', gen_random_uuid(), 'is_primary', false, 'country_code', c.code, 'tb_ledger_id', 900 + c.n, 'invoice_prefix', 'OLD' || c.n))::json)).*
       FROM src, (VALUES ('IN', 1), ('US', 2)) AS c(code, n)
       RETURNING id, functional_currency, country_code`,
      [entityId],
    );
    // An Indian entity keeps its books in INR; another in the tenant's base currency.
    const base = (await t.database.pool.query<{ base_currency: string }>('SELECT base_currency FROM tenants WHERE id = $1', [acme.tenantId])).rows[0]!
      .base_currency;
    expect(rows.map((r) => [r.country_code, r.functional_currency]).sort()).toEqual([
      ['IN', 'INR'],
      ['US', base],
    ]);
    await t.database.pool.query('DELETE FROM legal_entities WHERE id = ANY($1)', [rows.map((r) => r.id)]);
  });

  it('books a USD invoice, its credit note and a later receipt in rupees, with the realized gain', async () => {
    // $1,000.00 + IGST 18 % = $1,180.00 at ₹83.25: taxable ₹83,250.00, IGST ₹14,985.00, total ₹98,235.00.
    const created = await acme.http.POST('/v1/invoices', {
      body: {
        customer_id: maharashtra,
        currency: 'USD',
        exchange_rate: '83.25',
        lines: [{ description: 'Annual plan', quantity: 1, unit_amount: 100_000 }],
      },
    });
    expect(created.status, created.text).toBe(201);
    const invoice = created.body.data;
    expect(invoice).toMatchObject({ total: 118_000, igst_amount: 18_000, inr_subtotal: 8_325_000, inr_igst_amount: 1_498_500, inr_total: 9_823_500 });

    const [finalized] = await journalOf(invoice.id);
    expect(finalized).toMatchObject({ kind: 'invoice.finalized', currency: 'USD', functional_currency: 'INR', exchange_rate: '83.25' });
    expect(functionalNet(finalized!, 1100)).toBe(9_823_500); // Dr receivables ₹98,235.00
    expect(functionalNet(finalized!, 4000)).toBe(-8_325_000); // Cr revenue ₹83,250.00
    expect(functionalNet(finalized!, 2120)).toBe(-1_498_500); // Cr IGST ₹14,985.00 — the INR tax GSTR-3B declares

    // A credit note of $118.00 gross: $100.00 + $18.00 IGST. At the invoice's rate 83.25:
    // ₹8,325.00 taxable, IGST 18 % of it ₹1,498.50, ₹9,823.50 in all.
    const note = await acme.http.POST('/v1/credit-notes', {
      body: { customer_id: maharashtra, invoice_id: invoice.id, amount: 11_800, reason: 'service credit' },
    });
    expect(note.status, note.text).toBe(201);
    const read = await acme.http.GET('/v1/credit-notes/{id}', { path: { id: note.body.data.id } });
    expect(read.body.data).toMatchObject({
      subtotal: 10_000,
      igst_amount: 1_800,
      exchange_rate: '83.25',
      inr_subtotal: 832_500,
      inr_cgst_amount: 0,
      inr_sgst_amount: 0,
      inr_igst_amount: 149_850,
      inr_tax_amount: 149_850,
      inr_total: 982_350,
    });
    const afterNote = await journalOf(invoice.id);
    const issued = afterNote.find((e) => e.kind === 'credit_note.issued')!;
    expect(functionalNet(issued, 4900)).toBe(832_500);
    expect(functionalNet(issued, 2120)).toBe(149_850);
    expect(functionalNet(issued, 2300)).toBe(-982_350);
    // Applied to its own invoice: $118.00 of $1,180.00 of the receivable's ₹98,235.00 = ₹9,823.50; no difference.
    const applied = afterNote.find((e) => e.kind === 'credit_note.applied')!;
    expect(functionalNet(applied, 1100)).toBe(-982_350);
    expect(applied.lines.some((l) => l.account_code === 4300)).toBe(false);

    // Ten days later the customer pays the $1,062.00 left at ₹84.10: cash ₹89,314.20. The
    // receivable still carries ₹98,235.00 − ₹9,823.50 = ₹88,411.50, all of which leaves:
    // realized exchange gain ₹89,314.20 − ₹88,411.50 = ₹902.70.
    t.clock.advance(10 * DAY);
    const paid = await acme.http.POST('/v1/payments/offline', {
      body: {
        customer_id: maharashtra,
        invoice_id: invoice.id,
        payment_type: 'bank_transfer',
        amount: 106_200,
        currency: 'USD',
        exchange_rate: '84.10',
      },
    });
    expect(paid.status, paid.text).toBe(201);
    expect(paid.body.data).toMatchObject({ exchange_rate: '84.1', exchange_rate_source: 'request', functional_amount: 8_931_420 });
    const receipt = (await journalOf(invoice.id)).find((e) => e.kind === 'payment.recorded')!;
    expect(receipt.exchange_rate).toBe('84.1');
    expect(functionalNet(receipt, 1000)).toBe(8_931_420);
    expect(functionalNet(receipt, 1100)).toBe(-8_841_150);
    expect(functionalNet(receipt, 4300)).toBe(-90_270); // Cr realized exchange gain ₹902.70
    // The gain line has no dollar amount: the entry still balances in USD.
    const gain = receipt.lines.find((l) => l.account_code === 4300)!;
    expect(gain).toMatchObject({ debit: 0, credit: 0, functional_debit: 0, functional_credit: 90_270 });

    // The rupee trial balance: receivable and customer credit cleared; cash ₹89,314.20 and
    // reversals ₹8,325.00 (Dr ₹97,639.20) against revenue ₹83,250.00, IGST ₹14,985.00 − ₹1,498.50
    // = ₹13,486.50 and the gain ₹902.70 (Cr ₹97,639.20).
    const { tb, balance } = await functionalTrialBalance();
    expect(tb).toMatchObject({ currency: 'INR', basis: 'functional', balanced: true, unvalued_entries: 0 });
    expect(balance(1100)).toBe(0);
    expect(balance(2300)).toBe(0);
    expect(balance(1000)).toBe(8_931_420);
    expect(balance(4900)).toBe(832_500);
    expect(balance(4000)).toBe(-8_325_000);
    expect(balance(2120)).toBe(-1_348_650);
    expect(balance(4300)).toBe(-90_270);
    expect(tb.total_debit).toBe(9_763_920);
    expect(tb.total_credit).toBe(9_763_920);
    // The dollar amounts stand beside: cash $1,062.00.
    expect(tb.accounts.find((a: { code: number }) => a.code === 1000)!.transaction_balances).toEqual([{ currency: 'USD', balance: 106_200 }]);
  });

  it('books the refund of a dollar payment at the rate of its day: a weaker dollar owes fewer rupees back', async () => {
    // The entity's table says ₹83.00 from now; an export of $100.00 under LUT (no IGST): ₹8,300.00.
    expect((await acme.http.PUT('/v1/entities/{id}/exchange-rates', { path: { id: entityId }, body: { currency: 'USD', rate: '83' } })).status).toBe(200);
    const created = await acme.http.POST('/v1/invoices', {
      body: {
        customer_id: abroad,
        currency: 'USD',
        lines: [{ description: 'Consulting', quantity: 1, unit_amount: 10_000 }],
      },
    });
    expect(created.status, created.text).toBe(201);
    const invoice = created.body.data;
    expect(invoice).toMatchObject({ tax_type: 'export', total: 10_000, exchange_rate: '83', exchange_rate_source: 'entity_rate_table', inr_total: 830_000 });
    // Paid the same day at the table's ₹83.00: cash ₹8,300.00, no difference.
    const paid = await acme.http.POST('/v1/payments/offline', {
      body: {
        customer_id: abroad,
        invoice_id: invoice.id,
        payment_type: 'bank_transfer',
        amount: 10_000,
        currency: 'USD',
      },
    });
    expect(paid.status, paid.text).toBe(201);
    expect(paid.body.data).toMatchObject({ exchange_rate: '83', exchange_rate_source: 'entity_rate_table', functional_amount: 830_000 });

    // A week later the dollar is at ₹82.50 and half is refunded: the refund note is worth
    // $50.00 × 83 = ₹4,150.00 (the invoice's rate), the money going out $50.00 × 82.50 = ₹4,125.00:
    // realized gain ₹25.00.
    t.clock.advance(7 * DAY);
    expect((await acme.http.PUT('/v1/entities/{id}/exchange-rates', { path: { id: entityId }, body: { currency: 'USD', rate: '82.5' } })).status).toBe(200);
    t.clock.advance(1000);
    const refund = await acme.http.POST('/v1/payments/{id}/refunds', {
      path: { id: paid.body.data.id },
      body: { amount: 5_000, reason: 'requested_by_customer' },
    });
    expect(refund.status, refund.text).toBe(201);
    const entries = await acme.http.GET('/v1/ledger/journal-entries', { query: { kind: 'refund.created', entity_id: entityId } });
    const refunded: Entry = entries.body.data.at(-1)!;
    expect(refunded.exchange_rate).toBe('82.5');
    expect(functionalNet(refunded, 2300)).toBe(415_000);
    expect(functionalNet(refunded, 2320)).toBe(-412_500);
    expect(functionalNet(refunded, 4300)).toBe(-2_500);

    const { tb, balance } = await functionalTrialBalance();
    expect(tb.balanced).toBe(true);
    // Gains so far: ₹902.70 + ₹25.00.
    expect(balance(4300)).toBe(-92_770);
  });

  it('answers the journal entries and the GL export with functional amounts', async () => {
    const res = await acme.http.GET('/v1/ledger/export', { query: { entity_id: entityId } });
    expect(res.status, res.text).toBe(200);
    const [header, ...rows] = res.text.trim().split('\n');
    expect(header).toMatch(/,functional_currency,exchange_rate,functional_debit,functional_credit$/);
    const gainRow = rows.find((r) => r.includes(',4300,') && r.includes('payment.recorded'))!;
    expect(gainRow.endsWith(',INR,84.1,0,90270')).toBe(true);
  });

  it('exports the entity to Tally in rupees, one voucher per entry, summing per ledger to the INR trial balance', async () => {
    const res = await acme.http.GET('/v1/accounting/export/tally', { query: { from: '2026-04-01', to: '2026-04-30', entity_id: entityId } });
    expect(res.status, res.text).toBe(200);
    const doc = new XMLParser({
      ignoreAttributes: false,
      parseTagValue: false,
      isArray: (name) => ['TALLYMESSAGE', 'ALLLEDGERENTRIES.LIST'].includes(name),
    }).parse(res.text);
    const messages = doc.ENVELOPE.BODY.IMPORTDATA.REQUESTDATA.TALLYMESSAGE as Record<string, any>[]; // eslint-disable-line @typescript-eslint/no-explicit-any
    const vouchers = messages.filter((m) => m.VOUCHER).map((m) => m.VOUCHER);
    const paise = (amount: string) => Math.round(Number(amount) * 100);
    // The dollar receipt: Bank Dr ₹89,314.20; the party Cr ₹88,411.50; Exchange Gain/Loss Cr ₹902.70.
    const receipt = vouchers.find((v) => v.VOUCHERTYPENAME === 'Receipt' && String(v.NARRATION).includes('@ 84.1 INR'))!;
    const byLedger = Object.fromEntries(receipt['ALLLEDGERENTRIES.LIST'].map((e: { LEDGERNAME: string; AMOUNT: string }) => [e.LEDGERNAME, e.AMOUNT]));
    expect(byLedger).toEqual({ Bank: '-89314.20', 'mh@example.in': '88411.50', 'Exchange Gain/Loss': '902.70' });
    expect(receipt.NARRATION).toContain('(USD 1062.00 @ 84.1 INR)');
    // The refund is a Payment voucher at ₹82.50: Refunds Payable Cr ₹4,125.00, the gain ₹25.00.
    const payment = vouchers.find((v) => v.VOUCHERTYPENAME === 'Payment')!;
    expect(Object.fromEntries(payment['ALLLEDGERENTRIES.LIST'].map((e: { LEDGERNAME: string; AMOUNT: string }) => [e.LEDGERNAME, e.AMOUNT]))).toEqual({
      'us@example.com': '-4150.00',
      'Refunds Payable': '4125.00',
      'Exchange Gain/Loss': '25.00',
    });
    // Tax ledgers are GST duty heads.
    const igst = messages.find((m) => m.LEDGER?.['@_NAME'] === 'Output IGST')!.LEDGER;
    expect(igst).toMatchObject({ TAXTYPE: 'GST', GSTDUTYHEAD: 'Integrated Tax' });

    // Summed per ledger (Tally signs a debit negative), the file is the INR trial balance: parties
    // hold receivables, credit and advances; Sales holds revenue and its reversals.
    const sums = new Map<string, number>();
    for (const v of vouchers) {
      for (const e of v['ALLLEDGERENTRIES.LIST'] as { LEDGERNAME: string; AMOUNT: string }[])
        sums.set(e.LEDGERNAME, (sums.get(e.LEDGERNAME) ?? 0) - paise(e.AMOUNT));
    }
    const { balance } = await functionalTrialBalance();
    const parties = (sums.get('mh@example.in') ?? 0) + (sums.get('us@example.com') ?? 0);
    expect(parties).toBe(balance(1100) + balance(2300) + balance(2310));
    expect(sums.get('Sales')).toBe(balance(4000) + balance(4900));
    expect(sums.get('Bank')).toBe(balance(1000));
    expect(sums.get('Output IGST')).toBe(balance(2120));
    expect(sums.get('Refunds Payable')).toBe(balance(2320));
    expect(sums.get('Exchange Gain/Loss')).toBe(balance(4300));
  });
});
