import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKosh, type Tenant, type TestKosh } from '../support/harness.js';
import { createCustomer, invoicesOf, karnatakaTenant, subscribe, travelTo } from './helpers.js';

// The credit for unused time (cancel now, plan, seat and item changes) credits the lines paid in
// advance for the period — the fee, seats, add-ons — and never the usage billed on the same
// invoice in arrears for the period before (decision 0190). The tenant and the customer are in
// Karnataka: CGST 9 % + SGST 9 % on every line.

let t: TestKosh;
let acme: Tenant;

beforeAll(async () => {
  t = await startTestKosh(); // 2026-04-01T00:00:00Z
  acme = await karnatakaTenant(t);
});
afterAll(() => t.close());

type NoteLine = { invoice_line_id: string; amount: number; subtotal: number; cgst_amount: number; sgst_amount: number; igst_amount: number };

describe('subscriptions', () => {
  describe('cancel now: the credit for unused time', () => {
    it('credits only the in-advance fee line of a renewal that also bills last month’s usage', async () => {
      const metric = await acme.http.POST('/v1/billable-metrics', { body: { name: 'Calls', code: 'calls-unused', aggregation: 'count' } });
      expect(metric.status, metric.text).toBe(201);
      // ₹1 000.00 a month in advance, plus ₹5.00 a call in arrears.
      const plan = await acme.http.POST('/v1/plans', {
        body: {
          name: 'Fee and calls',
          code: 'fee-and-calls',
          interval: 'month',
          hsn_code: '998314',
          prices: [
            { currency: 'INR', amount: 100_000 },
            { currency: 'INR', billing_scheme: 'metered', metric_code: 'calls-unused', amount: 500 },
          ],
        },
      });
      expect(plan.status, plan.text).toBe(201);
      const customer = await createCustomer(acme);
      const sub = await subscribe(acme, { customer_id: customer, plan_id: plan.body.data.id });
      // 40 calls in April.
      const events = Array.from({ length: 40 }, (_, i) => ({
        transaction_id: `unused-${i}`,
        customer_id: customer,
        metric_code: 'calls-unused',
        timestamp: `2026-04-${String(2 + (i % 20)).padStart(2, '0')}T10:00:00Z`,
      }));
      expect((await acme.http.POST('/v1/usage/events/batch', { body: { events } })).status).toBe(202);

      // 1 May: the renewal bills April's usage in arrears — 40 × 500 = 20 000 + CGST 1 800 + SGST
      // 1 800 = 23 600 — and May's fee in advance — 100 000 + 9 000 + 9 000 = 118 000: 141 600.
      await travelTo(t, '2026-05-01T00:00:00Z');
      const renewal = (await invoicesOf(acme, sub.id)).at(-1);
      expect(renewal).toMatchObject({ billing_reason: 'subscription_cycle', total: 141_600, period_start: '2026-05-01T00:00:00.000Z' });
      const usageLine = renewal.lines.find((l: { amount: number }) => l.amount === 20_000);
      const feeLine = renewal.lines.find((l: { amount: number }) => l.amount === 100_000);
      expect(usageLine.total).toBe(23_600);
      expect(feeLine.total).toBe(118_000);

      // Cancelled on 16 May: 16 of May's 31 days unused. Unused = 118 000 × 16 ÷ 31 = 60 903.2 →
      // 60 903, all on the fee line: value 60 903 ÷ 1.18 = 51 612.7 → 51 613, CGST 4 645, SGST 4 645.
      // The usage line (April, already consumed) is not credited at all.
      t.clock.set('2026-05-16T00:00:00Z');
      const cancel = await acme.http.POST('/v1/subscriptions/{id}/cancel', { path: { id: sub.id }, body: { at_period_end: false, prorate: true } });
      expect(cancel.status, cancel.text).toBe(200);
      expect(cancel.body.data.proration).toMatchObject({ remaining_days: 16, period_days: 31, unused_value: 60_903, unused_credit: 60_903 });
      const noteId = cancel.body.data.proration!.credit_note_id as string;
      const note = (await acme.http.GET('/v1/credit-notes/{id}', { path: { id: noteId } })).body.data as {
        amount: number;
        subtotal: number;
        lines: NoteLine[];
      };
      expect(note.amount).toBe(60_903);
      expect(note.lines.map((l) => ({ ...l, id: undefined }))).toEqual([
        expect.objectContaining({ invoice_line_id: feeLine.id, amount: 60_903, subtotal: 51_613, cgst_amount: 4_645, sgst_amount: 4_645, igst_amount: 0 }),
      ]);
      expect(note.lines.some((l) => l.invoice_line_id === usageLine.id)).toBe(false);
    });
  });
});
