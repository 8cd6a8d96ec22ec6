/** Indian number formatting (₹1,23,456.00) and dates in the entity's time zone (Asia/Kolkata by default). */
let timeZone = 'Asia/Kolkata';

export function setTimeZone(zone: string | null | undefined): void {
  if (zone) timeZone = zone;
}

const moneyFormats = new Map<string, Intl.NumberFormat>();

/** Minor units → `₹1,23,456.00` (en-IN grouping for every currency; the currency's own digits). */
export function money(minor: number | null | undefined, currency = 'INR'): string {
  if (minor === null || minor === undefined) return '—';
  let format = moneyFormats.get(currency);
  if (!format) {
    format = new Intl.NumberFormat('en-IN', { style: 'currency', currency });
    moneyFormats.set(currency, format);
  }
  const digits = format.resolvedOptions().maximumFractionDigits ?? 2;
  return format.format(minor / 10 ** digits);
}

/** Major-unit text typed by a person (`1,234.50`) → minor units, or null when it is not an amount. */
export function toMinor(text: string, currency = 'INR'): number | null {
  const cleaned = text.replace(/[,\s₹]/g, '');
  if (!/^\d+(\.\d+)?$/.test(cleaned)) return null;
  const digits = new Intl.NumberFormat('en-IN', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
  const [whole, fraction = ''] = cleaned.split('.');
  if (fraction.length > digits) return null;
  return Number(whole) * 10 ** digits + Number(fraction.padEnd(digits, '0') || '0');
}

export function count(n: number): string {
  return new Intl.NumberFormat('en-IN').format(n);
}

export function dateTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  return new Intl.DateTimeFormat('en-IN', { timeZone, dateStyle: 'medium', timeStyle: 'short' }).format(new Date(iso));
}

export function date(iso: string | null | undefined): string {
  if (!iso) return '—';
  // A bare date (2026-04-01) is a calendar day, not an instant.
  if (/^\d{4}-\d{2}-\d{2}$/.test(iso)) return new Intl.DateTimeFormat('en-IN', { timeZone: 'UTC', dateStyle: 'medium' }).format(new Date(`${iso}T00:00:00Z`));
  return new Intl.DateTimeFormat('en-IN', { timeZone, dateStyle: 'medium' }).format(new Date(iso));
}

export function zone(): string {
  return timeZone;
}
