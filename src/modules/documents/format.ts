import { assertMinorUnits, currencyExponent, formatAmount, formatMoney } from '../../platform/money.js';

/**
 * How amounts, rates and dates look on printed documents. Pure string work on integers: an amount
 * never passes through a float on its way to paper.
 */

export { currencyExponent, formatAmount, formatMoney };

/** Basis points as a percentage without trailing zeros: 1800 → "18%", 125 → "1.25%", 12.5 → "0.125%". */
export function formatRate(basisPoints: number): string {
  return `${Number((basisPoints / 100).toFixed(4))}%`;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/**
 * "01 Apr 2026" in the given time zone. Indian documents use India time: an invoice finalized at
 * 20:00 UTC on 31 March is dated 1 April, in the next financial year, as the supplier's books say.
 */
export function formatDate(iso: string | null, timeZone: string): string {
  if (!iso) return '—';
  const parts = new Intl.DateTimeFormat('en-US', { timeZone, year: 'numeric', month: 'numeric', day: 'numeric' }).formatToParts(new Date(iso));
  const part = (type: string) => Number(parts.find((p) => p.type === type)!.value);
  return `${String(part('day')).padStart(2, '0')} ${MONTHS[part('month') - 1]} ${part('year')}`;
}

const ONES = [
  '',
  'One',
  'Two',
  'Three',
  'Four',
  'Five',
  'Six',
  'Seven',
  'Eight',
  'Nine',
  'Ten',
  'Eleven',
  'Twelve',
  'Thirteen',
  'Fourteen',
  'Fifteen',
  'Sixteen',
  'Seventeen',
  'Eighteen',
  'Nineteen',
];
const TENS = ['', '', 'Twenty', 'Thirty', 'Forty', 'Fifty', 'Sixty', 'Seventy', 'Eighty', 'Ninety'];

function belowHundred(n: number): string {
  if (n < 20) return ONES[n]!;
  return TENS[Math.floor(n / 10)]! + (n % 10 ? `-${ONES[n % 10]}` : '');
}

function belowThousand(n: number): string {
  const hundreds = Math.floor(n / 100);
  const rest = n % 100;
  return [hundreds ? `${ONES[hundreds]} Hundred` : '', rest ? belowHundred(rest) : ''].filter(Boolean).join(' ');
}

/** Whole number in the Indian system: 12345678 → "One Crore Twenty-Three Lakh Forty-Five Thousand Six Hundred Seventy-Eight". */
export function indianNumberInWords(n: number): string {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`not a non-negative safe integer: ${n}`);
  if (n === 0) return 'Zero';
  const crore = Math.floor(n / 10_000_000);
  const lakh = Math.floor((n % 10_000_000) / 100_000);
  const thousand = Math.floor((n % 100_000) / 1000);
  const rest = n % 1000;
  return [
    crore ? `${indianNumberInWords(crore)} Crore` : '',
    lakh ? `${belowHundred(lakh)} Lakh` : '',
    thousand ? `${belowHundred(thousand)} Thousand` : '',
    rest ? belowThousand(rest) : '',
  ]
    .filter(Boolean)
    .join(' ');
}

/** The total in words, as Indian invoices print it; only for INR (undefined otherwise). */
export function rupeesInWords(paise: number, currency: string): string | undefined {
  if (currency !== 'INR') return undefined;
  assertMinorUnits(paise);
  const rupees = Math.floor(Math.abs(paise) / 100);
  const rest = Math.abs(paise) % 100;
  return `Indian Rupees ${indianNumberInWords(rupees)}${rest ? ` and ${belowHundred(rest)} Paise` : ''} Only`;
}
