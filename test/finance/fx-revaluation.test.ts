import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gstinCheckCharacter } from '../../src/modules/tax/index.js';
import { startTestKosh, type Tenant, type TestKosh } from '../support/harness.js';

/**
 * Month-end revaluation (Ind AS 21.23(a), 21.28; decision 0450): open dollar receivables of an
 * Indian entity are restated at the month's closing rate against 4310 unrealized exchange
 * gain/loss, and reversed at the first instant of the next month; closing a month revalues it.
 * Every figure is worked by hand in the comments.
 */
const gstin = (base: string) => base + gstinCheckCharacter(base);
const DAY = 86_400_000;

type Line = {
  account_code: number;
  debit: number;
  credit: number;
  functional_debit: number | null;
  functional_credit: number | null;
  invoice_id: string | null;
};
type Entry = { kind: string; currency: string; exchange_rate: string | null; posted_at: string; lines: Line[] };

let t: TestKosh;
let acme: Tenant;
let entityId: string;
let customer: string;
const invoices: string[] = [];

const net = (entry: Entry, code: number, invoiceId?: string) =>
  entry.lines
    .filter((l) => l.account_code === code && (invoiceId === undefined || l.invoice_id === invoiceId))
    .reduce((s, l) => s + (l.functional_debit ?? 0) - (l.functional_credit ?? 0), 0);

async function entries(kind: string): Promise<Entry[]> {
  const res = await acme.http.GET('/v1/ledger/journal-entries', { query: { kind, entity_id: entityId, limit: 100 } });
  expect(res.status, res.text).toBe(200);
  return res.body.data;
}

async function balances(asOf?: string) {
  const res = await acme.api('GET', `/v1/ledger/trial-balance?entity_id=${entityId}&basis=functional${asOf ? `&as_of=${asOf}` : ''}`);
  expect(res.status, res.text).toBe(200);
  const tb = res.body.data;
  expect(tb.balanced).toBe(true);
  return (code: number) => tb.accounts.find((a: { code: number }) => a.code === code)?.balance ?? 0;
}

async function rate(value: string) {
  const res = await acme.http.PUT('/v1/entities/{id}/exchange-rates', { path: { id: entityId }, body: { currency: 'USD', rate: value } });
  expect(res.status, res.text).toBe(200);
}

beforeAll(async () => {
  t = await startTestKosh(); // 1 April 2026, 05:30 IST
  acme = await t.registerTenant({ gstin: gstin('29AAACA1234A1Z'), state_code: '29' });
  entityId = (await acme.http.GET('/v1/entities')).body.data[0]!.id;
  customer = (await acme.http.POST('/v1/customers', { body: { email: 'mh@example.in', gstin: gstin('27CCCCC3333C1Z') } })).body.data.id;
  await rate('83.25');
  // A: $1,000.00 + IGST 18 % = $1,180.00 at ₹83.25 → receivable ₹98,235.00.
  // B: $500.00 + IGST 18 % = $590.00 → ₹49,117.50; $90.00 paid the same day at ₹83.25 leaves $500.00
  //    carried at ₹49,117.50 × 500 / 590 = ₹41,625.00.
  for (const unit of [100_000, 50_000]) {
    const res = await acme.http.POST('/v1/invoices', { body: { customer_id: customer, currency: 'USD', lines: [{ description: 'Plan', unit_amount: unit }] } });
    expect(res.status, res.text).toBe(201);
    invoices.push(res.body.data.id);
  }
  const paid = await acme.http.POST('/v1/payments/offline', {
    body: {
      customer_id: customer,
      invoice_id: invoices[1],
      payment_type: 'bank_transfer',
      amount: 9_000,
      currency: 'USD',
    },
  });
  expect(paid.status, paid.text).toBe(201);
});
afterAll(() => t.close());

describe('month-end revaluation of open foreign receivables', () => {
  it('restates them at the closing rate on the last instant of the month and reverses it on the first of the next', async () => {
    t.clock.advance(19 * DAY); // 20 April: the dollar at ₹84.00
    await rate('84');
    // 1 May 00:30 IST (30 April 19:00 UTC): April has ended; the month-end job runs.
    t.clock.set(new Date('2026-04-30T19:00:00.000Z'));
    await t.kosh.worker.drain();

    const [revaluation] = await entries('fx.revaluation');
    const [reversal] = await entries('fx.revaluation_reversed');
    // A: $1,180.00 × 84 = ₹99,120.00 − ₹98,235.00 = +₹885.00; B: $500.00 × 84 = ₹42,000.00 −
    // ₹41,625.00 = +₹375.00; unrealized gain ₹1,260.00.
    expect(revaluation).toMatchObject({ currency: 'USD', exchange_rate: '84', posted_at: '2026-04-30T18:29:59.999Z' });
    expect(net(revaluation!, 1100, invoices[0])).toBe(88_500);
    expect(net(revaluation!, 1100, invoices[1])).toBe(37_500);
    expect(net(revaluation!, 4310)).toBe(-126_000);
    // Functional amounts only: the dollar books do not move.
    expect(revaluation!.lines.every((l) => l.debit === 0 && l.credit === 0)).toBe(true);
    expect(reversal).toMatchObject({ posted_at: '2026-04-30T18:30:00.000Z' });
    expect(net(reversal!, 1100)).toBe(-126_000);
    expect(net(reversal!, 4310)).toBe(126_000);

    // April's books: $1,680.00 open × 84 = ₹1,41,120.00 = ₹98,235.00 + ₹41,625.00 + ₹1,260.00.
    const april = await balances('2026-04-30');
    expect(april(1100)).toBe(14_112_000);
    expect(april(4310)).toBe(-126_000);
    // From 1 May the receivables are back at their booking rates and 4310 at nil.
    const may = await balances();
    expect(may(1100)).toBe(13_986_000);
    expect(may(4310)).toBe(0);

    // Once per month: the job running again posts nothing more.
    t.clock.advance(3_600_000);
    await t.kosh.worker.drain();
    expect(await entries('fx.revaluation')).toHaveLength(1);
  });

  it('settles against the booking rate after the reversal: the realized difference is all on 4300', async () => {
    // 5 May: A's $1,180.00 paid at ₹84.50 = ₹99,710.00 against its carried ₹98,235.00: gain ₹1,475.00.
    t.clock.set(new Date('2026-05-05T06:00:00.000Z'));
    const paid = await acme.http.POST('/v1/payments/offline', {
      body: {
        customer_id: customer,
        invoice_id: invoices[0],
        payment_type: 'bank_transfer',
        amount: 118_000,
        currency: 'USD',
        exchange_rate: '84.50',
      },
    });
    expect(paid.status, paid.text).toBe(201);
    const receipt = (await entries('payment.recorded')).at(-1)!;
    expect(net(receipt, 1100)).toBe(-9_823_500);
    expect(net(receipt, 4300)).toBe(-147_500);
  });

  it('revalues the running month when it is closed, at the rate in force then', async () => {
    // 8 May the dollar is at ₹83.00; May is closed on 10 May. B's $500.00 × 83 = ₹41,500.00 −
    // ₹41,625.00 = −₹125.00: an unrealized loss, dated at the close, reversed on 1 June 00:00 IST.
    t.clock.set(new Date('2026-05-08T06:00:00.000Z'));
    await rate('83');
    t.clock.set(new Date('2026-05-10T06:00:00.000Z'));
    const closed = await acme.http.POST('/v1/entities/{id}/periods/{period}/close', { path: { id: entityId, period: '2026-05' } });
    expect(closed.status, closed.text).toBe(200);
    const revaluation = (await entries('fx.revaluation')).at(-1)!;
    expect(revaluation).toMatchObject({ exchange_rate: '83', posted_at: '2026-05-10T06:00:00.000Z' });
    expect(net(revaluation, 1100, invoices[1])).toBe(-12_500);
    expect(net(revaluation, 4310)).toBe(12_500);
    expect(net(revaluation, 1100, invoices[0])).toBe(0); // paid: not revalued
    const reversal = (await entries('fx.revaluation_reversed')).at(-1)!;
    expect(reversal.posted_at).toBe('2026-05-31T18:30:00.000Z');
    const now = await balances();
    expect(now(4310)).toBe(12_500);
    expect(now(1100)).toBe(4_150_000);
  });
});

describe('the entity chooses how often it revalues (fx_revaluation, decision 0650)', () => {
  let k: TestKosh;
  const books: Record<'monthly' | 'year_end' | 'off', { tenant: Tenant; entity: string; invoice: string }> = {} as never;

  const revaluations = async (b: { tenant: Tenant; entity: string }) => {
    const res = await b.tenant.http.GET('/v1/ledger/journal-entries', { query: { kind: 'fx.revaluation', entity_id: b.entity, limit: 100 } });
    expect(res.status, res.text).toBe(200);
    return res.body.data as Entry[];
  };
  const setRate = async (value: string) => {
    for (const b of Object.values(books)) {
      const res = await b.tenant.http.PUT('/v1/entities/{id}/exchange-rates', { path: { id: b.entity }, body: { currency: 'USD', rate: value } });
      expect(res.status, res.text).toBe(200);
    }
  };

  beforeAll(async () => {
    k = await startTestKosh(); // 1 April 2026, 05:30 IST
    const pans = { monthly: '29AAACM1234A1Z', year_end: '29AAACY1234A1Z', off: '29AAACO1234A1Z' };
    for (const mode of ['monthly', 'year_end', 'off'] as const) {
      const tenant = await k.registerTenant({ gstin: gstin(pans[mode]), state_code: '29' });
      const entity = (await tenant.http.GET('/v1/entities')).body.data[0];
      // Today's behaviour is the default.
      expect(entity!.fx_revaluation).toBe('monthly');
      if (mode !== 'monthly') {
        const res = await tenant.http.PATCH('/v1/entities/{id}', { path: { id: entity!.id }, body: { fx_revaluation: mode } });
        expect(res.status, res.text).toBe(200);
        expect(res.body.data.fx_revaluation).toBe(mode);
      }
      const created = await tenant.http.POST('/v1/customers', { body: { email: 'mh@example.in', gstin: gstin('27CCCCC3333C1Z') } });
      expect(created.status, created.text).toBe(201);
      books[mode] = { tenant, entity: entity!.id, invoice: '' };
    }
    await setRate('83.25');
    // Each: $1,000.00 + IGST 18 % = $1,180.00 at ₹83.25 → receivable ₹98,235.00, left open.
    for (const b of Object.values(books)) {
      const cust = (await b.tenant.http.GET('/v1/customers')).body.data[0]!.id;
      const res = await b.tenant.http.POST('/v1/invoices', {
        body: { customer_id: cust, currency: 'USD', lines: [{ description: 'Plan', unit_amount: 100_000 }] },
      });
      expect(res.status, res.text).toBe(201);
      b.invoice = res.body.data.id;
    }
  });
  afterAll(() => k.close());

  it('refuses a value it does not know', async () => {
    const res = await books.off.tenant.api('PATCH', `/v1/entities/${books.off.entity}`, { fx_revaluation: 'quarterly' });
    expect(res.status, res.text).toBe(400);
  });

  it('monthly revalues at the end of April; year_end and off do not', async () => {
    k.clock.advance(19 * DAY);
    await setRate('84');
    // 1 May 00:30 IST: $1,180.00 × 84 = ₹99,120.00 − ₹98,235.00 = +₹885.00 for the monthly entity.
    k.clock.set(new Date('2026-04-30T19:00:00.000Z'));
    await k.kosh.worker.drain();
    const [april] = await revaluations(books.monthly);
    expect(april).toMatchObject({ exchange_rate: '84', posted_at: '2026-04-30T18:29:59.999Z' });
    expect(net(april!, 1100, books.monthly.invoice)).toBe(88_500);
    expect(net(april!, 4310)).toBe(-88_500);
    expect(await revaluations(books.year_end)).toHaveLength(0);
    expect(await revaluations(books.off)).toHaveLength(0);
  });

  it('year_end revalues at 31 March, the end of the financial year; off never does', async () => {
    k.clock.set(new Date('2027-03-20T06:00:00.000Z'));
    await setRate('85');
    // 1 April 2027 00:30 IST: $1,180.00 × 85 = ₹1,00,300.00 − ₹98,235.00 = +₹2,065.00 (the April
    // revaluation of the monthly entity was reversed on 1 May, so each restates from its booking rate).
    k.clock.set(new Date('2027-03-31T19:00:00.000Z'));
    await k.kosh.worker.drain();
    const [march] = await revaluations(books.year_end);
    expect(march).toMatchObject({ exchange_rate: '85', posted_at: '2027-03-31T18:29:59.999Z' });
    expect(net(march!, 1100, books.year_end.invoice)).toBe(206_500);
    expect(net(march!, 4310)).toBe(-206_500);
    const monthly = await revaluations(books.monthly);
    expect(monthly.map((e) => e.posted_at)).toContain('2027-03-31T18:29:59.999Z');
    expect(await revaluations(books.off)).toHaveLength(0);
  });
});
