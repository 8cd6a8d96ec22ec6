import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { IntervalUnit } from '../plans/index.js';
import { addInterval, daysBetween, periodBoundary, periodContaining, prorate, prorateByDays } from './periods.js';

const d = (iso: string) => new Date(iso);

describe('billing periods', () => {
  describe('periodBoundary', () => {
    // [anchor, unit, count, n, expected start of period n], worked by calendar.
    it.each<[string, IntervalUnit, number, number, string]>([
      ['2024-01-31T10:15:30.123Z', 'month', 1, 0, '2024-01-31T10:15:30.123Z'],
      ['2024-01-31T10:15:30.123Z', 'month', 1, 1, '2024-02-29T10:15:30.123Z'], // 2024 is leap
      ['2024-01-31T10:15:30.123Z', 'month', 1, 2, '2024-03-31T10:15:30.123Z'], // no drift to the 29th
      ['2024-01-31T10:15:30.123Z', 'month', 1, 3, '2024-04-30T10:15:30.123Z'],
      ['2024-01-31T10:15:30.123Z', 'month', 1, 4, '2024-05-31T10:15:30.123Z'],
      ['2023-01-31T00:00:00.000Z', 'month', 1, 1, '2023-02-28T00:00:00.000Z'],
      ['2023-01-31T00:00:00.000Z', 'month', 1, 2, '2023-03-31T00:00:00.000Z'],
      ['2024-01-30T08:00:00.000Z', 'month', 1, 1, '2024-02-29T08:00:00.000Z'],
      ['2024-01-30T08:00:00.000Z', 'month', 1, 2, '2024-03-30T08:00:00.000Z'],
      ['2024-03-31T00:00:00.000Z', 'month', 1, -1, '2024-02-29T00:00:00.000Z'],
      ['2024-03-31T00:00:00.000Z', 'month', 1, -13, '2023-02-28T00:00:00.000Z'],
      ['2099-01-31T00:00:00.000Z', 'month', 1, 13, '2100-02-28T00:00:00.000Z'], // 2100 is not leap
      ['1999-12-31T00:00:00.000Z', 'month', 2, 1, '2000-02-29T00:00:00.000Z'], // 2000 is leap
      ['2024-08-31T06:30:00.000Z', 'month', 3, 1, '2024-11-30T06:30:00.000Z'],
      ['2024-08-31T06:30:00.000Z', 'month', 3, 2, '2025-02-28T06:30:00.000Z'],
      ['2024-08-31T06:30:00.000Z', 'month', 3, 3, '2025-05-31T06:30:00.000Z'],
      ['2024-08-31T06:30:00.000Z', 'month', 3, 4, '2025-08-31T06:30:00.000Z'],
      ['2024-01-31T00:00:00.000Z', 'month', 12, 1, '2025-01-31T00:00:00.000Z'],
      ['2024-02-29T00:00:00.000Z', 'month', 12, 1, '2025-02-28T00:00:00.000Z'],
      ['2024-02-29T12:00:00.000Z', 'year', 1, 1, '2025-02-28T12:00:00.000Z'],
      ['2024-02-29T12:00:00.000Z', 'year', 1, 2, '2026-02-28T12:00:00.000Z'],
      ['2024-02-29T12:00:00.000Z', 'year', 1, 4, '2028-02-29T12:00:00.000Z'],
      ['2024-02-29T12:00:00.000Z', 'year', 1, 76, '2100-02-28T12:00:00.000Z'],
      ['2024-02-29T12:00:00.000Z', 'year', 2, 2, '2028-02-29T12:00:00.000Z'],
      ['2000-02-29T00:00:00.000Z', 'year', 100, 1, '2100-02-28T00:00:00.000Z'],
      ['1996-02-29T00:00:00.000Z', 'year', 4, 1, '2000-02-29T00:00:00.000Z'],
      ['2024-12-30T23:59:59.999Z', 'week', 1, 1, '2025-01-06T23:59:59.999Z'],
      ['2024-12-30T23:59:59.999Z', 'week', 2, 3, '2025-02-10T23:59:59.999Z'],
      ['2024-02-28T12:00:00.000Z', 'day', 1, 1, '2024-02-29T12:00:00.000Z'],
      ['2024-02-28T12:00:00.000Z', 'day', 1, 2, '2024-03-01T12:00:00.000Z'],
      ['2023-02-28T12:00:00.000Z', 'day', 1, 1, '2023-03-01T12:00:00.000Z'],
      ['2024-01-01T00:00:00.000Z', 'day', 30, 12, '2024-12-26T00:00:00.000Z'], // 360 days into a leap year
      ['2024-01-01T00:00:00.000Z', 'day', 7, 0, '2024-01-01T00:00:00.000Z'],
    ])('%s + %s × %i, period %i starts %s', (anchor, unit, count, n, expected) => {
      expect(periodBoundary(d(anchor), unit, count, n).toISOString()).toBe(expected);
    });

    it('works for anchors in years below 100 (no Date.UTC two-digit-year shift)', () => {
      const anchor = new Date(0);
      anchor.setUTCFullYear(40, 0, 31);
      const next = periodBoundary(anchor, 'month', 1, 1);
      expect([next.getUTCFullYear(), next.getUTCMonth(), next.getUTCDate()]).toEqual([40, 1, 29]); // year 40 is leap
    });

    it.each<[string, () => unknown]>([
      ['interval count 0', () => periodBoundary(d('2024-01-01T00:00:00Z'), 'month', 0, 1)],
      ['a fractional interval count', () => periodBoundary(d('2024-01-01T00:00:00Z'), 'month', 1.5, 1)],
      ['a fractional period index', () => periodBoundary(d('2024-01-01T00:00:00Z'), 'day', 1, 0.5)],
      ['an invalid anchor', () => periodBoundary(d('not a date'), 'day', 1, 1)],
      ['a boundary beyond the Date range', () => periodBoundary(d('2024-01-01T00:00:00Z'), 'year', 1, 300_000)],
      ['count × n beyond a safe integer', () => periodBoundary(d('2024-01-01T00:00:00Z'), 'day', 2 ** 30, 2 ** 30)],
    ])('throws RangeError for %s', (_what, call) => {
      expect(call).toThrow(RangeError);
    });
  });

  describe('addInterval', () => {
    it.each<[string, IntervalUnit, number, string]>([
      ['2024-01-31T09:00:00.000Z', 'month', 1, '2024-02-29T09:00:00.000Z'],
      ['2024-02-29T09:00:00.000Z', 'month', 1, '2024-03-29T09:00:00.000Z'], // from a clamped date: no way back to 31
      ['2024-05-31T09:00:00.000Z', 'month', -3, '2024-02-29T09:00:00.000Z'],
      ['2024-02-29T09:00:00.000Z', 'year', -1, '2023-02-28T09:00:00.000Z'],
      ['2024-12-31T23:00:00.000Z', 'day', 1, '2025-01-01T23:00:00.000Z'],
      ['2024-03-01T00:00:00.000Z', 'week', -1, '2024-02-23T00:00:00.000Z'],
      ['2024-03-01T00:00:00.000Z', 'month', 0, '2024-03-01T00:00:00.000Z'],
    ])('%s + %s × %i = %s', (from, unit, count, expected) => {
      expect(addInterval(d(from), unit, count).toISOString()).toBe(expected);
    });
  });

  describe('periodContaining', () => {
    it.each<[string, IntervalUnit, number, string, number, string, string]>([
      ['2024-01-31T10:00:00Z', 'month', 1, '2024-01-31T10:00:00.000Z', 0, '2024-01-31T10:00:00.000Z', '2024-02-29T10:00:00.000Z'],
      ['2024-01-31T10:00:00Z', 'month', 1, '2024-02-29T09:59:59.999Z', 0, '2024-01-31T10:00:00.000Z', '2024-02-29T10:00:00.000Z'],
      ['2024-01-31T10:00:00Z', 'month', 1, '2024-02-29T10:00:00.000Z', 1, '2024-02-29T10:00:00.000Z', '2024-03-31T10:00:00.000Z'],
      ['2024-01-31T10:00:00Z', 'month', 1, '2024-03-30T23:00:00.000Z', 1, '2024-02-29T10:00:00.000Z', '2024-03-31T10:00:00.000Z'],
      ['2024-01-31T10:00:00Z', 'month', 1, '2024-01-31T09:00:00.000Z', -1, '2023-12-31T10:00:00.000Z', '2024-01-31T10:00:00.000Z'],
      ['2024-01-31T10:00:00Z', 'month', 3, '2024-12-01T00:00:00.000Z', 3, '2024-10-31T10:00:00.000Z', '2025-01-31T10:00:00.000Z'],
      ['2024-02-29T00:00:00Z', 'year', 1, '2025-03-01T00:00:00.000Z', 1, '2025-02-28T00:00:00.000Z', '2026-02-28T00:00:00.000Z'],
      ['2024-02-29T00:00:00Z', 'year', 1, '2028-02-28T23:59:59.999Z', 3, '2027-02-28T00:00:00.000Z', '2028-02-29T00:00:00.000Z'],
      ['2024-01-01T00:00:00Z', 'week', 1, '2024-01-15T00:00:00.000Z', 2, '2024-01-15T00:00:00.000Z', '2024-01-22T00:00:00.000Z'],
      ['2024-01-01T06:00:00Z', 'day', 1, '2024-01-01T05:59:59.999Z', -1, '2023-12-31T06:00:00.000Z', '2024-01-01T06:00:00.000Z'],
    ])('anchor %s every %s × %i: %s is in period %i [%s, %s)', (anchor, unit, count, at, index, start, end) => {
      const period = periodContaining(d(anchor), unit, count, d(at));
      expect({ index: period.index, start: period.start.toISOString(), end: period.end.toISOString() }).toEqual({ index, start, end });
    });
  });

  describe('daysBetween', () => {
    it.each([
      ['2024-02-28T23:00:00Z', '2024-03-01T01:00:00Z', 2],
      ['2023-02-28T23:00:00Z', '2023-03-01T01:00:00Z', 1],
      ['2024-03-01T01:00:00Z', '2024-02-28T23:00:00Z', -2],
      ['2024-05-05T00:00:00Z', '2024-05-05T23:59:59.999Z', 0],
      ['2024-01-01T00:00:00Z', '2025-01-01T00:00:00Z', 366],
      ['2000-01-01T00:00:00Z', '2001-01-01T00:00:00Z', 366],
      ['2100-01-01T00:00:00Z', '2101-01-01T00:00:00Z', 365],
      ['1969-12-31T23:00:00Z', '1970-01-01T01:00:00Z', 1],
      ['2024-01-31T10:00:00Z', '2024-02-29T10:00:00Z', 29],
    ])('%s → %s is %i days', (a, b, days) => {
      expect(daysBetween(d(a), d(b))).toBe(days);
    });
  });

  describe('prorate', () => {
    it.each([
      ['10 of 31 days of ₹100: 3225.8 rounds up', 10000, 10, 31, 3226],
      ['1 of 2 days of 999: 499.5 rounds up', 999, 1, 2, 500],
      ['1 of 3 days of 1 paisa', 1, 1, 3, 0],
      ['no days used', 10000, 0, 30, 0],
      ['the whole period', 10000, 30, 30, 10000],
      ['29 of 29 days in a leap February', 49900, 29, 29, 49900],
      ['15 of 29 days: 25810.34 rounds down', 49900, 15, 29, 25810],
    ])('%s', (_what, amount, used, total, expected) => {
      expect(prorateByDays(amount, used, total)).toBe(expected);
    });

    it('prorates to the millisecond when given milliseconds: 12 h of a day of 2999 is 1499.5 → 1500', () => {
      expect(prorate(2999, 12 * 3_600_000, 24 * 3_600_000)).toBe(1500);
    });

    it('keeps a paisa on amounts near 10^13 (BigInt inside)', () => {
      expect(prorateByDays(9_999_999_999_999, 1, 3)).toBe(3_333_333_333_333);
      expect(prorateByDays(9_999_999_999_999, 2, 3)).toBe(6_666_666_666_666);
    });

    it.each([
      ['more days used than the period has', 100, 31, 30],
      ['a negative part', 100, -1, 30],
      ['an empty period', 100, 0, 0],
      ['fractional days', 100, 1.5, 30],
    ])('throws RangeError for %s', (_what, amount, used, total) => {
      expect(() => prorateByDays(amount, used, total)).toThrow(RangeError);
    });
  });

  describe('properties', () => {
    const unit = fc.constantFrom<IntervalUnit>('day', 'week', 'month', 'year');
    const anchor = fc.date({ min: d('1900-01-01T00:00:00Z'), max: d('2200-12-31T23:59:59.999Z'), noInvalidDate: true });
    const count = fc.integer({ min: 1, max: 24 });
    const n = fc.integer({ min: -60, max: 60 });
    const dayMs = 86_400_000;
    const msOfDay = (date: Date) => date.getTime() - Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate());
    // Month lengths with the Gregorian leap rule written out, independent of the code under test.
    const isLeap = (year: number) => year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
    const lastDay = (year: number, month: number) => (month === 1 && isLeap(year) ? 29 : [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month]!);

    it('boundaries are strictly increasing and keep the anchor time of day', () => {
      fc.assert(
        fc.property(anchor, unit, count, n, (a, u, c, i) => {
          const start = periodBoundary(a, u, c, i);
          const end = periodBoundary(a, u, c, i + 1);
          expect(start.getTime()).toBeLessThan(end.getTime());
          expect(msOfDay(start)).toBe(msOfDay(a));
        }),
      );
    });

    it('month and year boundaries land on the anchor day, or the last day of a shorter month', () => {
      fc.assert(
        fc.property(anchor, fc.constantFrom<IntervalUnit>('month', 'year'), count, n, (a, u, c, i) => {
          const b = periodBoundary(a, u, c, i);
          const months = (u === 'year' ? 12 : 1) * c * i;
          const expectedMonth = a.getUTCFullYear() * 12 + a.getUTCMonth() + months;
          expect(b.getUTCFullYear() * 12 + b.getUTCMonth()).toBe(expectedMonth);
          expect(b.getUTCDate()).toBe(Math.min(a.getUTCDate(), lastDay(b.getUTCFullYear(), b.getUTCMonth())));
        }),
      );
    });

    it('day and week boundaries are exact multiples of 24 hours', () => {
      fc.assert(
        fc.property(anchor, fc.constantFrom<IntervalUnit>('day', 'week'), count, n, (a, u, c, i) => {
          const b = periodBoundary(a, u, c, i);
          expect(b.getTime() - a.getTime()).toBe(c * i * (u === 'week' ? 7 : 1) * dayMs);
        }),
      );
    });

    it('periodContaining(at) gives start <= at < end, at the boundaries of its index', () => {
      const offset = fc.integer({ min: -20 * 366 * dayMs, max: 20 * 366 * dayMs });
      fc.assert(
        fc.property(anchor, unit, count, offset, (a, u, c, o) => {
          const at = new Date(a.getTime() + o);
          const period = periodContaining(a, u, c, at);
          expect(period.start.getTime()).toBeLessThanOrEqual(at.getTime());
          expect(at.getTime()).toBeLessThan(period.end.getTime());
          expect(period.start.getTime()).toBe(periodBoundary(a, u, c, period.index).getTime());
          expect(period.end.getTime()).toBe(periodBoundary(a, u, c, period.index + 1).getTime());
        }),
      );
    });

    it('days add up: days(a, b) + days(b, c) = days(a, c)', () => {
      fc.assert(
        fc.property(anchor, anchor, anchor, (a, b, c) => {
          expect(daysBetween(a, b) + daysBetween(b, c)).toBe(daysBetween(a, c));
        }),
      );
    });

    it('used and unused day prorations never exceed the amount and miss it by at most a paisa', () => {
      const input = fc
        .tuple(fc.nat({ max: 1_000_000_000 }), fc.integer({ min: 1, max: 366 }))
        .chain(([amount, total]) => fc.tuple(fc.constant(amount), fc.constant(total), fc.integer({ min: 0, max: total })));
      fc.assert(
        fc.property(input, ([amount, total, used]) => {
          const usedPart = prorateByDays(amount, used, total);
          const unusedPart = prorateByDays(amount, total - used, total);
          expect(usedPart).toBeGreaterThanOrEqual(0);
          expect(usedPart).toBeLessThanOrEqual(amount);
          expect(Math.abs(usedPart + unusedPart - amount)).toBeLessThanOrEqual(1);
        }),
      );
    });
  });
});
