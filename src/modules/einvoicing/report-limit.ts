import { localDate, localDay, startOfLocalDay } from '../tax/index.js';

/**
 * The IRP's reporting limit (decision 0363; GSTN advisories of 13 September 2023 and 5 November
 * 2024): from 1 April 2025 a taxpayer whose aggregate annual turnover is ₹10 crore or more cannot
 * report an invoice, credit note or debit note to the IRP more than 30 days after its date. "An
 * invoice dated 1 April must be reported by 30 April": the document's date and the next 29 days.
 * Whether the limit applies is the entity's setting (`aato_band`), which the finance team sets
 * from its own turnover.
 */
export const IRP_LIMIT_FROM = new Date('2025-03-31T18:30:00Z'); // 1 April 2025, 00:00 IST
export const REPORTING_DAYS = 30;
/** Alerts go out this many days before the last day (event einvoice.report_due). */
export const REPORT_ALERT_DAYS = [5, 1] as const;

/**
 * The instant after which the IRP refuses the document — 00:00 (entity zone) of the day after its
 * last reportable day — or null when no limit applies (turnover band below ₹10 crore, documents
 * dated before 1 April 2025).
 */
export function reportDeadline(documentDate: Date, aatoBand: string, timeZone: string, days = REPORTING_DAYS): Date | null {
  if (aatoBand !== '10_crore_or_more' || documentDate < IRP_LIMIT_FROM) return null;
  const d = localDate(documentDate, timeZone);
  return startOfLocalDay(d.year, d.month, d.day + days, timeZone);
}

/** The last reportable day (YYYY-MM-DD in the entity's zone) of a deadline. */
export function lastReportableDay(deadline: Date, timeZone: string): string {
  return localDay(new Date(deadline.getTime() - 1), timeZone);
}
