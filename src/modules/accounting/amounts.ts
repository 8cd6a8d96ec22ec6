import { currencyExponent } from '../../platform/money.js';

// The minor-unit digits come from the one ISO 4217 table (platform/currencies.ts): a second table
// here knew only zero-decimal codes, so a 12.345 KWD invoice (12345 fils) was exported as 123.45.

/**
 * Minor units as the decimal string accounting software expects (`118000` INR → `"1180.00"`).
 * Built from the integer digits, so no float ever touches the amount.
 */
export function majorUnitsText(minor: number, currency: string): string {
  const exponent = currencyExponent(currency);
  const sign = minor < 0 ? '-' : '';
  const digits = Math.abs(minor)
    .toString()
    .padStart(exponent + 1, '0');
  if (exponent === 0) return `${sign}${digits}`;
  return `${sign}${digits.slice(0, -exponent)}.${digits.slice(-exponent)}`;
}

/** The same as a JSON number (the providers' APIs take numbers); exact for any amount up to 2^53 / 100. */
export function majorUnits(minor: number, currency: string): number {
  return Number(majorUnitsText(minor, currency));
}

/** A GST rate in basis points as the mapping key's percent (`1800` → `"18"`, `250` → `"2.5"`). */
export function ratePercent(rateBp: number): string {
  return String(rateBp / 100);
}
