/**
 * Reporting rates of organizations: an exact decimal string (up to 12 digits on each side), units
 * of the reporting currency per one unit of the source currency. Conversion itself is the
 * platform's `convertMinorUnits` (integer arithmetic, minor-unit exponents, half-up once).
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
