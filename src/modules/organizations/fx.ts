/**
 * Currency conversion with integer arithmetic only. A rate is an exact decimal string (up to 12
 * fractional digits): units of the reporting currency per one unit of the source currency. Minor
 * units differ by currency (JPY 0, INR 2, BHD 3), so the exponent difference is applied too.
 */
const RATE_SCALE_DIGITS = 12;
const RATE = /^(\d{1,12})(?:\.(\d{1,12}))?$/;

/** Parses "83.25" into a scaled integer (83.25 × 10^12); throws on anything but a positive decimal. */
export function parseRate(value: string): bigint {
  const m = RATE.exec(value.trim());
  if (!m) throw new RangeError('rate must be a positive decimal with at most 12 digits before and after the point');
  const scaled = BigInt(m[1]! + (m[2] ?? '').padEnd(RATE_SCALE_DIGITS, '0'));
  if (scaled <= 0n) throw new RangeError('rate must be greater than 0');
  return scaled;
}

/** The canonical text of a rate (no trailing zeros). */
export function formatRate(value: string): string {
  const scaled = parseRate(value)
    .toString()
    .padStart(RATE_SCALE_DIGITS + 1, '0');
  const whole = scaled.slice(0, -RATE_SCALE_DIGITS);
  const fraction = scaled.slice(-RATE_SCALE_DIGITS).replace(/0+$/, '');
  return fraction ? `${whole}.${fraction}` : whole;
}

export function minorUnitDigits(currency: string): number {
  return new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
}

/** `amount` minor units of `from` in minor units of `to` at `rate`, rounded half-up once. */
export function convertMinorUnits(amount: number, from: string, to: string, rate: string): number {
  const shift = minorUnitDigits(to) - minorUnitDigits(from);
  let numerator = BigInt(amount) * parseRate(rate);
  let denominator = 10n ** BigInt(RATE_SCALE_DIGITS);
  if (shift > 0) numerator *= 10n ** BigInt(shift);
  else denominator *= 10n ** BigInt(-shift);
  const negative = numerator < 0n;
  const abs = negative ? -numerator : numerator;
  let q = abs / denominator;
  if ((abs % denominator) * 2n >= denominator) q += 1n;
  const result = Number(negative ? -q : q);
  if (!Number.isSafeInteger(result)) throw new RangeError('converted amount is beyond 2^53');
  return result;
}
