import { formatMoney } from '../../platform/money.js';
import type { PaymentMethodRow } from './collections.repository.js';

/**
 * E-mandate rules (issue #32 item 7, docs/decisions/0520). Sources, verified and cited in the
 * decision: RBI's e-mandate framework for recurring transactions (2019 circular, the June 2022
 * ₹15 000 relaxation, the December 2023 ₹1 lakh categories; consolidated as "Digital Payments –
 * E-mandate Framework, 2026" of 21 April 2026) and NPCI's UPI API-usage circular (AutoPay
 * executions outside peak hours, one attempt and three retries, from 31 July 2025).
 */

/** NPCI UPI AutoPay frequencies (and `as_presented`), as the mandate states them. */
export const MANDATE_FREQUENCIES = [
  'one_time',
  'daily',
  'weekly',
  'fortnightly',
  'monthly',
  'bimonthly',
  'quarterly',
  'half_yearly',
  'yearly',
  'as_presented',
] as const;
export type MandateFrequency = (typeof MANDATE_FREQUENCIES)[number];

/** Why a mandate debit is not attempted (the attempt's failure_code); the customer is sent a pay link instead. */
export type MandateBlock = { code: 'mandate_authentication_required' | 'mandate_max_amount_exceeded' | 'mandate_outside_validity'; message: string };

/** The attempt codes after which a mandate is not debited again for that invoice (it waits for the customer's own payment). */
export const MANDATE_STOP_CODES = ['mandate_authentication_required', 'mandate_max_amount_exceeded', 'mandate_outside_validity', 'mandate_debit_skipped'];

/**
 * Whether a debit of `amount` on the mandate at `at` (when it would be made) may go ahead: above
 * the AFA-free limit (INR only: the limit is in rupees), above the mandate's maximum, or outside
 * its validity, it may not — the customer must authenticate the payment themselves.
 */
export function mandateDebitBlock(
  pm: Pick<PaymentMethodRow, 'mandate_max_amount' | 'mandate_valid_from' | 'mandate_valid_until'>,
  debit: { amount: number; currency: string; at: Date },
  afaLimit: number,
): MandateBlock | null {
  const money = (n: number) => formatMoney(n, debit.currency);
  if (debit.currency === 'INR' && debit.amount > afaLimit)
    return {
      code: 'mandate_authentication_required',
      message: `${money(debit.amount)} is above ${money(afaLimit)}, the most a mandate debit may take without the customer's additional authentication (RBI e-mandate framework)`,
    };
  const max = pm.mandate_max_amount === null ? null : Number(pm.mandate_max_amount);
  if (max !== null && debit.amount > max)
    return {
      code: 'mandate_max_amount_exceeded',
      message: `${money(debit.amount)} is above the mandate's maximum of ${money(max)}`,
    };
  const from = pm.mandate_valid_from;
  const until = pm.mandate_valid_until;
  if ((from && debit.at < from) || (until && debit.at >= until))
    return {
      code: 'mandate_outside_validity',
      message: `the debit's date ${debit.at.toISOString()} is outside the mandate's validity (${from?.toISOString() ?? '…'} to ${until?.toISOString() ?? '…'})`,
    };
  return null;
}

/** NPCI: a UPI AutoPay debit gets one attempt and at most three retries. */
export const AUTOPAY_MAX_ATTEMPTS = 4;

/** IST is UTC+05:30 all year (no daylight saving). */
const IST_OFFSET_MIN = 5 * 60 + 30;
/** NPCI's UPI peak hours (IST minutes of the day, [start, end)): 10:00–13:00 and 17:00–21:30; no AutoPay execution then. */
export const UPI_PEAK_WINDOWS: readonly (readonly [number, number])[] = [
  [10 * 60, 13 * 60],
  [17 * 60, 21 * 60 + 30],
];

/** The first instant at or after `at` outside NPCI's peak hours (unchanged when already outside). */
export function outsideUpiPeak(at: Date): Date {
  const istMs = at.getTime() + IST_OFFSET_MIN * 60_000;
  const dayStart = Math.floor(istMs / 86_400_000) * 86_400_000;
  const minute = (istMs - dayStart) / 60_000;
  for (const [start, end] of UPI_PEAK_WINDOWS) {
    if (minute >= start && minute < end) return new Date(dayStart + end * 60_000 - IST_OFFSET_MIN * 60_000);
  }
  return at;
}

export const inUpiPeak = (at: Date): boolean => outsideUpiPeak(at).getTime() !== at.getTime();
