import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { startTestKosh, type Tenant, type TestKosh } from '../../../test/support/harness.js';
import { createCustomer, createInvoice, gstinFor } from '../../../test/support/billing.js';
import { createPlan, invoicesOf, pay, subscribe, travelTo } from '../../../test/subscriptions/helpers.js';

/**
 * Credit grants (DESIGN §23). The tenant is registered in Karnataka (29) and its customers give no
 * state, so every invoice is intra-state: GST 18 % = CGST 9 % + SGST 9 %.
 */
let t: TestKosh;
let acme: Tenant;

beforeAll(async () => {
  t = await startTestKosh();
  acme = await t.registerTenant({ gstin: gstinFor('29') });
});
afterAll(() => t.close());

const grant = (customer: string, body: Record<string, unknown>) => acme.api('POST', `/v1/customers/${customer}/credit-grants`, { currency: 'INR', ...body });

async function grantOk(customer: string, body: Record<string, unknown>) {
  const res = await grant(customer, body);
  expect(res.status, res.text).toBe(201);
  return res.body.data;
}

async function getGrant(id: string) {
  const res = await acme.http.GET('/v1/credit-grants/{id}', { path: { id } });
  expect(res.status, res.text).toBe(200);
  return res.body.data;
}

async function getInvoice(id: string) {
  const res = await acme.http.GET('/v1/invoices/{id}', { path: { id } });
  expect(res.status, res.text).toBe(200);
  return res.body.data;
}

/** An account's balance in the tenant's ledger (credit − debit), optionally for one invoice's tag. */
async function balance(code: number, tags: { invoiceId?: string; kind?: string } = {}): Promise<number> {
  const { rows } = await sql<{ n: string | null }>`
    SELECT sum(l.credit - l.debit) AS n FROM journal_lines l JOIN journal_entries e ON e.tenant_id = l.tenant_id AND e.id = l.entry_id
    WHERE l.tenant_id = ${acme.tenantId} AND l.account_code = ${code}
      AND (${tags.invoiceId ?? null}::uuid IS NULL OR l.invoice_id = ${tags.invoiceId ?? null}::uuid)
      AND (${tags.kind ?? null}::text IS NULL OR e.kind = ${tags.kind ?? null}::text)`.execute(t.database.db);
  return Number(rows[0]?.n ?? 0);
}

const PREPAID = 2330;
const RECEIVABLES = 1100;
const REVENUE = 4000;
const CGST = 2100;
const SGST = 2110;
const EXPIRED_INCOME = 4100;

describe('credit grants', () => {
  describe('promotional', () => {
    it('is a discount before GST: ₹1,000 of service with ₹300 of credit is taxed on ₹700', async () => {
      const customer = await createCustomer(acme);
      const promo = await grantOk(customer, { category: 'promotional', amount: 30_000, name: 'Launch offer' });
      expect(promo).toMatchObject({
        category: 'promotional',
        status: 'active',
        amount: 30_000,
        remaining: 30_000,
        tax_amount: 0,
        priority: 50,
        invoice_id: null,
      });

      // 100 000 − 30 000 = 70 000 taxable; CGST 9 % = 6 300, SGST 6 300; total 82 600.
      const invoice = await createInvoice(acme, customer, [100_000]);
      expect(invoice).toMatchObject({ status: 'open', discount_amount: 30_000, subtotal: 70_000, tax_amount: 12_600, total: 82_600, amount_due: 82_600 });
      expect(invoice.lines[0]).toMatchObject({ discount_amount: 30_000, amount: 70_000 });
      expect(await getGrant(promo.id)).toMatchObject({ status: 'depleted', remaining: 0 });
      // Revenue is the discounted value; nothing is ever booked to prepaid credit for a promotion.
      expect(await balance(REVENUE, { invoiceId: invoice.id })).toBe(70_000);
      expect(await balance(PREPAID)).toBe(0);
    });

    it('draws by priority, then soonest expiry, and leaves the rest', async () => {
      const customer = await createCustomer(acme);
      const late = await grantOk(customer, { category: 'promotional', amount: 5_000 });
      const soon = await grantOk(customer, { category: 'promotional', amount: 5_000, expires_at: '2026-05-01T00:00:00Z' });
      const first = await grantOk(customer, { category: 'promotional', amount: 5_000, priority: 10 });
      // 8 000 of lines: priority 10 gives 5 000, then the one expiring first 3 000; 0 taxable left… of 8 000 − 8 000.
      const invoice = await createInvoice(acme, customer, [8_000]);
      expect(invoice).toMatchObject({ discount_amount: 8_000, subtotal: 0, total: 0, status: 'paid' });
      expect((await getGrant(first.id)).remaining).toBe(0);
      expect((await getGrant(soon.id)).remaining).toBe(2_000);
      expect((await getGrant(late.id)).remaining).toBe(5_000);
    });

    it('applies only to the lines applies_to names', async () => {
      const customer = await createCustomer(acme);
      const fixedOnly = await grantOk(customer, { category: 'promotional', amount: 5_000, applies_to: { price_types: ['fixed'] } });
      // A line without a price is one_off: the grant does not touch it.
      const invoice = await createInvoice(acme, customer, [10_000]);
      expect(invoice).toMatchObject({ discount_amount: 0, subtotal: 10_000 });
      expect((await getGrant(fixedOnly.id)).remaining).toBe(5_000);
    });

    it('is drawn in the billing run (the batch path) the same way: a ₹100 plan with ₹30 credit bills ₹70 + GST', async () => {
      const plan = await createPlan(acme, { amount: 10_000 });
      const customer = await createCustomer(acme);
      const sub = await subscribe(acme, { customer_id: customer, plan_id: plan.id });
      await pay(acme, (await invoicesOf(acme, sub.id))[0]);
      const promo = await grantOk(customer, { category: 'promotional', amount: 3_000, applies_to: { plan_ids: [plan.id] } });
      await travelTo(t, sub.current_period_end);
      const renewal = (await invoicesOf(acme, sub.id))[1];
      // 10 000 − 3 000 = 7 000; GST 630 + 630; total 8 260.
      expect(renewal).toMatchObject({ billing_reason: 'subscription_cycle', discount_amount: 3_000, subtotal: 7_000, tax_amount: 1_260, total: 8_260 });
      expect(await getGrant(promo.id)).toMatchObject({ status: 'depleted', remaining: 0 });
      t.clock.set('2026-04-01T00:00:00Z');
    });

    it('is voided at once, and a void answers 409 the second time', async () => {
      const customer = await createCustomer(acme);
      const promo = await grantOk(customer, { category: 'promotional', amount: 1_000 });
      const voided = await acme.http.POST('/v1/credit-grants/{id}/void', { path: { id: promo.id } });
      expect(voided.status, voided.text).toBe(200);
      expect(voided.body.data).toMatchObject({ status: 'voided', remaining: 0 });
      expect((await acme.http.POST('/v1/credit-grants/{id}/void', { path: { id: promo.id } })).status).toBe(409);
      expect((await createInvoice(acme, customer, [1_000])).discount_amount).toBe(0);
    });
  });

  describe('paid', () => {
    it('is sold as an advance: GST on its receipt voucher when paid, spendable then, and settles later invoices with no second GST', async () => {
      const customer = await createCustomer(acme);
      const paid = await grantOk(customer, { category: 'paid', amount: 100_000, name: 'Wallet' });
      expect(paid).toMatchObject({ category: 'paid', status: 'pending', amount: 100_000, remaining: 100_000, tax_amount: 18_000 });
      // The top-up asks for 100 000 + the 18 000 of GST its voucher will charge = 118 000. It is no
      // tax invoice (decision 0700): no GST lines, and the whole total is prepaid credit until paid.
      const topUp = await getInvoice(paid.invoice_id!);
      expect(topUp).toMatchObject({
        billing_reason: 'credit_top_up',
        tax_type: '',
        subtotal: 118_000,
        cgst_amount: 0,
        sgst_amount: 0,
        total: 118_000,
        status: 'open',
      });
      expect(topUp.lines.map((l: { amount: number }) => l.amount)).toEqual([100_000, 18_000]);
      expect(await balance(PREPAID, { invoiceId: topUp.id })).toBe(118_000);
      expect(await balance(CGST, { invoiceId: topUp.id })).toBe(0);
      expect(await balance(REVENUE, { invoiceId: topUp.id })).toBe(0);

      // Not yet paid: an invoice now draws nothing.
      const early = await createInvoice(acme, customer, [1_000]);
      expect(early).toMatchObject({ amount_credited: 0, amount_due: 1_180 });

      await pay(acme, topUp);
      expect(await getGrant(paid.id)).toMatchObject({ status: 'active', remaining: 100_000 });
      // Paid: the receipt voucher charges the 18 000, taken out of 2330 (Dr 2330 / Cr 2100, 2110).
      expect(await balance(PREPAID, { invoiceId: topUp.id })).toBe(100_000);
      expect(await balance(CGST, { invoiceId: topUp.id })).toBe(9_000);

      // 50 000 of service: GST 4 500 + 4 500, total 59 000. The draw is 50 000 of credit plus the
      // 9 000 of GST the top-up's voucher already paid on it: 59 000 settled, invoice paid.
      const first = await createInvoice(acme, customer, [50_000]);
      expect(first).toMatchObject({ total: 59_000, amount_credited: 59_000, amount_due: 0, status: 'paid', subtotal: 50_000 });
      expect(await getGrant(paid.id)).toMatchObject({ status: 'active', remaining: 50_000 });
      // Output tax: 9 000 + 9 000 on the voucher, 4 500 + 4 500 on the invoice, minus the 4 500 + 4 500
      // adjusted at the draw = 18 000 in all: 18 % of the 100 000 paid for, charged once.
      expect(await balance(CGST, { invoiceId: topUp.id })).toBe(9_000 - 4_500);
      expect(await balance(CGST, { invoiceId: first.id })).toBe(4_500);
      expect(await balance(SGST, { invoiceId: topUp.id })).toBe(9_000 - 4_500);
      expect(await balance(RECEIVABLES, { invoiceId: first.id })).toBe(0);
      expect(await balance(PREPAID)).toBe(50_000);
      expect(await balance(REVENUE, { invoiceId: first.id })).toBe(50_000);

      // 80 000: total 94 400; the last 50 000 of credit settles 50 000 + 9 000 = 59 000; 35 400 stays due.
      const second = await createInvoice(acme, customer, [80_000]);
      expect(second).toMatchObject({ total: 94_400, amount_credited: 59_000, amount_due: 35_400, status: 'open' });
      expect(await getGrant(paid.id)).toMatchObject({ status: 'depleted', remaining: 0 });
      expect(await balance(PREPAID)).toBe(0);
      // The top-up's tax is fully adjusted; each later invoice keeps its own.
      expect(await balance(CGST, { invoiceId: topUp.id })).toBe(0);
      expect(await balance(CGST, { invoiceId: second.id })).toBe(7_200);

      const list = await acme.http.GET('/v1/customers/{id}/credit-grants', { path: { id: customer } });
      expect(list.status).toBe(200);
      expect(list.body.data.map((g: { id: string }) => g.id)).toEqual([paid.id]);
      expect(list.body.balances).toEqual([]);
    });

    it('lists grants with the spendable balance per currency', async () => {
      const customer = await createCustomer(acme);
      const paid = await grantOk(customer, { category: 'paid', amount: 10_000 });
      await grantOk(customer, { category: 'promotional', amount: 2_500 });
      await pay(acme, await getInvoice(paid.invoice_id!));
      const list = await acme.http.GET('/v1/customers/{id}/credit-grants', { path: { id: customer } });
      expect(list.body.balances).toEqual([{ currency: 'INR', paid: 10_000, promotional: 2_500 }]);
    });

    it('forfeits the unspent balance to income at expiry; its GST stays paid', async () => {
      const customer = await createCustomer(acme);
      const paid = await grantOk(customer, { category: 'paid', amount: 20_000, expires_at: new Date(t.clock.now().getTime() + 2 * 86_400_000).toISOString() });
      await pay(acme, await getInvoice(paid.invoice_id!));
      const before = await balance(EXPIRED_INCOME);
      t.clock.advanceDays(3);
      await t.kosh.worker.drain();
      expect(await getGrant(paid.id)).toMatchObject({ status: 'expired', remaining: 0 });
      // Dr 2330 20 000 / Cr 4100 20 000; the 3 600 of GST on the top-up is not touched.
      expect((await balance(EXPIRED_INCOME)) - before).toBe(20_000);
      expect(await balance(PREPAID, { invoiceId: paid.invoice_id! })).toBe(0);
      expect(await balance(CGST, { invoiceId: paid.invoice_id! })).toBe(1_800);
      // Expired credit is not drawn.
      expect((await createInvoice(acme, customer, [1_000])).amount_credited).toBe(0);
      t.clock.set('2026-04-01T00:00:00Z');
    });

    it('voids an unpaid top-up with its grant, and refuses to void one paid for', async () => {
      const customer = await createCustomer(acme);
      const pending = await grantOk(customer, { category: 'paid', amount: 5_000 });
      const voided = await acme.http.POST('/v1/credit-grants/{id}/void', { path: { id: pending.id } });
      expect(voided.status, voided.text).toBe(200);
      expect(voided.body.data).toMatchObject({ status: 'voided', remaining: 0 });
      expect((await getInvoice(pending.invoice_id!)).status).toBe('void');
      // The invoice's void entry reversed the prepaid credit it booked.
      expect(await balance(PREPAID, { invoiceId: pending.invoice_id! })).toBe(0);

      const bought = await grantOk(customer, { category: 'paid', amount: 5_000 });
      await pay(acme, await getInvoice(bought.invoice_id!));
      const refused = await acme.http.POST('/v1/credit-grants/{id}/void', { path: { id: bought.id } });
      expect(refused.status).toBe(409);
      expect(refused.error!.reason).toBe('credit_grant_active');
    });

    it("appears in the customer's balance and its statement: granted when spendable, drawn by invoices", async () => {
      const customer = await createCustomer(acme);
      // A paid grant of 20 000 (top-up 23 600 with GST) and a promotional one of 3 000.
      const paid = await grantOk(customer, { category: 'paid', amount: 20_000 });
      const promo = await grantOk(customer, { category: 'promotional', amount: 3_000 });
      const before = await acme.http.GET('/v1/customers/{id}/balance', { path: { id: customer } });
      // The paid grant is not spendable until its top-up is paid: only the promotional 3 000 shows.
      expect(before.body.data.balances).toEqual([
        { currency: 'INR', available: 3_000, sources: { advances: 0, credit_notes: 0, prepaid_credit: 0, promotional_credit: 3_000 } },
      ]);
      const topUp = await getInvoice(paid.invoice_id!);
      await pay(acme, topUp);
      // 10 000 of service: the promotional 3 000 comes off before GST (7 000 + 1 260 = 8 260), and
      // the paid grant settles 7 000 of credit with its 1 260 of GST already charged.
      const invoice = await createInvoice(acme, customer, [10_000]);
      expect(invoice).toMatchObject({ subtotal: 7_000, total: 8_260, amount_due: 0, status: 'paid' });
      const after = await acme.http.GET('/v1/customers/{id}/balance', { path: { id: customer } });
      expect(after.body.data.balances).toEqual([
        { currency: 'INR', available: 13_000, sources: { advances: 0, credit_notes: 0, prepaid_credit: 13_000, promotional_credit: 0 } },
      ]);
      const statement = await acme.http.GET('/v1/customers/{id}/balance-transactions', { path: { id: customer }, query: { limit: 10 } });
      expect(statement.status, statement.text).toBe(200);
      const rows = statement.body.data.map((r: { source: string; type: string; amount: number; document: { type: string; id: string } }) => [
        r.source,
        r.type,
        r.amount,
        r.document.type,
        r.document.id,
      ]);
      expect(rows).toEqual(
        expect.arrayContaining([
          ['promotional_credit', 'credit_granted', 3_000, 'credit_grant', promo.id],
          ['promotional_credit', 'credit_drawn', -3_000, 'invoice', invoice.id],
          ['prepaid_credit', 'credit_granted', 20_000, 'invoice', topUp.id],
          ['prepaid_credit', 'credit_drawn', -7_000, 'invoice', invoice.id],
        ]),
      );
      expect(rows).toHaveLength(4);

      // A paid grant voided with its unpaid top-up was never spendable: no row, no balance.
      const other = await createCustomer(acme);
      const pending = await grantOk(other, { category: 'paid', amount: 5_000 });
      expect((await acme.http.POST('/v1/credit-grants/{id}/void', { path: { id: pending.id } })).status).toBe(200);
      const none = await acme.http.GET('/v1/customers/{id}/balance-transactions', { path: { id: other } });
      expect(none.body.data).toEqual([]);
    });

    it('never overspends under 30 concurrent finalizations', async () => {
      const customer = await createCustomer(acme);
      const paid = await grantOk(customer, { category: 'paid', amount: 100_000 });
      await pay(acme, await getInvoice(paid.invoice_id!));
      const drafts = [];
      for (let i = 0; i < 30; i++) drafts.push(await createInvoice(acme, customer, [5_000], { auto_finalize: false }));
      // Each invoice: 5 000 + 900 GST = 5 900, settled by 5 000 of credit + its 900 of top-up GST.
      // 100 000 of credit covers exactly 20 of the 30.
      const results = await Promise.all(drafts.map((d) => acme.http.POST('/v1/invoices/{id}/finalize', { path: { id: d.id } })));
      expect(results.map((r) => r.status)).toEqual(Array(30).fill(200));
      const finals = await Promise.all(drafts.map((d) => getInvoice(d.id)));
      expect(finals.filter((i) => i.status === 'paid' && i.amount_credited === 5_900)).toHaveLength(20);
      expect(finals.filter((i) => i.status === 'open' && i.amount_credited === 0)).toHaveLength(10);
      expect(await getGrant(paid.id)).toMatchObject({ status: 'depleted', remaining: 0 });
      expect(await balance(PREPAID, { invoiceId: paid.invoice_id! })).toBe(0);
    });
  });

  describe('promotional under concurrency', () => {
    it('never overspends under 30 concurrent finalizations', async () => {
      const customer = await createCustomer(acme);
      const promo = await grantOk(customer, { category: 'promotional', amount: 20_000 });
      const drafts = [];
      for (let i = 0; i < 30; i++) drafts.push(await createInvoice(acme, customer, [1_000], { auto_finalize: false }));
      // 20 000 of promotion covers exactly 20 of the 30 invoices of 1 000; the others pay in full.
      const results = await Promise.all(drafts.map((d) => acme.http.POST('/v1/invoices/{id}/finalize', { path: { id: d.id } })));
      expect(results.map((r) => r.status)).toEqual(Array(30).fill(200));
      const finals = await Promise.all(drafts.map((d) => getInvoice(d.id)));
      expect(finals.filter((i) => i.discount_amount === 1_000 && i.total === 0)).toHaveLength(20);
      expect(finals.filter((i) => i.discount_amount === 0 && i.total === 1_180)).toHaveLength(10);
      expect(await getGrant(promo.id)).toMatchObject({ status: 'depleted', remaining: 0 });
    });
  });

  describe('auto top-up', () => {
    it('sells one top-up when the paid balance falls below the threshold, never two in flight', async () => {
      const customer = await createCustomer(acme);
      const first = await grantOk(customer, { category: 'paid', amount: 10_000 });
      await pay(acme, await getInvoice(first.invoice_id!));
      const put = await acme.http.PUT('/v1/customers/{id}/auto-top-up', {
        path: { id: customer },
        body: { enabled: true, threshold: 5_000, amount: 20_000, currency: 'INR' },
      });
      expect(put.status, put.text).toBe(200);
      expect(put.body.data).toMatchObject({ enabled: true, threshold: 5_000, amount: 20_000, in_flight_invoice_id: null });

      // 6 000 + 1 080 GST, settled by 6 000 of credit + 1 080 of its top-up GST: 4 000 left < 5 000.
      await createInvoice(acme, customer, [6_000]);
      const grants = (await acme.http.GET('/v1/customers/{id}/credit-grants', { path: { id: customer } })).body.data;
      const auto = grants.find((g: { name: string | null }) => g.name === 'Auto top-up');
      expect(auto).toMatchObject({ category: 'paid', status: 'pending', amount: 20_000, tax_amount: 3_600 });
      // 20 000 + 3 600 GST, charged automatically.
      expect(await getInvoice(auto!.invoice_id!)).toMatchObject({ total: 23_600, collection_method: 'charge_automatically', status: 'open' });
      expect((await acme.http.GET('/v1/customers/{id}/auto-top-up', { path: { id: customer } })).body.data.in_flight_invoice_id).toBe(auto!.invoice_id);

      // Another draw (1 000 + 180: 3 000 left) while the first top-up is unpaid: no second one.
      await createInvoice(acme, customer, [1_000]);
      const after = (await acme.http.GET('/v1/customers/{id}/credit-grants', { path: { id: customer } })).body.data;
      expect(after.filter((g: { name: string | null }) => g.name === 'Auto top-up')).toHaveLength(1);

      // Paid: the grant is spendable and the auto top-up may run again.
      await pay(acme, await getInvoice(auto!.invoice_id!));
      expect((await acme.http.GET('/v1/customers/{id}/auto-top-up', { path: { id: customer } })).body.data.in_flight_invoice_id).toBeNull();
      expect((await acme.http.GET('/v1/customers/{id}/credit-grants', { path: { id: customer } })).body.balances).toEqual([
        { currency: 'INR', paid: 23_000, promotional: 0 },
      ]);
    });

    it('refuses bad settings', async () => {
      const customer = await createCustomer(acme);
      const body = { enabled: true, threshold: 5_000, amount: 20_000, currency: 'INR' };
      expect((await acme.http.PUT('/v1/customers/{id}/auto-top-up', { path: { id: customer }, body: { ...body, amount: 0 } })).status).toBe(400);
      expect((await acme.http.PUT('/v1/customers/{id}/auto-top-up', { path: { id: customer }, body: { ...body, threshold: -1 } })).status).toBe(400);
      expect(
        (
          await acme.http.PUT('/v1/customers/{id}/auto-top-up', {
            path: { id: customer },
            body: { ...body, payment_method_id: '00000000-0000-7000-8000-000000000000' },
          })
        ).status,
      ).toBe(404);
      expect((await acme.http.GET('/v1/customers/{id}/auto-top-up', { path: { id: customer } })).status).toBe(404);
      const other = await t.registerTenant();
      expect((await acme.http.PUT('/v1/customers/{id}/auto-top-up', { path: { id: await createCustomer(other) }, body })).status).toBe(404);
    });
  });

  describe('bad input', () => {
    it.each([
      ['a zero amount', { category: 'promotional', amount: 0 }, 'amount'],
      ['a negative amount', { category: 'paid', amount: -100 }, 'amount'],
      ['a fractional amount', { category: 'promotional', amount: 1.5 }, 'amount'],
      ['an unknown currency', { category: 'promotional', amount: 100, currency: 'XYZ' }, 'currency'],
      ['an unknown category', { category: 'gift', amount: 100 }, 'category'],
      ['an expiry in the past', { category: 'promotional', amount: 100, expires_at: '2020-01-01T00:00:00Z' }, 'expires_at'],
      ['an unknown price type', { category: 'promotional', amount: 100, applies_to: { price_types: ['weekly'] } }, 'applies_to.price_types.0'],
      ['a bad plan id', { category: 'promotional', amount: 100, applies_to: { plan_ids: ['x'] } }, 'applies_to.plan_ids.0'],
    ])('refuses %s with 400 naming the field', async (_label, body, field) => {
      const res = await grant(await createCustomer(acme), body);
      expect(res.status, res.text).toBe(400);
      expect(res.body.error.code).toBe('validation_failed');
      expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
    });

    it("answers 404 for a missing or another tenant's customer or grant", async () => {
      const other = await t.registerTenant();
      const theirs = await createCustomer(other);
      const res = await grant(theirs, { category: 'promotional', amount: 100 });
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('not_found');
      expect((await acme.http.GET('/v1/customers/{id}/credit-grants', { path: { id: theirs } })).status).toBe(404);
      const theirGrant = await other.http.POST('/v1/customers/{id}/credit-grants', {
        path: { id: theirs },
        body: { category: 'promotional', amount: 100, currency: 'INR' },
      });
      expect(theirGrant.status).toBe(201);
      expect((await acme.http.GET('/v1/credit-grants/{id}', { path: { id: theirGrant.body.data.id } })).status).toBe(404);
      expect((await acme.http.POST('/v1/credit-grants/{id}/void', { path: { id: theirGrant.body.data.id } })).status).toBe(404);
    });

    it('refuses a promotional grant in another currency than the customer is invoiced in, with 400 naming currency', async () => {
      const customer = await createCustomer(acme);
      await createInvoice(acme, customer, [1_000]);
      const res = await grant(customer, { category: 'promotional', amount: 500, currency: 'USD' });
      expect(res.status, res.text).toBe(400);
      expect(res.body.error.code).toBe('validation_failed');
      expect(res.body.error.details).toEqual([expect.objectContaining({ field: 'currency' })]);
      expect(res.body.error.details[0].message).toContain('INR');
      expect((await acme.http.GET('/v1/customers/{id}/credit-grants', { path: { id: customer } })).body.data).toEqual([]);
      // In the currency it is invoiced in: granted.
      expect((await grant(customer, { category: 'promotional', amount: 500, currency: 'INR' })).status).toBe(201);
    });

    it('refuses it for a customer whose running subscription bills in another currency', async () => {
      const plan = await createPlan(acme, { amount: 10_000 });
      const customer = await createCustomer(acme);
      await subscribe(acme, { customer_id: customer, plan_id: plan.id });
      const res = await grant(customer, { category: 'promotional', amount: 500, currency: 'EUR' });
      expect(res.status, res.text).toBe(400);
      expect(res.body.error.details.map((d: { field: string }) => d.field)).toEqual(['currency']);
    });

    it('draws a promotional grant only on invoices of its currency', async () => {
      const customer = await createCustomer(acme);
      await grantOk(customer, { category: 'promotional', amount: 500, currency: 'USD' });
      const entity = (await acme.http.GET('/v1/entities')).body.data[0]!.id;
      await acme.http.PUT('/v1/entities/{id}/exchange-rates', { path: { id: entity }, body: { currency: 'USD', rate: '83' } });
      expect((await createInvoice(acme, customer, [1_000])).discount_amount).toBe(0);
    });
  });
});
