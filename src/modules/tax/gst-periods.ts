/**
 * Dates as GST sees them: in the supplier's time zone (India: Asia/Kolkata), so an invoice issued
 * at 20:00 UTC on 31 March is dated 1 April and belongs to the next financial year and return
 * period. Pure functions; no clock.
 */

export type LocalDate = { year: number; month: number; day: number };

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' });
    formatters.set(timeZone, f);
  }
  return f;
}

export function localDate(instant: Date, timeZone: string): LocalDate {
  const parts = formatterFor(timeZone).formatToParts(instant);
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value);
  return { year: get('year'), month: get('month'), day: get('day') };
}

const pad = (n: number) => String(n).padStart(2, '0');

/** `YYYY-MM-DD`: the calendar day of an instant in a time zone (the entity's), the one form every local-day comparison uses. */
export function localDay(instant: Date, timeZone: string): string {
  const d = localDate(instant, timeZone);
  return `${String(d.year).padStart(4, '0')}-${pad(d.month)}-${pad(d.day)}`;
}

/** `dd/mm/yyyy`, the IRP's and GSTN's date format. */
export function gstDate(instant: Date, timeZone: string): string {
  const d = localDate(instant, timeZone);
  return `${pad(d.day)}/${pad(d.month)}/${d.year}`;
}

const QUARTER_HOUR_MS = 15 * 60_000;

/**
 * `dd-mm-yyyy`, the GSTN offline tool's format, in one zone. The formatter it answers memoizes per
 * quarter hour (every zone's offset is a whole number of quarter hours, so a local date never
 * changes inside one): a month's return formats a few thousand distinct instants, not one per
 * invoice. The memo is the caller's (one return's builder), never the process's.
 */
export function gstnOfflineDates(timeZone: string): (instant: Date) => string {
  const memo = new Map<number, string>();
  return (instant) => {
    const key = Math.floor(instant.getTime() / QUARTER_HOUR_MS);
    let text = memo.get(key);
    if (text === undefined) {
      const d = localDate(instant, timeZone);
      text = `${pad(d.day)}-${pad(d.month)}-${d.year}`;
      if (memo.size > 100_000) memo.clear();
      memo.set(key, text);
    }
    return text;
  };
}

/** The Indian financial year (1 April – 31 March) of a date, as `2026-27`. */
export function financialYear(instant: Date, timeZone: string): string {
  const d = localDate(instant, timeZone);
  const start = d.month >= 4 ? d.year : d.year - 1;
  return `${start}-${pad((start + 1) % 100)}`;
}

/**
 * The UTC instant at which a local calendar day begins in the zone. Works for any zone (the
 * offset is read at that day, so a DST shift between months is handled).
 */
export function startOfLocalDay(year: number, month: number, day: number, timeZone: string): Date {
  const asUtc = Date.UTC(year, month - 1, day);
  const first = asUtc - zoneOffsetMs(new Date(asUtc), timeZone);
  return new Date(asUtc - zoneOffsetMs(new Date(first), timeZone));
}

function zoneOffsetMs(instant: Date, timeZone: string): number {
  const f = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  });
  const parts = Object.fromEntries(f.formatToParts(instant).map((p) => [p.type, p.value]));
  const asUtc = Date.UTC(Number(parts.year), Number(parts.month) - 1, Number(parts.day), Number(parts.hour), Number(parts.minute), Number(parts.second));
  return asUtc - Math.floor(instant.getTime() / 1000) * 1000;
}

/** A return period `MMYYYY` as the half-open UTC interval of its local month. */
export function returnPeriodBounds(period: { month: number; year: number }, timeZone: string): { from: Date; to: Date } {
  const next = period.month === 12 ? { month: 1, year: period.year + 1 } : { month: period.month + 1, year: period.year };
  return { from: startOfLocalDay(period.year, period.month, 1, timeZone), to: startOfLocalDay(next.year, next.month, 1, timeZone) };
}

/**
 * The supply type of a zero-rated supply (IGST Act s.16): an export or a supply to an SEZ unit,
 * with payment of IGST (refund claimed later) or under a Letter of Undertaking without payment.
 * This is the one place that classifies them: the e-invoice's SupTyp and GSTR-1's `exp`/SEZ
 * sections both read it.
 *
 * A document is an export when its tax_type is `export`, an SEZ supply when it is `sez` (the
 * customer's `sez` flag, decision 0025; `customer_sez` for callers that only know the customer);
 * "with payment" when it carries IGST (the entity had no LUT).
 */
export type ZeroRatedSupply = { kind: 'export' | 'sez'; withPayment: boolean } | null;

export function classifyZeroRatedSupply(doc: { tax_type: string; igst_amount: number; customer_sez?: boolean | null }): ZeroRatedSupply {
  if (doc.tax_type === 'export') return { kind: 'export', withPayment: doc.igst_amount > 0 };
  if (doc.tax_type === 'sez' || doc.customer_sez) return { kind: 'sez', withPayment: doc.igst_amount > 0 };
  return null;
}
