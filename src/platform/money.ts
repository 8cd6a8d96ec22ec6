/**
 * Money is an integer count of minor units (paise, cents) from the API to the database.
 * Rounding happens in exactly one place — `mulDivRoundHalfUp` — and uses BigInt inside so that
 * large amounts times basis points never lose precision.
 */
import { currencyExponent } from './currencies.js';

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

/** The ISO 4217 minor-unit digits live in one table (./currencies.ts); re-exported for the callers of money. */
export { currencyExponent };

/**
 * Exchange rates are decimal strings — units of the target currency per one (major) unit of the
 * source currency, e.g. "83.2575" rupees per US dollar — with at most 9 integer and 6 fractional
 * digits, never floats. Inside they are an integer count of millionths.
 */
export const EXCHANGE_RATE_PATTERN = /^\d{1,9}(\.\d{1,6})?$/;
const RATE_SCALE = 1_000_000n;

/** The rate in millionths; a RangeError for anything but a positive decimal string of the pattern. */
export function exchangeRateMicros(rate: string): bigint {
  if (!EXCHANGE_RATE_PATTERN.test(rate)) throw new RangeError(`exchange rate "${rate}" is not a decimal such as "83.2575"`);
  const [whole, fraction = ''] = rate.split('.');
  const micros = BigInt(whole!) * RATE_SCALE + BigInt(fraction.padEnd(6, '0'));
  if (micros <= 0n) throw new RangeError('exchange rate must be greater than zero');
  return micros;
}

/** The canonical spelling of a rate: no leading zeros, no trailing fractional zeros ("083.2500" → "83.25"). */
export function canonicalExchangeRate(rate: string): string {
  const micros = exchangeRateMicros(rate);
  const whole = (micros / RATE_SCALE).toString();
  const fraction = (micros % RATE_SCALE).toString().padStart(6, '0').replace(/0+$/, '');
  return fraction ? `${whole}.${fraction}` : whole;
}

/** A positive decimal string as an integer and its power of ten ("83.25" → 8325 and 100). */
function exactDecimal(rate: string): { units: bigint; scale: bigint } {
  const m = /^(\d+)(?:\.(\d+))?$/.exec(rate);
  if (!m) throw new RangeError(`rate "${rate}" is not a decimal such as "83.2575"`);
  const fraction = m[2] ?? '';
  const units = BigInt(m[1]! + fraction);
  if (units <= 0n) throw new RangeError('rate must be greater than zero');
  return { units, scale: 10n ** BigInt(fraction.length) };
}

/**
 * Converts minor units of `from` into minor units of `to` at `rate` (units of `to` per unit of
 * `from`, an exact decimal string at whatever precision its caller allows: invoices 6 digits,
 * organizations' reporting rates 12), rounded half-up once: amount × rate × 10^exp(to) ÷
 * 10^exp(from). A RangeError when the result is not a safe integer.
 */
export function convertMinorUnits(amount: number, from: string, to: string, rate: string): number {
  assertMinorUnits(amount);
  const { units, scale } = exactDecimal(rate);
  const numerator = BigInt(amount) * units * 10n ** BigInt(currencyExponent(to));
  const denominator = scale * 10n ** BigInt(currencyExponent(from));
  const negative = numerator < 0n;
  const abs = negative ? -numerator : numerator;
  let q = abs / denominator;
  if ((abs % denominator) * 2n >= denominator) q += 1n;
  const result = negative ? -q : q;
  if (result > BigInt(Number.MAX_SAFE_INTEGER) || result < -BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new RangeError(`converted amount ${result} is beyond the safe integer range`);
  }
  return Number(result);
}

// ── How an amount reads (documents, mails, pages): pure string work on the integer, never a float ──

/** 1234567 → "12,34,567" (Indian lakh/crore grouping) or "1,234,567". */
function groupDigits(digits: string, indian: boolean): string {
  if (!indian) return digits.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  if (digits.length <= 3) return digits;
  return `${digits.slice(0, -3).replace(/\B(?=(\d{2})+(?!\d))/g, ',')},${digits.slice(-3)}`;
}

/** 12345678 paise → "1,23,456.78"; INR uses Indian grouping, other currencies groups of three. */
export function formatAmount(minor: number, currency: string): string {
  assertMinorUnits(minor);
  const exponent = currencyExponent(currency);
  const digits = String(Math.abs(minor)).padStart(exponent + 1, '0');
  const whole = groupDigits(digits.slice(0, digits.length - exponent), currency === 'INR');
  const fraction = exponent > 0 ? `.${digits.slice(digits.length - exponent)}` : '';
  return `${minor < 0 ? '-' : ''}${whole}${fraction}`;
}

/**
 * "INR 1,23,456.78". The currency code, not "₹": the PDF's standard fonts (Helvetica) have no
 * rupee glyph, and a code reads the same in every mail client and text extractor.
 */
export function formatMoney(minor: number, currency: string): string {
  return `${currency} ${formatAmount(minor, currency)}`;
}

/**
 * How a page shows an amount to a person (portal, checkout): "₹4,128.82" for rupees — the
 * dashboard's en-IN form and the PDFs' digits (formatAmount) — and "USD 1,234.56" for a currency
 * without a sign every reader knows. Mails and PDFs keep formatMoney (see above).
 */
export function displayMoney(minor: number, currency: string): string {
  if (currency !== 'INR') return formatMoney(minor, currency);
  const amount = formatAmount(minor, currency);
  return amount.startsWith('-') ? `-₹${amount.slice(1)}` : `₹${amount}`;
}
