/**
 * The one ISO 4217 table: every currency Kosh takes and the digits of its minor unit (DESIGN §19).
 * Source: ISO 4217 List One ("Current currency & funds code list", SIX Financial Information AG as
 * maintenance agency, as of 2025: XCG added to replace ANG, which is still accepted; ZWG in place
 * of ZWL). Only codes with a minor unit are here: precious metals, SDR, bond-market units and
 * testing codes (XAU, XDR, XTS, XXX …) have none ("N.A.") and are not money Kosh bills in.
 *
 * The runtime's Intl data is not used: CLDR differs from ISO on several codes (IQD 0 vs 3, LBP 0 vs
 * 2, YER 0 vs 2 …), and an amount in minor units means what ISO says.
 */
const THREE = ['BHD', 'IQD', 'JOD', 'KWD', 'LYD', 'OMR', 'TND'];
const FOUR = ['CLF', 'UYW'];
const ZERO = ['BIF', 'CLP', 'DJF', 'GNF', 'ISK', 'JPY', 'KMF', 'KRW', 'PYG', 'RWF', 'UGX', 'UYI', 'VND', 'VUV', 'XAF', 'XOF', 'XPF'];
const TWO = [
  'AED', 'AFN', 'ALL', 'AMD', 'ANG', 'AOA', 'ARS', 'AUD', 'AWG', 'AZN', 'BAM', 'BBD', 'BDT', 'BGN', 'BMD', 'BND', 'BOB', 'BOV', 'BRL',
  'BSD', 'BTN', 'BWP', 'BYN', 'BZD', 'CAD', 'CDF', 'CHE', 'CHF', 'CHW', 'CNY', 'COP', 'COU', 'CRC', 'CUP', 'CVE', 'CZK', 'DKK', 'DOP',
  'DZD', 'EGP', 'ERN', 'ETB', 'EUR', 'FJD', 'FKP', 'GBP', 'GEL', 'GHS', 'GIP', 'GMD', 'GTQ', 'GYD', 'HKD', 'HNL', 'HTG', 'HUF', 'IDR',
  'ILS', 'INR', 'IRR', 'JMD', 'KES', 'KGS', 'KHR', 'KPW', 'KYD', 'KZT', 'LAK', 'LBP', 'LKR', 'LRD', 'LSL', 'MAD', 'MDL', 'MGA', 'MKD',
  'MMK', 'MNT', 'MOP', 'MRU', 'MUR', 'MVR', 'MWK', 'MXN', 'MXV', 'MYR', 'MZN', 'NAD', 'NGN', 'NIO', 'NOK', 'NPR', 'NZD', 'PAB', 'PEN',
  'PGK', 'PHP', 'PKR', 'PLN', 'QAR', 'RON', 'RSD', 'RUB', 'SAR', 'SBD', 'SCR', 'SDG', 'SEK', 'SGD', 'SHP', 'SLE', 'SOS', 'SRD', 'SSP',
  'STN', 'SVC', 'SYP', 'SZL', 'THB', 'TJS', 'TMT', 'TOP', 'TRY', 'TTD', 'TWD', 'TZS', 'UAH', 'USD', 'USN', 'UYU', 'UZS', 'VED', 'VES',
  'WST', 'XCD', 'XCG', 'YER', 'ZAR', 'ZMW', 'ZWG',
]; // prettier-ignore

const EXPONENTS: ReadonlyMap<string, number> = new Map([
  ...ZERO.map((code) => [code, 0] as const),
  ...TWO.map((code) => [code, 2] as const),
  ...THREE.map((code) => [code, 3] as const),
  ...FOUR.map((code) => [code, 4] as const),
]);

/** Every ISO 4217 code Kosh accepts, sorted. */
export const CURRENCY_CODES: readonly string[] = [...EXPONENTS.keys()].sort();

/** An ISO 4217 code with a minor unit (upper case, as stored). */
export function isKnownCurrency(code: string): boolean {
  return EXPONENTS.has(code);
}

/**
 * Digits after the decimal point (2 for INR and USD, 0 for JPY, 3 for KWD). A code outside the
 * table is a RangeError: every way a currency enters Kosh refuses it first, so one here is a bug,
 * and guessing 2 would scale a KWD amount by ten.
 */
export function currencyExponent(currency: string): number {
  const exponent = EXPONENTS.get(currency.toUpperCase());
  if (exponent === undefined) throw new RangeError(`${currency} is not an ISO 4217 currency with a minor unit`);
  return exponent;
}
