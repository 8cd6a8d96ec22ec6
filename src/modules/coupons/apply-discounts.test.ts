import { describe, expect, it } from 'vitest';
import { applyDiscounts } from './apply-discounts.js';

const line = (amount: number, plan_id: string | null = null) => ({ quantity: 1, unit_amount: amount, plan_id });

describe('applyDiscounts', () => {
  it.each([
    // [label, lines, discounts, per-line discounts, per-discount totals]
    ['25 % of one line', [line(100_000)], [{ percent_off_bp: 2500 }], [25_000], [25_000]],
    ['12.5 % rounds half-up per line', [line(333), line(335)], [{ percent_off_bp: 1250 }], [42, 42], [84]],
    ['100 % takes everything', [line(99_999), line(1)], [{ percent_off_bp: 10_000 }], [99_999, 1], [100_000]],
    ['amount off spread pro rata', [line(30_000), line(10_000)], [{ amount_off: 10_000 }], [7_500, 2_500], [10_000]],
    ['amount off: leftover units by largest remainder', [line(1), line(1), line(1)], [{ amount_off: 2 }], [1, 1, 0], [2]],
    ['amount off above the invoice stops at zero', [line(5_000), line(3_000)], [{ amount_off: 50_000 }], [5_000, 3_000], [8_000]],
    ['plan restriction: only that plan’s line', [line(10_000, 'p1'), line(10_000, 'p2')], [{ percent_off_bp: 5000, plan_ids: ['p2'] }], [0, 5_000], [5_000]],
    ['two discounts in order on what is left', [line(10_000)], [{ percent_off_bp: 5000 }, { amount_off: 6_000 }], [10_000], [5_000, 5_000]],
    ['a zero line stays zero', [line(0), line(1_000)], [{ amount_off: 500 }], [0, 500], [500]],
  ])('%s', (_label, lines, discounts, perLine, totals) => {
    const result = applyDiscounts(lines, discounts);
    expect(result.lineDiscounts).toEqual(perLine);
    expect(result.discountTotals).toEqual(totals);
    for (const [i, l] of lines.entries()) expect(l.quantity * l.unit_amount - result.lineDiscounts[i]!).toBeGreaterThanOrEqual(0);
  });

  it('never takes more than the lines hold, whatever the mix (exhaustive small cases)', () => {
    for (let a = 0; a <= 40; a += 7)
      for (let b = 0; b <= 40; b += 5)
        for (const off of [1, 3, 17, 80, 1000]) {
          const r = applyDiscounts([line(a), line(b)], [{ amount_off: off }, { percent_off_bp: 3333 }]);
          expect(r.lineDiscounts[0]).toBeLessThanOrEqual(a);
          expect(r.lineDiscounts[1]).toBeLessThanOrEqual(b);
          expect(r.discountTotals[0]).toBe(Math.min(off, a + b));
        }
  });
});
