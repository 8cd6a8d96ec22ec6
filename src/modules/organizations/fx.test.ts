import { describe, expect, it } from 'vitest';
import { convertMinorUnits } from '../../platform/money.js';
import { formatRate, parseRate } from './fx.js';

describe('fx', () => {
  describe('convertMinorUnits', () => {
    it.each([
      { amount: 10000, from: 'USD', to: 'INR', rate: '83.25', expected: 832500 },
      { amount: 1, from: 'USD', to: 'INR', rate: '83.255', expected: 83 },
      { amount: 3, from: 'USD', to: 'INR', rate: '83.255', expected: 250 }, // 249.765 → 250 half-up
      { amount: 100000, from: 'INR', to: 'USD', rate: '0.012', expected: 1200 },
      { amount: 1000, from: 'JPY', to: 'INR', rate: '0.56', expected: 56000 }, // ¥1000 = ₹560.00
      { amount: 56000, from: 'INR', to: 'JPY', rate: '1.785714285714', expected: 1000 },
      { amount: 1000, from: 'BHD', to: 'USD', rate: '2.65', expected: 265 }, // 1.000 BHD = $2.65
    ])('$amount $from at $rate → $expected $to', ({ amount, from, to, rate, expected }) => {
      expect(convertMinorUnits(amount, from, to, rate)).toBe(expected);
    });
  });

  describe('parseRate', () => {
    it.each(['0', '0.0', '-1', 'abc', '1e3', '', '1.1234567890123'])('refuses %j', (value) => {
      expect(() => parseRate(value)).toThrow(RangeError);
    });

    it('keeps every digit and formats canonically', () => {
      expect(formatRate('83.250000000000')).toBe('83.25');
      expect(formatRate('1')).toBe('1');
      expect(formatRate('0.000000000001')).toBe('0.000000000001');
    });
  });
});
