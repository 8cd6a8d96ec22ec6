/**
 * Billing-period arithmetic in UTC. Pure: no clock, no database.
 *
 * Period n of a subscription is [periodBoundary(n), periodBoundary(n + 1)). Every boundary is
 * computed from the anchor (anchor + n × interval), never from the previous period's end, so a
 * month-end clamp (Jan 31 → Feb 28) does not carry into the next period (→ Mar 31, not Mar 28).
 * The anchor's time of day is kept. Days and weeks are exact multiples of 24 h: UTC has no DST.
 */
import { mulDivRoundHalfUp } from '../../platform/money.js';
import type { IntervalUnit } from '../plans/index.js';

export type BillingPeriod = { index: number; start: Date; end: Date };

const DAY_MS = 86_400_000;

function timeOf(date: Date, what: string): number {
  const time = date.getTime();
  if (Number.isNaN(time)) throw new RangeError(`${what} is not a valid date`);
  return time;
}

function toDate(time: number): Date {
  const date = new Date(time);
  if (Number.isNaN(date.getTime())) throw new RangeError('the period boundary falls outside the supported date range');
  return date;
}

function checkInteger(value: number, what: string): void {
  if (!Number.isSafeInteger(value)) throw new RangeError(`${what} must be an integer, got ${value}`);
}

/** Milliseconds since UTC midnight (non-negative also before 1970). */
function timeOfDay(time: number): number {
  return ((time % DAY_MS) + DAY_MS) % DAY_MS;
}

/** UTC midnight of (year, month, day); setUTCFullYear avoids Date.UTC's 0–99 → 1900s quirk. */
function utcMidnight(year: number, month: number, day: number): number {
  const date = new Date(0);
  date.setUTCFullYear(year, month, day);
  return date.getTime();
}

function daysInMonth(year: number, month: number): number {
  return new Date(utcMidnight(year, month + 1, 0)).getUTCDate();
}

function addMonths(time: number, months: number): Date {
  const date = new Date(time);
  const monthIndex = date.getUTCMonth() + months;
  const year = date.getUTCFullYear() + Math.floor(monthIndex / 12);
  const month = ((monthIndex % 12) + 12) % 12;
  const day = Math.min(date.getUTCDate(), daysInMonth(year, month));
  return toDate(utcMidnight(year, month, day) + timeOfDay(time));
}

/**
 * `date` moved by `count` units (any integer, negative goes back). Months and years clamp to the
 * last day of a shorter month: Jan 31 + 1 month = Feb 28 (29 in a leap year), Feb 29 + 1 year = Feb 28.
 */
export function addInterval(date: Date, unit: IntervalUnit, count: number): Date {
  const time = timeOf(date, 'date');
  checkInteger(count, 'count');
  switch (unit) {
    case 'day':
      return toDate(time + count * DAY_MS);
    case 'week':
      return toDate(time + count * 7 * DAY_MS);
    case 'month':
      return addMonths(time, count);
    case 'year':
      return addMonths(time, count * 12);
  }
}

/** The start of period `n` (n = 0 is the anchor; negative n counts back before it). */
export function periodBoundary(anchor: Date, unit: IntervalUnit, intervalCount: number, n: number): Date {
  checkInteger(intervalCount, 'interval_count');
  if (intervalCount < 1) throw new RangeError(`interval_count must be at least 1, got ${intervalCount}`);
  checkInteger(n, 'period index');
  const steps = intervalCount * n;
  checkInteger(steps, 'interval_count × period index');
  return addInterval(anchor, unit, steps);
}

/** The period that holds `at`: start <= at < end. */
export function periodContaining(anchor: Date, unit: IntervalUnit, intervalCount: number, at: Date): BillingPeriod {
  const anchorTime = timeOf(anchor, 'anchor');
  const atTime = timeOf(at, 'at');
  const start = (n: number) => periodBoundary(anchor, unit, intervalCount, n).getTime();

  // An estimate, then exact correction against the real (clamped) boundaries. The estimate can
  // only overshoot (at sits before the clamped day in its month); correcting both ways is cheap.
  let index: number;
  if (unit === 'day' || unit === 'week') {
    const periodMs = intervalCount * (unit === 'week' ? 7 : 1) * DAY_MS;
    index = Math.floor((atTime - anchorTime) / periodMs);
  } else {
    const a = new Date(anchorTime);
    const b = new Date(atTime);
    const months = (b.getUTCFullYear() - a.getUTCFullYear()) * 12 + (b.getUTCMonth() - a.getUTCMonth());
    index = Math.floor(months / (intervalCount * (unit === 'year' ? 12 : 1)));
  }
  while (start(index) > atTime) index -= 1;
  while (start(index + 1) <= atTime) index += 1;
  return { index, start: new Date(start(index)), end: new Date(start(index + 1)) };
}

/**
 * Whole UTC calendar days from `a` to `b` (negative when b is earlier), ignoring the time of day:
 * 23:00 on the 28th to 01:00 on the 1st of March is 2 days in a leap year. Calendar days add up
 * (days(a, b) + days(b, c) = days(a, c)), so used + remaining days always equal the period's.
 */
export function daysBetween(a: Date, b: Date): number {
  const from = timeOf(a, 'a');
  const to = timeOf(b, 'b');
  return (to - timeOfDay(to) - (from - timeOfDay(from))) / DAY_MS;
}

/**
 * amount × part ÷ whole, rounded half-up. The unit of part and whole is the caller's choice:
 * milliseconds for exact-time proration, whole days for `prorateByDays`.
 */
export function prorate(amount: number, part: number, whole: number): number {
  checkInteger(part, 'part');
  checkInteger(whole, 'whole');
  if (whole <= 0 || part < 0 || part > whole) throw new RangeError(`proration needs 0 <= part <= whole and whole > 0, got ${part}/${whole}`);
  return mulDivRoundHalfUp(amount, part, whole);
}

/**
 * Proration "to the day" (the subscriptions rule): days counted with `daysBetween`, e.g. the
 * unused part of a plan = prorateByDays(price, daysBetween(change, periodEnd), daysBetween(start, end)).
 */
export function prorateByDays(amount: number, usedDays: number, totalDays: number): number {
  return prorate(amount, usedDays, totalDays);
}
