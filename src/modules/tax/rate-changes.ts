/**
 * Dated GST rate changes (DESIGN §25, decision 0360). The tables in rates.ts and sac.ts hold the
 * rates in force now; a code listed here had another rate before `from`. A document takes the
 * rate in force at its time of supply (rateDate below: CGST Act s.14 when a change falls between
 * the supply, the invoice and the payment).
 *
 * Sources: Notification 9/2025-Central Tax (Rate) (goods, from 22 September 2025, superseding
 * 1/2017) and 15/2025-Central Tax (Rate) (services, amending 11/2017, from 22 September 2025). The
 * goods rows below are the examples Kosh's tables carry; a code not listed here is taken to have
 * had its current rate throughout. A line or plan can always give `tax_rate_bp` instead.
 */
export type RateChange = {
  /** HSN/SAC code or heading the change applies to (the longest listed prefix wins). */
  code: string;
  /** First instant of the new rate (00:00 IST of the day the notification takes effect). */
  from: Date;
  /** IGST basis points before `from`; null when the code had no single rate. */
  before_bp: number | null;
  source: string;
};

/** 22 September 2025, 00:00 IST. */
export const SEPT_2025_CHANGE = new Date('2025-09-21T18:30:00Z');

export const RATE_CHANGES: readonly RateChange[] = [
  {
    code: '8415',
    from: SEPT_2025_CHANGE,
    before_bp: 2800,
    source: 'Air-conditioning machines: 28 % (1/2017-CT(Rate) Schedule IV) → 18 % (9/2025-CT(Rate) Schedule II)',
  },
  {
    code: '2201',
    from: SEPT_2025_CHANGE,
    before_bp: 1800,
    source: 'Mineral and aerated waters, not sweetened: 18 % (1/2017-CT(Rate) Schedule III) → 5 % (9/2025-CT(Rate) Schedule I)',
  },
];

/** The changes of a code, latest first (longest matching prefix). */
function changesOf(code: string): RateChange[] {
  for (const length of [8, 6, 4]) {
    if (code.length < length) continue;
    const prefix = code.slice(0, length);
    const found = RATE_CHANGES.filter((c) => c.code === prefix);
    if (found.length > 0) return [...found].sort((a, b) => b.from.getTime() - a.from.getTime());
  }
  return [];
}

/**
 * The rate of a code on `date` given its rate now: walks the code's changes back in time. Returns
 * `current` when no change of the code took effect after `date`; the earlier rate otherwise
 * (null: no single rate then).
 */
export function rateInForce(code: string, current: number | null, date: Date): number | null {
  let rate = current;
  for (const change of changesOf(code)) {
    if (date >= change.from) break;
    rate = change.before_bp;
  }
  return rate;
}

/** The change dates of a code, ascending. */
export function changeDatesOf(code: string): Date[] {
  return changesOf(code)
    .map((c) => c.from)
    .sort((a, b) => a.getTime() - b.getTime());
}

/**
 * The time of supply that decides the rate (CGST Act s.14 "change in rate of tax"), for one
 * change date. `payment` undefined: no payment received before the invoice, taken as received on
 * the invoice date (what Kosh knows when it issues a document; a later payment across a change
 * calls for a debit or credit note).
 *
 * Supply before the change: (a)(i) invoice and payment after → the earlier of the two (new rate);
 * (a)(ii) invoice before, payment after → the invoice date (old); (a)(iii) payment before,
 * invoice after → the payment date (old). Supply after the change: (b)(i) invoice before,
 * payment after → the payment date (new); (b)(ii) invoice and payment before → the earlier (old);
 * (b)(iii) invoice after, payment before → the invoice date (new). Everything on one side of the
 * change: s.14 does not apply; the earlier of invoice and payment (s.12/s.13) — the same side.
 */
export function rateDate(dates: { supply: Date; invoice: Date; payment?: Date }, change: Date): Date {
  const payment = dates.payment ?? dates.invoice;
  const invoice = dates.invoice;
  const before = (d: Date) => d < change;
  const earlier = payment < invoice ? payment : invoice;
  if (before(dates.supply)) {
    if (!before(invoice) && !before(payment)) return earlier; // (a)(i)
    if (before(invoice) && !before(payment)) return invoice; // (a)(ii)
    if (before(payment) && !before(invoice)) return payment; // (a)(iii)
    return earlier;
  }
  if (before(invoice) && !before(payment)) return payment; // (b)(i)
  if (before(invoice) && before(payment)) return earlier; // (b)(ii)
  if (!before(invoice) && before(payment)) return invoice; // (b)(iii)
  return earlier;
}

/**
 * The date whose rate a line takes: for the latest change of its code that falls between its
 * supply, invoice and payment dates, s.14's date; otherwise the earlier of invoice and payment.
 */
export function timeOfSupplyForRate(code: string, dates: { supply?: Date | null; invoice: Date; payment?: Date }): Date {
  const supply = dates.supply ?? dates.invoice;
  const all = [supply, dates.invoice, dates.payment ?? dates.invoice].map((d) => d.getTime());
  const lo = Math.min(...all);
  const hi = Math.max(...all);
  const straddled = changeDatesOf(code).filter((c) => c.getTime() > lo && c.getTime() <= hi);
  const change = straddled[straddled.length - 1];
  if (change) return rateDate({ supply, invoice: dates.invoice, payment: dates.payment }, change);
  const payment = dates.payment ?? dates.invoice;
  return payment < dates.invoice ? payment : dates.invoice;
}
