/**
 * Money is an integer count of minor units (paise, cents) from the API to the database.
 * Rounding happens in exactly one place — `mulDivRoundHalfUp` — and uses BigInt inside so that
 * large amounts times basis points never lose precision.
 */

export const MAX_MINOR_UNITS = Number.MAX_SAFE_INTEGER;

export function assertMinorUnits(value: number, what = 'amount'): number {
  if (!Number.isSafeInteger(value)) {
    throw new RangeError(`${what} must be a safe integer of minor units, got ${value}`);
  }
  return value;
}

/**
 * value × numerator ÷ denominator, rounded half away from zero (the "half-up" rule GST uses for
 * paise). Works for negative values symmetrically so reversals mirror the original rounding.
 */
export function mulDivRoundHalfUp(value: number, numerator: number, denominator: number): number {
  assertMinorUnits(value);
  if (!Number.isSafeInteger(numerator) || !Number.isSafeInteger(denominator) || denominator <= 0) {
    throw new RangeError('numerator and denominator must be safe integers, denominator > 0');
  }
  const product = BigInt(value) * BigInt(numerator);
  const d = BigInt(denominator);
  const negative = product < 0n;
  const abs = negative ? -product : product;
  let q = abs / d;
  if ((abs % d) * 2n >= d) q += 1n;
  const result = Number(negative ? -q : q);
  return assertMinorUnits(result, 'rounded amount');
}

export function sumMinorUnits(values: readonly number[]): number {
  let total = 0;
  for (const v of values) total += assertMinorUnits(v);
  return assertMinorUnits(total, 'sum');
}
