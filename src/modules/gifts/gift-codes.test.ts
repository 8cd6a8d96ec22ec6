import { describe, expect, it } from 'vitest';
import { GIFT_CODE_ALPHABET, generateGiftCode, giftPrice, normalizeGiftCode } from './gift-codes.js';

describe('gift codes', () => {
  describe('generateGiftCode', () => {
    it('makes 4 groups of 4 symbols from the unambiguous alphabet', () => {
      for (let i = 0; i < 200; i++) expect(generateGiftCode()).toMatch(/^[2-9A-HJ-NP-Z]{4}(-[2-9A-HJ-NP-Z]{4}){3}$/);
    });

    it('uses every symbol of the alphabet, which has 32 symbols and no 0, O, 1 or I', () => {
      expect(GIFT_CODE_ALPHABET).toHaveLength(32);
      expect(GIFT_CODE_ALPHABET).not.toMatch(/[01OI]/);
      const all = generateGiftCode(() => Buffer.from([...Array(16).keys()].map((i) => i)));
      const rest = generateGiftCode(() => Buffer.from([...Array(16).keys()].map((i) => i + 16)));
      expect(new Set((all + rest).replace(/-/g, '')).size).toBe(32);
    });

    it('draws different codes', () => {
      const codes = new Set(Array.from({ length: 1000 }, () => generateGiftCode()));
      expect(codes.size).toBe(1000);
    });
  });

  describe('normalizeGiftCode', () => {
    it.each([
      ['K7QM-2XHB-WN9D-R4TE', 'K7QM-2XHB-WN9D-R4TE'],
      ['k7qm-2xhb-wn9d-r4te', 'K7QM-2XHB-WN9D-R4TE'],
      [' K7QM 2XHB WN9D R4TE ', 'K7QM-2XHB-WN9D-R4TE'],
      ['K7QM2XHBWN9DR4TE', 'K7QM-2XHB-WN9D-R4TE'],
      ['K7QM-2XHB-WN9D-R4T', null],
      ['K7QM-2XHB-WN9D-R4TEE', null],
      ['K7QM-2XHB-WN9D-R4T0', null],
      ['K7QM-2XHB-WN9D-R4TI', null],
      ["' OR 1=1 --", null],
      ['', null],
    ])('%j → %j', (typed, expected) => {
      expect(normalizeGiftCode(typed)).toBe(expected);
    });
  });

  describe('giftPrice', () => {
    it.each([
      // amount, unit, interval_count, months, price
      [49_900, 'month', 1, 1, 49_900],
      [49_900, 'month', 1, 12, 598_800],
      [49_900, 'month', 1, 36, 1_796_400],
      [90_000, 'month', 3, 1, 30_000],
      [100_000, 'month', 3, 2, 66_667], // 66 666.67 → half-up
      [120_000, 'year', 1, 12, 120_000],
      [120_000, 'year', 1, 1, 10_000],
      [99_999, 'year', 1, 1, 8_333], // 8 333.25
      [99_990, 'year', 1, 6, 49_995],
      [100_002, 'year', 1, 1, 8_334], // 8 333.5 → half-up
      [240_000, 'year', 2, 6, 60_000],
      [1_000, 'day', 1, 1, null],
      [1_000, 'week', 1, 1, null],
    ] as const)('%i per %s (interval_count %i) for %i months → %s', (amount, unit, count, months, price) => {
      expect(giftPrice(amount, unit, count, months)).toBe(price);
    });
  });
});
