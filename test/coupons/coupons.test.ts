import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestKosh, type Tenant, type TestKosh } from '../support/harness.js';
import { pdfText } from '../support/pdf-text.js';
import { createCustomer, createPlan, getSubscription, invoicesOf, karnatakaTenant, pay, retire, subscribe, travelTo } from '../subscriptions/helpers.js';

/**
 * Coupons (DESIGN §13): terms and limits, durations across renewals, discounts before GST per line
 * (never below zero), the ledger's net revenue, plan updates and immutable prices, seats.
 * The tenant is in Karnataka and so are the customers: CGST 9 % + SGST 9 %.
 */
let t: TestKosh;
let acme: Tenant;
let monthly: { id: string; code: string }; // 1 000.00 a month
let other: { id: string }; // 500.00 a month
let n = 0;
const code = (p: string) => `${p}-${(n += 1)}`;

beforeAll(async () => {
  t = await startTestKosh();
  acme = await karnatakaTenant(t);
  monthly = await createPlan(acme, { amount: 100_000 });
  other = await createPlan(acme, { amount: 50_000 });
});
afterAll(() => t.close());
beforeEach(() => t.clock.set('2026-04-01T00:00:00Z'));

async function coupon(body: Record<string, unknown>) {
  const res = await acme.http.POST('/v1/coupons', { body: { code: code('c'), duration: 'once', ...body } });
  expect(res.status, res.text).toBe(201);
  return res.body.data;
}

async function journalRevenue(invoiceId: string): Promise<{ revenue: number; receivable: number }> {
  const res = await acme.http.GET('/v1/invoices/{id}/journal-entries', { path: { id: invoiceId } });
  expect(res.status, res.text).toBe(200);
  const entry = res.body.data.find((e: { kind: string }) => e.kind === 'invoice.finalized');
  const sum = (code: number, side: 'debit' | 'credit') =>
    entry!.lines.filter((l: { account_code: number }) => l.account_code === code).reduce((s: number, l) => s + l[side], 0);
  return { revenue: sum(4000, 'credit'), receivable: sum(1100, 'debit') || entry!.lines.reduce((s: number, l: { debit: number }) => s + l.debit, 0) };
}

describe('coupons', () => {
  describe('create, list, get, patch', () => {
    it('creates a percent coupon and an amount coupon, lists them and patches name and active', async () => {
      const pct = await coupon({ percent_off: 12.5, duration: 'repeating', duration_in_months: 3, name: 'Launch' });
      expect(pct).toMatchObject({
        object: 'coupon',
        percent_off: 12.5,
        amount_off: null,
        currency: null,
        duration: 'repeating',
        duration_in_months: 3,
        times_redeemed: 0,
        active: true,
        valid: true,
      });
      const amt = await coupon({ amount_off: 20_000, currency: 'inr', duration: 'forever', max_redemptions: 5 });
      expect(amt).toMatchObject({ amount_off: 20_000, currency: 'INR', percent_off: null, max_redemptions: 5 });
      const list = await acme.http.GET('/v1/coupons', { query: { limit: 1 } });
      expect(list.status).toBe(200);
      expect(list.body).toMatchObject({ object: 'list', has_more: true });
      expect((await acme.http.GET('/v1/coupons/{id}', { path: { id: pct.id } })).body.data.code).toBe(pct.code);
      const patched = await acme.http.PATCH('/v1/coupons/{id}', { path: { id: pct.id }, body: { name: 'Renamed', active: false } });
      expect(patched.status, patched.text).toBe(200);
      expect(patched.body.data).toMatchObject({ name: 'Renamed', active: false, valid: false, percent_off: 12.5 });
      expect((await acme.http.POST('/v1/coupons', { body: { code: pct.code, percent_off: 5, duration: 'once' } })).status).toBe(409);
    });

    it.each([
      ['percent_off 0', { percent_off: 0 }, 'percent_off'],
      ['percent_off over 100', { percent_off: 100.01 }, 'percent_off'],
      ['percent_off negative', { percent_off: -5 }, 'percent_off'],
      ['both percent and amount', { percent_off: 5, amount_off: 100, currency: 'INR' }, 'percent_off'],
      ['neither', {}, 'percent_off'],
      ['amount without currency', { amount_off: 100 }, 'currency'],
      ['repeating without months', { percent_off: 5, duration: 'repeating' }, 'duration_in_months'],
      ['months on once', { percent_off: 5, duration_in_months: 2 }, 'duration_in_months'],
      ['UUID-shaped code', { percent_off: 5, code: '01890a5d-ac96-774b-bcce-b302099a8057' }, 'code'],
      ['bad plan id', { percent_off: 5, plan_ids: ['x'] }, 'plan_ids.0'],
    ])('refuses %s with 400', async (_label, body, field) => {
      const res = await acme.api('POST', '/v1/coupons', { code: code('bad'), duration: 'once', ...body });
      expect(res.status, res.text).toBe(400);
      expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
    });

    it('accepts percent_off exactly 100', async () => {
      expect((await coupon({ percent_off: 100 })).percent_off).toBe(100);
    });

    it("answers a plan id that does not exist, or is another tenant's, with 404 as a subscription does, and stores nothing", async () => {
      const stranger = await t.registerTenant();
      const theirs = await createPlan(stranger, { amount: 10_000 });
      const missing = '01890a5d-ac96-774b-bcce-b302099a8057';
      for (const planId of [missing, theirs.id]) {
        const couponCode = code('ghost');
        const res = await acme.http.POST('/v1/coupons', { body: { code: couponCode, percent_off: 5, duration: 'once', plan_ids: [monthly.id, planId] } });
        const subscription = await acme.http.POST('/v1/subscriptions', { body: { customer_id: await createCustomer(acme), plan_id: planId } });
        expect(res.status, res.text).toBe(404);
        expect(res.error!.code).toBe(subscription.error!.code);
        expect((await acme.http.GET('/v1/coupons', { query: { limit: 1000 } })).body.data.map((c: { code: string }) => c.code)).not.toContain(couponCode);
      }
    });
  });

  describe('redemption limits', () => {
    it('refuses a coupon past redeem_by and one at max_redemptions with 409', async () => {
      const expired = await coupon({ percent_off: 10, redeem_by: '2026-03-31T00:00:00Z' });
      const res = await acme.http.POST('/v1/subscriptions', { body: { customer_id: await createCustomer(acme), plan_id: monthly.id, coupon: expired.code } });
      expect(res.status, res.text).toBe(409);
      expect(res.error!.reason).toBe('coupon_expired');
      const once = await coupon({ percent_off: 10, max_redemptions: 1 });
      const first = await subscribe(acme, { customer_id: await createCustomer(acme), plan_id: monthly.id, coupon: once.id });
      const second = await acme.http.POST('/v1/subscriptions', { body: { customer_id: await createCustomer(acme), plan_id: monthly.id, coupon: once.id } });
      expect(second.status).toBe(409);
      expect(second.error!.reason).toBe('coupon_max_redemptions_reached');
      expect((await acme.http.GET('/v1/coupons/{id}', { path: { id: once.id } })).body.data).toMatchObject({ times_redeemed: 1, valid: false });
      const inactive = await coupon({ percent_off: 10 });
      await acme.http.PATCH('/v1/coupons/{id}', { path: { id: inactive.id }, body: { active: false } });
      expect((await acme.http.POST('/v1/subscriptions/{id}/discount', { path: { id: first.id }, body: { coupon: inactive.code } })).error!.reason).toBe(
        'coupon_inactive',
      );
      expect((await acme.http.POST('/v1/subscriptions/{id}/discount', { path: { id: first.id }, body: { coupon: 'no-such-code' } })).status).toBe(404);
      await retire(acme, first.id);
    });

    it('counts redemptions race-free: 8 concurrent redemptions of a 3-use coupon, exactly 3 succeed', async () => {
      const limited = await coupon({ amount_off: 1_000, currency: 'INR', max_redemptions: 3 });
      const customers = await Promise.all(Array.from({ length: 8 }, () => createCustomer(acme)));
      const results = await Promise.all(
        customers.map((c) =>
          acme.http.POST('/v1/invoices', {
            body: { customer_id: c, currency: 'INR', lines: [{ description: 'Setup', unit_amount: 10_000 }], coupon: limited.code },
          }),
        ),
      );
      const statuses = results.map((r) => r.status).sort();
      expect(statuses, results.map((r) => r.text).join('\n')).toEqual([201, 201, 201, 409, 409, 409, 409, 409]);
      expect((await acme.http.GET('/v1/coupons/{id}', { path: { id: limited.id } })).body.data.times_redeemed).toBe(3);
      for (const r of results.filter((r) => r.status === 201)) expect(r.body.data).toMatchObject({ discount_amount: 1_000, subtotal: 9_000 });
    });

    it('refuses a coupon for other plans or another currency with 409 coupon_not_applicable', async () => {
      const onlyOther = await coupon({ percent_off: 10, plan_ids: [other.id] });
      const res = await acme.http.POST('/v1/subscriptions', { body: { customer_id: await createCustomer(acme), plan_id: monthly.id, coupon: onlyOther.code } });
      expect(res.status).toBe(409);
      expect(res.error!.reason).toBe('coupon_not_applicable');
      const usd = await coupon({ amount_off: 500, currency: 'USD' });
      const inr = await acme.http.POST('/v1/invoices', {
        body: {
          customer_id: await createCustomer(acme),
          currency: 'INR',
          lines: [{ description: 'x', unit_amount: 1000 }],
          coupon: usd.id,
        },
      });
      expect(inr.status).toBe(409);
      expect(inr.error!.reason).toBe('coupon_not_applicable');
      // Neither refusal used a redemption.
      expect((await acme.http.GET('/v1/coupons/{id}', { path: { id: onlyOther.id } })).body.data.times_redeemed).toBe(0);
    });
  });

  describe('discounts before GST', () => {
    it.each([
      // [label, lines, coupon, expected per-line discount, subtotal, cgst, sgst]
      ['10 % of 1 000.00', [{ unit_amount: 100_000 }], { percent_off: 10 }, [10_000], 90_000, 8_100, 8_100],
      ['33.33 % of 999.99', [{ unit_amount: 99_999 }], { percent_off: 33.33 }, [33_330], 66_669, 6_000, 6_000],
      [
        '150.00 off two lines 300 + 100',
        [{ unit_amount: 30_000 }, { unit_amount: 10_000 }],
        { amount_off: 15_000, currency: 'INR' },
        [11_250, 3_750],
        25_000,
        2_251,
        2_251,
      ], // per line: 18 750 × 9 % = 1 687.5 → 1 688; 6 250 × 9 % = 562.5 → 563
      ['more off than the invoice: zero, no tax', [{ unit_amount: 5_000 }], { amount_off: 9_000, currency: 'INR' }, [5_000], 0, 0, 0],
      ['100 % off', [{ unit_amount: 5_000, quantity: 3 }], { percent_off: 100 }, [15_000], 0, 0, 0],
    ])('%s', async (_label, lines, terms, perLine, subtotal, cgst, sgst) => {
      const c = await coupon(terms);
      const res = await acme.http.POST('/v1/invoices', {
        body: {
          customer_id: await createCustomer(acme),
          currency: 'INR',
          lines: lines.map((l, i) => ({ description: `Line ${i}`, hsn_code: '998314', ...l })),
          coupon: c.code,
        },
      });
      expect(res.status, res.text).toBe(201);
      const inv = res.body.data;
      expect(inv.lines.map((l: { discount_amount: number }) => l.discount_amount)).toEqual(perLine);
      for (const l of inv.lines) expect(l.amount).toBe(l.quantity * l.unit_amount - l.discount_amount);
      expect(inv).toMatchObject({
        subtotal,
        discount_amount: perLine.reduce((a, b) => a + b, 0),
        cgst_amount: cgst,
        sgst_amount: sgst,
        total: subtotal + cgst + sgst,
      });
      // The ledger books the net: revenue is the discounted taxable value, the receivable the total.
      if (inv.total > 0) expect(await journalRevenue(inv.id)).toMatchObject({ revenue: subtotal });
    });

    it('prints the discount on the invoice PDF, before the taxable value', async () => {
      const c = await coupon({ amount_off: 12_345, currency: 'INR' });
      const res = await acme.http.POST('/v1/invoices', {
        body: {
          customer_id: await createCustomer(acme),
          currency: 'INR',
          lines: [{ description: 'Consulting', unit_amount: 100_000 }],
          coupon: c.code,
        },
      });
      expect(res.status, res.text).toBe(201);
      const pdf = await t.kosh.app.inject({ method: 'GET', url: `/v1/invoices/${res.body.data.id}/pdf`, headers: { authorization: `Bearer ${acme.key}` } });
      expect(pdf.statusCode).toBe(200);
      const text = await pdfText(pdf.rawPayload);
      expect(text).toContain('Discount');
      expect(text).toMatch(/-\s*₹?\s*123\.45/);
      expect(text).toMatch(/876\.55/);
    });

    it('takes a plan-restricted coupon off that plan’s lines only', async () => {
      const c = await coupon({ percent_off: 50, plan_ids: [other.id] });
      const res = await acme.http.POST('/v1/invoices', {
        body: {
          customer_id: await createCustomer(acme),
          currency: 'INR',
          lines: [{ plan_id: monthly.id }, { plan_id: other.id }],
          coupon: c.id,
        },
      });
      expect(res.status, res.text).toBe(201);
      expect(res.body.data.lines.map((l: { discount_amount: number }) => l.discount_amount)).toEqual([0, 25_000]);
      expect(res.body.data.subtotal).toBe(125_000);
    });
  });

  describe('durations across renewals', () => {
    it.each([
      ['once', { duration: 'once' }, [true, false, false, false]],
      ['repeating 2 months', { duration: 'repeating', duration_in_months: 2 }, [true, true, false, false]],
      ['forever', { duration: 'forever' }, [true, true, true, true]],
    ])('%s', async (label, terms, discounted) => {
      const minute = { once: '01', 'repeating 2 months': '02', forever: '03' }[label]!;
      const c = await coupon({ percent_off: 20, ...terms });
      const created = await acme.http.POST('/v1/subscriptions', { body: { customer_id: await createCustomer(acme), plan_id: monthly.id, coupon: c.code } });
      expect(created.status, created.text).toBe(201);
      expect(created.body.data.discount).toMatchObject({ coupon_id: c.id, coupon_code: c.code });
      const sub = created.body.data;
      for (const month of ['05', '06', '07']) await travelTo(t, `2026-${month}-01T00:${minute}:00Z`);
      const invoices = await invoicesOf(acme, sub.id);
      expect(invoices).toHaveLength(4);
      expect(invoices.map((i: { discount_amount: number }) => i.discount_amount > 0)).toEqual(discounted);
      for (const i of invoices) expect(i.subtotal).toBe(i.discount_amount > 0 ? 80_000 : 100_000);
      await retire(acme, sub.id);
    });

    it('applies a coupon to a running subscription from its next invoice, and DELETE ends it', async () => {
      const sub = await subscribe(acme, { customer_id: await createCustomer(acme), plan_id: monthly.id });
      const c = await coupon({ amount_off: 10_000, currency: 'INR', duration: 'forever' });
      const applied = await acme.http.POST('/v1/subscriptions/{id}/discount', { path: { id: sub.id }, body: { coupon: c.code } });
      expect(applied.status, applied.text).toBe(200);
      expect(applied.body.data.discount).toMatchObject({ coupon_id: c.id, end: null });
      await travelTo(t, '2026-05-01T00:04:00Z');
      const removed = await acme.http.DELETE('/v1/subscriptions/{id}/discount', { path: { id: sub.id } });
      expect(removed.status, removed.text).toBe(200);
      await travelTo(t, '2026-06-01T00:04:00Z');
      expect((await invoicesOf(acme, sub.id)).map((i: { discount_amount: number }) => i.discount_amount)).toEqual([0, 10_000, 0]);
      expect((await acme.http.DELETE('/v1/subscriptions/{id}/discount', { path: { id: sub.id } })).status).toBe(404);
      await retire(acme, sub.id);
    });
  });

  describe('plan updates and immutable prices', () => {
    it('patches a plan; an archived plan takes no new subscriptions (409) and running ones renew', async () => {
      const plan = await createPlan(acme, { amount: 10_000 });
      const sub = await subscribe(acme, { customer_id: await createCustomer(acme), plan_id: plan.id });
      const res = await acme.http.PATCH('/v1/plans/{id}', {
        path: { id: plan.id },
        body: { name: 'Renamed', description: 'd', metadata: { a: 1 }, active: false },
      });
      expect(res.status, res.text).toBe(200);
      expect(res.body.data).toMatchObject({ name: 'Renamed', description: 'd', metadata: { a: 1 }, active: false });
      const refused = await acme.http.POST('/v1/subscriptions', { body: { customer_id: await createCustomer(acme), plan_id: plan.id } });
      expect(refused.status).toBe(409);
      expect(refused.error!.reason).toBe('plan_inactive');
      await travelTo(t, '2026-05-01T00:05:00Z');
      expect(await invoicesOf(acme, sub.id)).toHaveLength(2);
      expect((await acme.api('PATCH', `/v1/plans/${plan.id}`, { active: 'no' })).status).toBe(400);
      expect((await acme.http.PATCH('/v1/plans/{id}', { path: { id: '00000000-0000-7000-8000-000000000000' }, body: { name: 'x' } })).status).toBe(404);
      await retire(acme, sub.id);
    });

    it('a new price archives the old; running subscriptions keep theirs, new ones take the new', async () => {
      const plan = await createPlan(acme, { amount: 10_000 });
      const old = await subscribe(acme, { customer_id: await createCustomer(acme), plan_id: plan.id });
      const oldPriceId = old.price_id;
      expect(oldPriceId).toEqual(expect.any(String));
      const added = await acme.http.POST('/v1/plans/{id}/prices', { path: { id: plan.id }, body: { amount: 15_000, currency: 'INR' } });
      expect(added.status, added.text).toBe(201);
      const prices = added.body.data.prices;
      expect(prices).toHaveLength(2);
      expect(prices.find((p: { id: string }) => p.id === oldPriceId)).toMatchObject({ active: false, archived_at: '2026-04-01T00:00:00.000Z', amount: 10_000 });
      const fresh = await subscribe(acme, { customer_id: await createCustomer(acme), plan_id: plan.id });
      expect(fresh.price_id).not.toBe(oldPriceId);
      await travelTo(t, '2026-05-01T00:06:00Z');
      expect((await invoicesOf(acme, old.id)).map((i: { subtotal: number }) => i.subtotal)).toEqual([10_000, 10_000]);
      expect((await invoicesOf(acme, fresh.id)).map((i: { subtotal: number }) => i.subtotal)).toEqual([15_000, 15_000]);
      // replace: false with an active price in the currency → 409; archiving twice → 409.
      expect((await acme.http.POST('/v1/plans/{id}/prices', { path: { id: plan.id }, body: { amount: 1, currency: 'INR', replace: false } })).status).toBe(409);
      const newPrice = prices.find((p: { active: boolean }) => p.active);
      expect((await acme.http.POST('/v1/plans/{id}/prices/{price_id}/archive', { path: { id: plan.id, price_id: newPrice!.id } })).status).toBe(200);
      expect((await acme.http.POST('/v1/plans/{id}/prices/{price_id}/archive', { path: { id: plan.id, price_id: newPrice!.id } })).status).toBe(409);
      expect((await acme.http.POST('/v1/subscriptions', { body: { customer_id: await createCustomer(acme), plan_id: plan.id } })).status).toBe(400);
      await retire(acme, old.id, fresh.id);
    });
  });

  describe('seats', () => {
    it.each([
      ['up', 2, 5],
      ['down', 5, 2],
    ])('changes seats %s mid-period, prorated to the day; the preview equals the change', async (_label, from, to) => {
      const sub = await subscribe(acme, { customer_id: await createCustomer(acme), plan_id: monthly.id, quantity: from });
      const [first] = await invoicesOf(acme, sub.id);
      await pay(acme, first);
      t.clock.set('2026-04-11T00:00:00Z');
      const preview = await acme.http.PATCH('/v1/subscriptions/{id}', { path: { id: sub.id }, body: { quantity: to, preview: true } });
      expect(preview.status, preview.text).toBe(200);
      expect((await getSubscription(acme, sub.id)).quantity).toBe(from);
      expect(await invoicesOf(acme, sub.id)).toHaveLength(1);
      const res = await acme.http.PATCH('/v1/subscriptions/{id}', { path: { id: sub.id }, body: { quantity: to } });
      expect(res.status, res.text).toBe(200);
      const change = res.body.data;
      expect(change).toMatchObject({ quantity: to, preview: false });
      // 20 of 30 days left: credit = first total × 20/30; charge = 100 000 × 20/30 per seat.
      expect(change.proration).toMatchObject({
        prorated: true,
        remaining_days: 20,
        period_days: 30,
        unused_value: Math.round((first.total * 20) / 30),
        new_charge: 66_667 * to,
        previous_quantity: from,
        quantity: to,
      });
      expect(change.invoice).toMatchObject({ billing_reason: 'subscription_update', subtotal: 66_667 * to });
      const strip = (x: Record<string, unknown>) =>
        JSON.parse(
          JSON.stringify(x, (k, v) =>
            [
              'id',
              'number',
              'invoice_id',
              'preview',
              'latest_invoice_id',
              'updated_at',
              'created_at',
              'issued_at',
              'credit_note_id',
              'applied_to_invoice_id',
            ].includes(k)
              ? undefined
              : v,
          ),
        );
      expect(strip(preview.body.data)).toEqual(strip(change));
      await retire(acme, sub.id);
    });

    it('without prorations only the quantity changes; the next renewal bills it', async () => {
      const sub = await subscribe(acme, { customer_id: await createCustomer(acme), plan_id: monthly.id });
      const res = await acme.http.PATCH('/v1/subscriptions/{id}', { path: { id: sub.id }, body: { quantity: 3, proration_behavior: 'none' } });
      expect(res.status, res.text).toBe(200);
      expect(res.body.data).toMatchObject({ quantity: 3, invoice: null, credit_note: null });
      await travelTo(t, '2026-05-01T00:07:00Z');
      expect((await invoicesOf(acme, sub.id)).map((i: { subtotal: number }) => i.subtotal)).toEqual([100_000, 300_000]);
      expect((await acme.http.PATCH('/v1/subscriptions/{id}', { path: { id: sub.id }, body: { quantity: 0 } })).status).toBe(400);
      expect((await acme.http.PATCH('/v1/subscriptions/{id}', { path: { id: sub.id }, body: { quantity: 3 } })).status).toBe(400);
      await retire(acme, sub.id);
      expect((await acme.http.PATCH('/v1/subscriptions/{id}', { path: { id: sub.id }, body: { quantity: 4 } })).status).toBe(409);
    });
  });
});
