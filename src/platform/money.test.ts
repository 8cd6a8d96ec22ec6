import { describe, expect, it } from 'vitest';
import { canonicalExchangeRate, convertMinorUnits, exchangeRateMicros } from './money.js';

describe('exchange rates', () => {
  describe('exchangeRateMicros', () => {
    it.each([
      ['83.2575', 83_257_500n],
      ['1', 1_000_000n],
      ['0.000001', 1n],
      ['999999999.999999', 999_999_999_999_999n],
    ])('reads %s as %i millionths', (rate, micros) => {
      expect(exchangeRateMicros(rate)).toBe(micros);
    });

    it.each(['0', '0.000000', '-1', '1e2', '8.3e1', '83.', '.5', '1.1234567', '1234567890', ' 83', ''])('refuses %j', (rate) => {
      expect(() => exchangeRateMicros(rate)).toThrow(RangeError);
    });
  });

  it.each([
    ['083.2500', '83.25'],
    ['80', '80'],
    ['80.000', '80'],
    ['0.5', '0.5'],
  ])('spells %s canonically as %s', (rate, canonical) => {
    expect(canonicalExchangeRate(rate)).toBe(canonical);
  });

  describe('convertMinorUnits', () => {
    it.each([
      [10_000, 'USD', '83.2575', 832_575], // $100.00 → ₹8 325.75
      [1, 'USD', '83.255', 83], // 1 cent → 83.255 paise → 83
      [1, 'USD', '83.5', 84], // 83.5 paise: half rounds up
      [2, 'USD', '0.0025', 0], // 0.005 paise → 0
      [1001, 'JPY', '0.55', 55_055], // ¥1001 → ₹550.55
      [1000, 'KWD', '270.5', 27_050], // 1.000 KWD → ₹270.50
    ])('converts %i %s at %s to %i paise', (amount, from, rate, paise) => {
      expect(convertMinorUnits(amount, from, 'INR', rate)).toBe(paise);
    });

    it('rounds half-up once', () => {
      expect(convertMinorUnits(1, 'USD', 'INR', '0.5')).toBe(1); // exactly half a paisa
      expect(convertMinorUnits(1, 'USD', 'INR', '0.499999')).toBe(0);
    });

    it('refuses a result beyond 2^53 − 1', () => {
      expect(() => convertMinorUnits(Number.MAX_SAFE_INTEGER, 'USD', 'INR', '83')).toThrow(RangeError);
    });
  });
});
