import type { Ctx } from '../../platform/context.js';
import type { ActionOutcome } from './dunning.tables.js';

/**
 * How a `retry_payment` step asks collections to charge the invoice again. Collections registers
 * it at start-up; it runs inside the step's transaction, so it must only record and queue the
 * charge (the gateway call happens in collections' own job, never inside this transaction).
 * Without one registered, retry steps are recorded as skipped.
 */
export type PaymentRetrier = (ctx: Ctx, invoiceId: string) => Promise<{ outcome: ActionOutcome; detail: string }>;

let registered: PaymentRetrier | undefined;

export function registerPaymentRetrier(retrier: PaymentRetrier): void {
  registered = retrier;
}

export function paymentRetrier(): PaymentRetrier | undefined {
  return registered;
}

/** Smart retry timing (docs/decisions/0131): what a retry's time is learned from. */
export const SMART_RETRY_HISTORY_DAYS = 180;
export const SMART_RETRY_MIN_SAMPLES = 10;
const HOUR = 3_600_000;
const WEEKDAYS = ['Sundays', 'Mondays', 'Tuesdays', 'Wednesdays', 'Thursdays', 'Fridays', 'Saturdays'];

export type RetryHistorySample = { succeeded_at: Date; after_failure: string | null };
export type RetryTiming = { at: Date; reason: string };

/**
 * When to run a retry the campaign scheduled at `base`. The history is the tenant's successful
 * charges; those that followed a failure with this invoice's failure code are used when there are
 * at least SMART_RETRY_MIN_SAMPLES of them, else all. Each of the 24 whole-hour slots from `base`
 * on scores the share of those successes that happened at its hour of day (UTC) — counted on its
 * weekday alone when that weekday has enough successes — and the best slot wins (ties: the
 * earliest). Too little history, or no slot better than the step's own time: the step's delay.
 */
export function chooseRetryTime(base: Date, failureCode: string | null, history: RetryHistorySample[]): RetryTiming {
  const sameCode = failureCode ? history.filter((h) => h.after_failure === failureCode) : [];
  const samples = sameCode.length >= SMART_RETRY_MIN_SAMPLES ? sameCode : history;
  const scope = samples === sameCode ? `successful retries after ${failureCode}` : 'successful charges';
  if (samples.length < SMART_RETRY_MIN_SAMPLES) {
    return {
      at: base,
      reason: `step delay: ${samples.length} ${scope} in ${SMART_RETRY_HISTORY_DAYS} days, fewer than ${SMART_RETRY_MIN_SAMPLES} to learn from`,
    };
  }
  const first = new Date(Math.ceil(base.getTime() / HOUR) * HOUR);
  let best: { at: Date; count: number; total: number; weekday: number | null } | null = null;
  for (let i = 0; i < 24; i += 1) {
    const at = new Date(first.getTime() + i * HOUR);
    const weekday = at.getUTCDay();
    const onDay = samples.filter((s) => s.succeeded_at.getUTCDay() === weekday);
    const pool = onDay.length >= SMART_RETRY_MIN_SAMPLES ? onDay : samples;
    const count = pool.filter((s) => s.succeeded_at.getUTCHours() === at.getUTCHours()).length;
    if (!best || count / pool.length > best.count / best.total) best = { at, count, total: pool.length, weekday: pool === onDay ? weekday : null };
  }
  if (!best || best.count === 0) return { at: base, reason: `step delay: no ${scope} in the next 24 hours' hours of day` };
  const hh = String(best.at.getUTCHours()).padStart(2, '0');
  const where = best.weekday === null ? '' : ` on ${WEEKDAYS[best.weekday]}`;
  return {
    at: best.at,
    reason: `smart retry at ${hh}:00 UTC: ${best.count} of ${best.total} ${scope}${where} in ${SMART_RETRY_HISTORY_DAYS} days happened in that hour (the step's delay gave ${base.toISOString()})`,
  };
}
