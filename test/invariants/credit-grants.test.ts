/**
 * The invariant harness for prepaid credit (DESIGN §23): random histories of paid grants in rupees
 * or dollars (top-up invoices paid in full, paid in parts across months, left unpaid, or voided), promotional grants (with priorities, expiries and
 * applies_to), auto top-ups (a paid grant sold when a draw leaves the balance below a threshold),
 * invoices that draw them down (single finalizations with one to three lines),
 * partial payments, grant voids, moves of the dollar's rate and time passing (expiries), through
 * the public API. After every step the books must tie out:
 *   1. prepaid liability (2330), per top-up invoice, equals its total less its vouchers' tax while
 *      the grant is pending, its grant's unspent balance while active, and 0 once it is depleted,
 *      expired or voided; in total, 2330 is the sum of the unspent paid grants;
 *   2. promotional credit never appears as a liability: every 2330 line is tagged with a top-up
 *      invoice (the paid grant it belongs to);
 *   3. output tax on a top-up is never charged again on its draw-down: the draws of a grant adjust
 *      at most the tax its top-up charged (exactly all of it once depleted), so the top-up's own
 *      output-tax accounts never go negative and equal its tax less what the draws adjusted;
 *   4. receivables per invoice equal its amount_due; a grant's remaining stays within 0..amount;
 *   5. a promotional draw lowers taxable value: each invoice's revenue is its subtotal, and its
 *      discount is the promotional draws recorded on it;
 *   6. a paid top-up is an advance for GST (decisions 0700, 0840): its receipt vouchers, one per
 *      part received, add up to what was received against it (none for an unpaid or voided one),
 *      each with value + tax = amount and nothing open below zero; once it is paid in full they
 *      carry its total and the grant's value and tax; their adjustments (GSTR-1 11B) are the
 *      grant's draw-downs, value, tax and invoices; the customer has no other advance; and no
 *      journal entry references a promotional grant;
 *   7. across the whole tenant (every history so far), prepaid liability 2330 equals the sum of
 *      the unspent paid grants (active), plus each unpaid top-up's total less its vouchers' tax
 *      (pending: only the parts received owe GST);
 *   8. GSTR-3B 3.1(a) of every month equals, head by head, what the output-tax accounts moved in
 *      that month in rupees: the vouchers' tax (11A) and the invoices' tax less the adjusted tax
 *      (11B), each rupee counted once.
 * Runs a few histories from a fixed seed in `npm test`; test/support/property-runs.ts says how to hunt longer.
 */
import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKosh, type Tenant, type TestKosh } from '../support/harness.js';
import { createCustomer, gstinFor } from '../support/billing.js';
import { INVARIANT_RUNS, propertyRuns } from '../support/property-runs.js';

const RUNS = INVARIANT_RUNS;
const STEPS = Number(process.env.KOSH_INVARIANT_STEPS ?? 14);

let t: TestKosh;
let acme: Tenant;
let entityId: string;
beforeAll(async () => {
  t = await startTestKosh();
  acme = await t.registerTenant({ gstin: gstinFor('29') });
  entityId = (await acme.api('GET', '/v1/entities')).body.data[0].id;
  // Top-ups and invoices in dollars too: their GST is determined in rupees (rule 34).
  await acme.api('PUT', `/v1/entities/${entityId}/exchange-rates`, { currency: 'USD', rate: '83.25' });
});
afterAll(() => t.close());

type World = { customer: string; grants: string[]; invoices: string[] };

const op = fc.oneof(
  fc.record({
    kind: fc.constant('paid' as const),
    currency: fc.constantFrom('INR', 'USD'),
    amount: fc.integer({ min: 1, max: 500_000 }),
    pay: fc.boolean(),
    expires: fc.boolean(),
    priority: fc.integer({ min: 0, max: 100 }),
  }),
  fc.record({
    kind: fc.constant('promotional' as const),
    amount: fc.integer({ min: 1, max: 200_000 }),
    expires: fc.boolean(),
    priority: fc.integer({ min: 0, max: 100 }),
    oneOffOnly: fc.boolean(),
  }),
  fc.record({
    kind: fc.constant('invoice' as const),
    currency: fc.constantFrom('INR', 'INR', 'USD'),
    amounts: fc.array(fc.integer({ min: 1, max: 300_000 }), { minLength: 1, maxLength: 3 }),
  }),
  fc.record({ kind: fc.constant('pay_top_up' as const), grant: fc.nat() }),
  fc.record({ kind: fc.constant('pay_top_up_part' as const), grant: fc.nat(), share: fc.integer({ min: 1, max: 99 }) }),
  fc.record({ kind: fc.constant('time_passes_a_month' as const) }),
  // The rupee moves: a dollar top-up's parts are valued at the rate of their own dates.
  fc.record({ kind: fc.constant('rate_moves' as const), rate: fc.constantFrom('79.5', '83.25', '85', '90.125') }),
  fc.record({ kind: fc.constant('pay' as const), invoice: fc.nat(), share: fc.integer({ min: 1, max: 100 }) }),
  fc.record({ kind: fc.constant('void' as const), grant: fc.nat() }),
  fc.record({ kind: fc.constant('time_passes' as const), days: fc.integer({ min: 1, max: 20 }) }),
  fc.record({ kind: fc.constant('auto_top_up' as const), threshold: fc.integer({ min: 1, max: 200_000 }), amount: fc.integer({ min: 1, max: 300_000 }) }),
);
type Op = typeof op extends fc.Arbitrary<infer T> ? T : never;

const pick = <T>(list: T[], n: number): T | undefined => (list.length === 0 ? undefined : list[n % list.length]);

async function step(w: World, o: Op) {
  const inDays = (d: number) => new Date(t.clock.now().getTime() + d * 86_400_000).toISOString();
  switch (o.kind) {
    case 'paid': {
      const res = await acme.api('POST', `/v1/customers/${w.customer}/credit-grants`, {
        category: 'paid',
        currency: o.currency,
        amount: o.amount,
        priority: o.priority,
        ...(o.expires ? { expires_at: inDays(10) } : {}),
      });
      if (res.status === 201) {
        w.grants.push(res.body.data.id);
        if (o.pay) await payInFull(res.body.data.invoice_id);
      }
      return res;
    }
    case 'promotional': {
      const res = await acme.api('POST', `/v1/customers/${w.customer}/credit-grants`, {
        category: 'promotional',
        currency: 'INR',
        amount: o.amount,
        priority: o.priority,
        ...(o.expires ? { expires_at: inDays(10) } : {}),
        ...(o.oneOffOnly ? { applies_to: { price_types: ['one_off'] } } : {}),
      });
      if (res.status === 201) w.grants.push(res.body.data.id);
      return res;
    }
    case 'invoice': {
      const res = await acme.api('POST', '/v1/invoices', {
        customer_id: w.customer,
        currency: o.currency,
        lines: o.amounts.map((unit_amount, i) => ({ description: `Line ${i + 1}`, unit_amount })),
      });
      if (res.status === 201) w.invoices.push(res.body.data.id);
      return res;
    }
    case 'pay_top_up': {
      const id = pick(w.grants, o.grant);
      if (!id) return null;
      const grant = (await acme.api('GET', `/v1/credit-grants/${id}`)).body.data;
      if (!grant.invoice_id) return null;
      return payInFull(grant.invoice_id);
    }
    case 'pay_top_up_part': {
      // A part of what a top-up still asks: an advance of its own date, with its own voucher (decision 0840).
      const id = pick(w.grants, o.grant);
      if (!id) return null;
      const grant = (await acme.api('GET', `/v1/credit-grants/${id}`)).body.data;
      if (!grant.invoice_id) return null;
      const invoice = (await acme.api('GET', `/v1/invoices/${grant.invoice_id}`)).body.data;
      if (invoice.status !== 'open') return null;
      const amount = Math.max(1, Math.floor((invoice.amount_due * o.share) / 100));
      return acme.api('POST', '/v1/payments/offline', {
        customer_id: w.customer,
        invoice_id: invoice.id,
        amount,
        currency: invoice.currency,
        payment_type: 'bank_transfer',
      });
    }
    case 'pay': {
      const id = pick(w.invoices, o.invoice);
      if (!id) return null;
      const invoice = (await acme.api('GET', `/v1/invoices/${id}`)).body.data;
      const amount = Math.max(1, Math.floor((invoice.amount_due * o.share) / 100));
      return acme.api('POST', '/v1/payments/offline', {
        customer_id: w.customer,
        invoice_id: id,
        amount,
        currency: invoice.currency,
        payment_type: 'bank_transfer',
      });
    }
    case 'void': {
      const id = pick(w.grants, o.grant);
      return id ? acme.api('POST', `/v1/credit-grants/${id}/void`) : null;
    }
    case 'auto_top_up':
      return acme.api('PUT', `/v1/customers/${w.customer}/auto-top-up`, { enabled: true, threshold: o.threshold, amount: o.amount, currency: 'INR' });
    case 'rate_moves':
      return acme.api('PUT', `/v1/entities/${entityId}/exchange-rates`, { currency: 'USD', rate: o.rate });
    case 'time_passes_a_month':
      // Parts of one top-up received in different months: 11A of each month, 11B later.
      t.clock.advanceDays(31);
      await t.kosh.worker.drain();
      return null;
    case 'time_passes':
      t.clock.advanceDays(o.days);
      await t.kosh.worker.drain();
      return null;
  }
}

async function payInFull(invoiceId: string) {
  const invoice = (await acme.api('GET', `/v1/invoices/${invoiceId}`)).body.data;
  if (invoice.status !== 'open') return null;
  return acme.api('POST', '/v1/payments/offline', {
    customer_id: invoice.customer_id,
    invoice_id: invoiceId,
    amount: invoice.amount_due,
    currency: invoice.currency,
    payment_type: 'bank_transfer',
  });
}

type Net = { invoice_id: string | null; account_code: number; net: number };

async function checkBooks(w: World, after: string) {
  const db = t.database.db;
  const lines = (
    await sql<Net>`
      SELECT l.invoice_id, l.account_code, sum(l.credit - l.debit)::bigint AS net FROM journal_lines l
      WHERE l.tenant_id = ${acme.tenantId} AND (l.customer_id = ${w.customer} OR l.invoice_id IN (SELECT id FROM invoices WHERE tenant_id = ${acme.tenantId} AND customer_id = ${w.customer}))
      GROUP BY l.invoice_id, l.account_code`.execute(db)
  ).rows.map((r) => ({ ...r, net: Number(r.net) }));
  const net = (code: number, invoiceId: string | null) =>
    lines.filter((l) => l.account_code === code && l.invoice_id === invoiceId).reduce((s, l) => s + l.net, 0);
  const grants = await db.selectFrom('credit_grants').selectAll().where('tenant_id', '=', acme.tenantId).where('customer_id', '=', w.customer).execute();
  const movements = await db
    .selectFrom('credit_grant_movements')
    .selectAll()
    .where('tenant_id', '=', acme.tenantId)
    .where('customer_id', '=', w.customer)
    .execute();
  const invoices = await db.selectFrom('invoices').selectAll().where('tenant_id', '=', acme.tenantId).where('customer_id', '=', w.customer).execute();
  const topUps = new Set(grants.filter((g) => g.category === 'paid').map((g) => g.invoice_id));
  const ctx = `after ${after}`;
  const vouchers = await db.selectFrom('customer_advances').selectAll().where('tenant_id', '=', acme.tenantId).where('customer_id', '=', w.customer).execute();
  // The GST the receipt vouchers of a grant charged so far: one per part received (decision 0840).
  const voucherTax = (grantId: string) =>
    vouchers.filter((v) => v.credit_grant_id === grantId).reduce((s, v) => s + Number(v.cgst_amount) + Number(v.sgst_amount) + Number(v.igst_amount), 0);

  // 1 and 2: prepaid liability per top-up, and nothing else in 2330.
  let liability = 0;
  for (const g of grants) {
    expect(g.remaining, ctx).toBeGreaterThanOrEqual(0);
    expect(g.remaining, ctx).toBeLessThanOrEqual(g.amount);
    if (g.category !== 'paid') continue;
    // Pending: the whole top-up (credit and GST) less the GST the vouchers of the parts received
    // so far took out; once paid in full, 2330 is the credit's unspent value.
    const topUpTotal = invoices.find((i) => i.id === g.invoice_id)?.total ?? 0;
    const unspent = g.status === 'pending' ? topUpTotal - voucherTax(g.id) : g.status === 'active' ? g.remaining : 0;
    expect(net(2330, g.invoice_id), `${ctx}: 2330 of grant ${g.id} (${g.status})`).toBe(unspent);
    liability += unspent;
  }
  for (const l of lines) if (l.account_code === 2330) expect(topUps.has(l.invoice_id), `${ctx}: a 2330 line not of a top-up`).toBe(true);
  expect(
    lines.filter((l) => l.account_code === 2330).reduce((s, l) => s + l.net, 0),
    ctx,
  ).toBe(liability);

  // 3: a top-up's tax is adjusted at most once, in full when depleted.
  for (const g of grants) {
    if (g.category !== 'paid') continue;
    const invoice = invoices.find((i) => i.id === g.invoice_id)!;
    const adjusted = movements.filter((m) => m.grant_id === g.id && m.kind === 'drawn').reduce((s, m) => s + m.tax_amount, 0);
    const tax = g.cgst_amount + g.sgst_amount + g.igst_amount;
    expect(adjusted, ctx).toBeLessThanOrEqual(tax);
    if (g.status === 'depleted') expect(adjusted, ctx).toBe(tax);
    // The tax is due from each payment on (its voucher), never on an unpaid or voided top-up.
    const owed = invoice.status === 'void' ? 0 : g.status === 'pending' ? voucherTax(g.id) : tax - adjusted;
    expect(net(2100, g.invoice_id) + net(2110, g.invoice_id) + net(2120, g.invoice_id), `${ctx}: output tax of top-up ${invoice.number}`).toBe(owed);
  }

  // Never two auto top-ups in flight: at most one unpaid auto top-up invoice.
  const inFlight = grants.filter((g) => g.name === 'Auto top-up' && g.status === 'pending');
  expect(inFlight.length, `${ctx}: auto top-ups in flight`).toBeLessThanOrEqual(1);

  // 6: one receipt voucher per part received against a top-up, adding up to what was received
  // (the whole top-up, and the grant's split, once paid); adjusted exactly by its grant's draws;
  // no other advance.
  const adjustments = await db
    .selectFrom('advance_movements as m')
    .innerJoin('customer_advances as a', (j) => j.onRef('a.tenant_id', '=', 'm.tenant_id').onRef('a.id', '=', 'm.advance_id'))
    .select(['a.credit_grant_id', 'm.kind', 'm.invoice_id', 'm.subtotal', 'm.cgst_amount', 'm.sgst_amount', 'm.igst_amount'])
    .where('m.tenant_id', '=', acme.tenantId)
    .where('a.customer_id', '=', w.customer)
    .execute();
  for (const v of vouchers) {
    expect(v.credit_grant_id, `${ctx}: an advance that is not a top-up's voucher`).not.toBeNull();
    const heads = [v.subtotal, v.cgst_amount, v.sgst_amount, v.igst_amount, v.balance, v.open_subtotal, v.open_cgst, v.open_sgst, v.open_igst].map(Number);
    expect(
      heads.every((x) => x >= 0),
      `${ctx}: voucher ${v.number} ${JSON.stringify(heads)}`,
    ).toBe(true);
    expect(Number(v.subtotal) + Number(v.cgst_amount) + Number(v.sgst_amount) + Number(v.igst_amount), `${ctx}: voucher ${v.number}`).toBe(Number(v.amount));
  }
  const sum = <T>(rows: T[], f: (r: T) => number) => rows.reduce((s, r) => s + Number(f(r)), 0);
  for (const g of grants) {
    if (g.category !== 'paid') continue;
    const mine = vouchers.filter((v) => v.credit_grant_id === g.id);
    const invoice = invoices.find((i) => i.id === g.invoice_id)!;
    const received = invoice.status === 'void' ? 0 : invoice.total - invoice.amount_due;
    expect(
      sum(mine, (v) => v.amount),
      `${ctx}: vouchers of grant ${g.id} (${g.status}) = what was received`,
    ).toBe(received);
    if (g.status === 'pending' || g.status === 'voided') continue;
    expect(
      {
        amount: sum(mine, (v) => v.amount),
        subtotal: sum(mine, (v) => v.subtotal),
        cgst: sum(mine, (v) => v.cgst_amount),
        sgst: sum(mine, (v) => v.sgst_amount),
        igst: sum(mine, (v) => v.igst_amount),
      },
      `${ctx}: vouchers of grant ${g.id}`,
    ).toEqual({ amount: invoice.total, subtotal: g.amount, cgst: g.cgst_amount, sgst: g.sgst_amount, igst: g.igst_amount });
    const drawn = movements.filter((m) => m.grant_id === g.id && m.kind === 'drawn');
    const adjusted = adjustments.filter((a) => a.credit_grant_id === g.id);
    expect(
      adjusted.every((a) => a.kind === 'applied'),
      ctx,
    ).toBe(true);
    expect(
      {
        value: sum(adjusted, (a) => a.subtotal),
        tax: sum(adjusted, (a) => a.cgst_amount + a.sgst_amount + a.igst_amount),
        invoices: [...new Set(adjusted.map((a) => a.invoice_id))].sort(),
      },
      `${ctx}: 11B adjustments of grant ${g.id} = its draws`,
    ).toEqual({
      value: drawn.reduce((s, m) => s + m.amount, 0),
      tax: drawn.reduce((s, m) => s + m.tax_amount, 0),
      invoices: [...new Set(drawn.map((m) => m.invoice_id))].sort(),
    });
  }
  const promotional = grants.filter((g) => g.category === 'promotional').map((g) => g.id);
  if (promotional.length > 0) {
    const entries = await db
      .selectFrom('journal_entries')
      .select('id')
      .where('tenant_id', '=', acme.tenantId)
      .where('reference_id', 'in', promotional)
      .execute();
    expect(entries, `${ctx}: entries of promotional grants`).toEqual([]);
  }

  // 7: the tenant's prepaid liability is the sum of all unspent paid grants (unpaid top-ups whole).
  const whole = await sql<{ books: string | null; grants: string | null }>`
    SELECT (SELECT sum(credit - debit) FROM journal_lines WHERE tenant_id = ${acme.tenantId} AND account_code = 2330) AS books,
           (SELECT sum(CASE g.status WHEN 'pending' THEN i.total - coalesce((SELECT sum(v.tax_amount) FROM customer_advances v
                                                     WHERE v.tenant_id = g.tenant_id AND v.credit_grant_id = g.id), 0)
                                    ELSE g.remaining END) FROM credit_grants g
              JOIN invoices i ON i.tenant_id = g.tenant_id AND i.id = g.invoice_id
              WHERE g.tenant_id = ${acme.tenantId} AND g.category = 'paid' AND g.status IN ('pending', 'active')) AS grants`.execute(db);
  expect(Number(whole.rows[0]!.books ?? 0), `${ctx}: tenant-wide 2330`).toBe(Number(whole.rows[0]!.grants ?? 0));

  // 4 and 5: receivables, revenue and promotional discounts per invoice.
  for (const i of invoices) {
    expect(0 - net(1100, i.id), `${ctx}: receivables of ${i.number}`).toBe(i.status === 'void' || i.status === 'draft' ? 0 : i.amount_due);
    if (topUps.has(i.id) || i.status === 'void') continue;
    expect(net(4000, i.id), `${ctx}: revenue of ${i.number}`).toBe(i.subtotal);
    const promotional = movements
      .filter((m) => m.invoice_id === i.id && m.kind === 'drawn' && grants.find((g) => g.id === m.grant_id)?.category === 'promotional')
      .reduce((s, m) => s + m.amount, 0);
    expect(i.discount_amount, `${ctx}: discount of ${i.number}`).toBe(promotional);
  }
}

/**
 * 8: GSTR-3B 3.1(a) per month = the net movement of the output-tax accounts that month, head by
 * head (the tenant's one entity), for every month with entries from the month the history began
 * (IST) on. A history touches only its own customer's documents, so the months of earlier
 * histories cannot move; checking them again would make each history slower than the last.
 */
async function checkGstr3b(after: string, since: Date) {
  const db = t.database.db;
  const [entity] = (await acme.api('GET', '/v1/entities')).body.data as { id: string }[];
  const months = await sql<{ month: string }>`
    SELECT DISTINCT to_char(e.posted_at AT TIME ZONE 'Asia/Kolkata', 'MMYYYY') AS month FROM journal_entries e
    WHERE e.tenant_id = ${acme.tenantId}
      AND to_char(e.posted_at AT TIME ZONE 'Asia/Kolkata', 'YYYYMM') >= to_char(${since}::timestamptz AT TIME ZONE 'Asia/Kolkata', 'YYYYMM')`.execute(db);
  for (const { month } of months.rows) {
    const [mm, yyyy] = [Number(month.slice(0, 2)), Number(month.slice(2))];
    const from = new Date(`${yyyy}-${String(mm).padStart(2, '0')}-01T00:00:00+05:30`);
    const to = new Date(`${mm === 12 ? yyyy + 1 : yyyy}-${String(mm === 12 ? 1 : mm + 1).padStart(2, '0')}-01T00:00:00+05:30`);
    const ledger = await sql<{ account_code: number; net: string }>`
      SELECT l.account_code, sum(coalesce(l.functional_credit, l.credit) - coalesce(l.functional_debit, l.debit))::text AS net
      FROM journal_lines l JOIN journal_entries e ON e.tenant_id = l.tenant_id AND e.id = l.entry_id
      WHERE l.tenant_id = ${acme.tenantId} AND l.account_code IN (2100, 2110, 2120) AND e.posted_at >= ${from} AND e.posted_at < ${to}
      GROUP BY l.account_code`.execute(db);
    const net = (code: number) => Number(ledger.rows.find((r) => r.account_code === code)?.net ?? 0);
    const res = await acme.api('GET', `/v1/gst/gstr3b?entity_id=${entity!.id}&period=${month}`);
    expect(res.status, res.text).toBe(200);
    const row = res.body.data.sup_details.osup_det as { camt: number; samt: number; iamt: number };
    const carried = (res.body.data.carried_in?.osup_det ?? {}) as { camt?: number; samt?: number; iamt?: number };
    const forward = (res.body.data.carry_forward?.osup_det ?? {}) as { camt?: number; samt?: number; iamt?: number };
    const head = (k: 'camt' | 'samt' | 'iamt') => Math.round(row[k] * 100) - Math.round((forward[k] ?? 0) * 100) + Math.round((carried[k] ?? 0) * 100);
    expect(
      { cgst: head('camt'), sgst: head('samt'), igst: head('iamt') },
      `after ${after}: GSTR-3B ${month} = net movement of the output-tax accounts`,
    ).toEqual({ cgst: net(2100), sgst: net(2110), igst: net(2120) });
  }
}

describe('prepaid credit invariants', () => {
  it(
    `hold over ${RUNS} random histories of ${STEPS} steps`,
    async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: STEPS }), async (ops) => {
          const since = t.clock.now();
          const world: World = { customer: await createCustomer(acme), grants: [], invoices: [] };
          for (const o of ops) {
            const res = await step(world, o);
            // Auto top-ups create grants the history did not ask for: pick among all of them.
            world.grants = (await acme.api('GET', `/v1/customers/${world.customer}/credit-grants`)).body.data.map((g: { id: string }) => g.id);
            if (res) expect(res.status, `${o.kind}: ${res.text}`).toBeLessThan(500);
            await checkBooks(world, o.kind);
          }
          await checkGstr3b('the history', since);
        }),
        propertyRuns(),
      );
    },
    Math.max(60_000, RUNS * STEPS * 2_000),
  );
});
