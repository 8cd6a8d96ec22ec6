import { errors } from '../../platform/errors.js';
import { randomBytes } from 'node:crypto';
import { mulDivRoundHalfUp } from '../../platform/money.js';
import type { IntervalUnit } from '../plans/index.js';

/**
 * 32 symbols without the look-alikes 0/O and 1/I, so a code read aloud or copied from paper
 * survives. 32 = 2^5, so `byte & 31` picks a symbol without modulo bias.
 */
export const GIFT_CODE_ALPHABET = '23456789ABCDEFGHJKLMNPQRSTUVWXYZ';
const GROUPS = 4;
const GROUP_LENGTH = 4;

/** A fresh code: 4 groups of 4 symbols (80 random bits), e.g. `K7QM-2XHB-WN9D-R4TE`. */
export function generateGiftCode(random: (n: number) => Buffer = randomBytes): string {
  const bytes = random(GROUPS * GROUP_LENGTH);
  const symbols = [...bytes].map((b) => GIFT_CODE_ALPHABET[b & 31]!);
  const groups: string[] = [];
  for (let g = 0; g < GROUPS; g++) groups.push(symbols.slice(g * GROUP_LENGTH, (g + 1) * GROUP_LENGTH).join(''));
  return groups.join('-');
}

/**
 * What a person typed, in the stored form: case, spaces and dashes do not matter. Anything that
 * cannot be a code gives null (the caller answers the same 422 as for an unknown code).
 */
export function normalizeGiftCode(input: string): string | null {
  const compact = input.toUpperCase().replace(/[\s-]/g, '');
  if (compact.length !== GROUPS * GROUP_LENGTH) return null;
  for (const c of compact) if (!GIFT_CODE_ALPHABET.includes(c)) return null;
  return compact.match(new RegExp(`.{${GROUP_LENGTH}}`, 'g'))!.join('-');
}

/**
 * The price of a gift of `months` months of a plan that charges `amount` every
 * `intervalCount` `unit`s:
 *   - monthly plans: amount × months ÷ interval_count
 *   - yearly plans:  amount × months ÷ (12 × interval_count)
 * rounded half-up once, at the end (so a 12-month gift of a yearly plan costs exactly one year).
 * Day and week plans have no whole-month price and are refused (null).
 */
export function giftPrice(amount: number, unit: IntervalUnit, intervalCount: number, months: number): number | null {
  const perPeriod = unit === 'month' ? intervalCount : unit === 'year' ? 12 * intervalCount : null;
  if (perPeriod === null) return null;
  // amount × months ÷ months-per-period beyond 2^53 − 1 is a price nobody can be charged: a 400.
  if (BigInt(amount) * BigInt(months) > BigInt(Number.MAX_SAFE_INTEGER) * BigInt(perPeriod)) {
    throw errors.invalidField('duration_months', `the gift's price exceeds the largest amount Kosh holds (${Number.MAX_SAFE_INTEGER} minor units)`);
  }
  return mulDivRoundHalfUp(amount, months, perPeriod);
}
