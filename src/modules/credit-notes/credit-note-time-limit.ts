import { errors } from '../../platform/errors.js';
import { financialYear, localDate } from '../tax/index.js';

/**
 * CGST Act s.34(2), as substituted by s.102 of the Finance Act 2022 (in force 1 October 2022,
 * notification 18/2022-Central Tax): a credit note on a supply is declared "not later than the
 * thirtieth day of November following the end of the financial year in which such supply was
 * made, or the date of furnishing of the relevant annual return, whichever is earlier". After
 * that the supplier's output tax can no longer be reduced (docs/decisions/0262).
 *
 * So a note dated after 30 November of year N+1 (in the entity's zone) on a supply of financial
 * year N (April N – March N+1) that would reverse tax is refused; a commercial credit
 * (`tax_reversal: false`) reduces only the customer's balance and is always allowed. The annual
 * return's filing date is not tracked: the 30 November bound alone applies.
 */
export function lastDayToReverseTax(suppliedAt: Date, timeZone: string): { year: number; month: 11; day: 30 } {
  const fyStart = Number(financialYear(suppliedAt, timeZone).slice(0, 4));
  return { year: fyStart + 1, month: 11, day: 30 };
}

export function assertTaxCreditInTime(invoice: { number: string | null; issued_at: Date | null; tax_amount: number }, noteDate: Date, timeZone: string): void {
  if (!invoice.issued_at || invoice.tax_amount <= 0) return; // nothing of output tax to reduce
  const last = lastDayToReverseTax(invoice.issued_at, timeZone);
  const d = localDate(noteDate, timeZone);
  const late = d.year > last.year || (d.year === last.year && (d.month > last.month || (d.month === last.month && d.day > last.day)));
  if (!late) return;
  throw errors.conflict(
    `invoice ${invoice.number} is a supply of financial year ${financialYear(invoice.issued_at, timeZone)}: its output tax can be reduced by a credit note only until 30 November ${last.year} (CGST Act s.34(2)); issue the credit with tax_reversal: false (a commercial credit: the customer's balance changes, output tax does not)`,
    'credit_note_time_barred',
  );
}
