import { describe, expect, it } from 'vitest';
import { describePricing, priceQuantity, tierProblems, type PricingScheme, type Tier } from './pricing.js';

// 1–10 at 100, 11–20 at 80 (+ 500 flat), 21–∞ at 50 (+ 1 000 flat)
const tiers: Tier[] = [
  { up_to: 10, unit_amount: 100 },
  { up_to: 20, unit_amount: 80, flat_amount: 500 },
  { up_to: null, unit_amount: 50, flat_amount: 1000 },
];
const graduated: PricingScheme = { amount: 0, tiers_mode: 'graduated', tiers };
const volume: PricingScheme = { amount: 0, tiers_mode: 'volume', tiers };

describe('price maths', () => {
  describe('graduated tiers', () => {
    it.each([
      [0, 0],
      [1, 100],
      [9, 900],
      [10, 1000],
      [11, 1000 + 80 + 500],
      [19, 1000 + 9 * 80 + 500],
      [20, 1000 + 10 * 80 + 500],
      [21, 1000 + 800 + 500 + 50 + 1000],
      [1000, 1000 + 800 + 500 + 980 * 50 + 1000],
    ])('prices %i units at %i', (quantity, amount) => {
      expect(priceQuantity(graduated, quantity).amount).toBe(amount);
    });
  });

  describe('volume tiers', () => {
    it.each([
      [0, 0],
      [1, 100],
      [10, 1000],
      [11, 11 * 80 + 500],
      [20, 20 * 80 + 500],
      [21, 21 * 50 + 1000],
      [1000, 1000 * 50 + 1000],
    ])('prices %i units at %i', (quantity, amount) => {
      expect(priceQuantity(volume, quantity).amount).toBe(amount);
    });
  });

  describe('a single unbounded tier', () => {
    const only: Tier[] = [{ up_to: null, unit_amount: 7, flat_amount: 300 }];
    it.each([
      ['graduated', 0, 0],
      ['graduated', 1, 307],
      ['graduated', 100, 1000],
      ['volume', 0, 0],
      ['volume', 1, 307],
      ['volume', 100, 1000],
    ] as const)('%s prices %i units at %i', (mode, quantity, amount) => {
      expect(priceQuantity({ amount: 0, tiers_mode: mode, tiers: only }, quantity).amount).toBe(amount);
    });
  });

  describe('per unit and packages', () => {
    it.each([
      [{ amount: 250 }, 0, 0],
      [{ amount: 250 }, 1, 250],
      [{ amount: 250 }, 7, 1750],
      [{ amount: 1000, package_size: 100 }, 0, 0],
      [{ amount: 1000, package_size: 100 }, 1, 1000],
      [{ amount: 1000, package_size: 100 }, 99, 1000],
      [{ amount: 1000, package_size: 100 }, 100, 1000],
      [{ amount: 1000, package_size: 100 }, 101, 2000],
      [{ amount: 1000, package_size: 100 }, 200, 2000],
      [{ amount: 1000, package_size: 100 }, 201, 3000],
      [{ amount: 5, package_size: 1 }, 3, 15],
    ] as [PricingScheme, number, number][])('%o prices %i units at %i', (price, quantity, amount) => {
      expect(priceQuantity(price, quantity).amount).toBe(amount);
    });
  });

  describe('graduated equals the sum of its parts, volume one tier', () => {
    it('splits 25 units into 10 + 10 + 5', () => {
      const priced = priceQuantity(graduated, 25);
      expect(priced.parts.map((p) => [p.from, p.quantity, p.amount])).toEqual([
        [1, 10, 1000],
        [11, 10, 1300],
        [21, 5, 1250],
      ]);
      expect(priced.amount).toBe(3550);
      expect(priceQuantity(volume, 25).parts).toHaveLength(1);
    });
  });

  describe('refusals', () => {
    it('refuses a negative or fractional quantity', () => {
      expect(() => priceQuantity(graduated, -1)).toThrow(RangeError);
      expect(() => priceQuantity(graduated, 1.5)).toThrow(RangeError);
    });
    it('refuses an amount past the largest safe integer', () => {
      expect(() => priceQuantity({ amount: Number.MAX_SAFE_INTEGER }, 2)).toThrow(RangeError);
    });
  });

  describe('tier validation', () => {
    it.each([
      [[{ up_to: null, unit_amount: 1 }], []],
      [tiers, []],
      [[], ['at least one tier is required']],
      [[{ up_to: 10, unit_amount: 1 }], ['tiers.0.up_to: the last tier must be unbounded (up_to: null)']],
      [
        [
          { up_to: null, unit_amount: 1 },
          { up_to: null, unit_amount: 1 },
        ],
        ['tiers.0.up_to: only the last tier may be unbounded (null)'],
      ],
      [
        [
          { up_to: 10, unit_amount: 1 },
          { up_to: 10, unit_amount: 1 },
          { up_to: null, unit_amount: 1 },
        ],
        ['tiers.1.up_to: tiers must be ascending and not overlap (10 after 10)'],
      ],
      [
        [
          { up_to: 20, unit_amount: 1 },
          { up_to: 10, unit_amount: 1 },
          { up_to: null, unit_amount: 1 },
        ],
        ['tiers.1.up_to: tiers must be ascending and not overlap (10 after 20)'],
      ],
    ] as [Tier[], string[]][])('%j → %j', (input, problems) => {
      expect(tierProblems(input)).toEqual(problems);
    });
  });

  describe('description', () => {
    it('says the quantity and the tiers', () => {
      expect(describePricing(graduated, priceQuantity(graduated, 25))).toBe(
        '25 units (graduated tiers: 1–10 at 1.00; 11–20 at 0.80 + 5.00 flat; 21–25 at 0.50 + 10.00 flat)',
      );
      expect(describePricing(volume, priceQuantity(volume, 25))).toBe('25 units (volume tiers: tier 21–∞ at 0.50 + 10.00 flat)');
      const pkg = { amount: 1000, package_size: 100 };
      expect(describePricing(pkg, priceQuantity(pkg, 250))).toBe('250 units (3 packages of 100 at 10.00)');
    });
  });
});
