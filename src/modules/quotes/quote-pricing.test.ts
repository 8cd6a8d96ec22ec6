import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { allocateDiscount } from './quote-pricing.js';

describe('quotes', () => {
  describe('allocateDiscount', () => {
    it.each([
      [[10_000], 0, [0]],
      [[10_000], 1_000, [1_000]],
      [[10_000, 30_000], 4_000, [1_000, 3_000]],
      [[1, 1, 1], 1, [1, 0, 0]],
      [[1, 1, 1, 1], 2, [0, 0, 1, 1]], // half-up gives 1 each; two paise go back, largest (then first) line first
      [[100, 100, 100], 200, [66, 67, 67]],
      [[3, 3, 3], 9, [3, 3, 3]],
      [[0, 500], 100, [0, 100]],
      [[999, 1], 500, [499, 1]], // 499.5 → 500 and 0.5 → 1; the extra paisa comes off the larger line
    ])('%j less %i → %j', (amounts, discount, shares) => {
      expect(allocateDiscount(amounts, discount)).toEqual(shares);
    });

    it('refuses a discount above the subtotal or below zero', () => {
      expect(() => allocateDiscount([100], 101)).toThrow(RangeError);
      expect(() => allocateDiscount([100], -1)).toThrow(RangeError);
    });

    it('always sums to the discount with every share within its line', () => {
      fc.assert(
        fc.property(
          fc
            .array(fc.integer({ min: 0, max: 10_000_000 }), { minLength: 1, maxLength: 30 })
            .chain((amounts) => fc.tuple(fc.constant(amounts), fc.integer({ min: 0, max: amounts.reduce((s, a) => s + a, 0) }))),
          ([amounts, discount]) => {
            const shares = allocateDiscount(amounts, discount);
            expect(shares.reduce((s, a) => s + a, 0)).toBe(discount);
            shares.forEach((share, i) => {
              expect(share).toBeGreaterThanOrEqual(0);
              expect(share).toBeLessThanOrEqual(amounts[i]!);
            });
          },
        ),
        { numRuns: 300 },
      );
    });
  });
});
