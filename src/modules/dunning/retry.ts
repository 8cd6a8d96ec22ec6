import { scopeKey, type AppScope } from '../../platform/app-scope.js';
import type { Ctx } from '../../platform/context.js';
import type { ActionOutcome } from './dunning.tables.js';

/**
 * How a `retry_payment` step asks collections to charge the invoice again. Collections registers
 * it at start-up; it runs inside the step's transaction, so it must only record and queue the
 * charge (the gateway call happens in collections' own job, never inside this transaction).
 * Without one registered, retry steps are recorded as skipped.
 */
export type PaymentRetrier = (ctx: Ctx, invoiceId: string) => Promise<{ outcome: ActionOutcome; detail: string }>;

/** The app's payment retrier (platform/app-scope.ts): each app registers its own. */
const retrierKey = scopeKey<{ retrier?: PaymentRetrier }>('dunning.payment_retrier', () => ({}));

export function registerPaymentRetrier(scope: AppScope, retrier: PaymentRetrier): void {
  scope.get(retrierKey).retrier = retrier;
}

export function paymentRetrier(scope: AppScope): PaymentRetrier | undefined {
  return scope.get(retrierKey).retrier;
}

/** Smart retry timing (docs/decisions/0131): what a retry's time is learned from. */
export const SMART_RETRY_HISTORY_DAYS = 180;
export const SMART_RETRY_MIN_SAMPLES = 10;
const HOUR = 3_600_000;
const WEEKDAYS = ['Sundays', 'Mondays', 'Tuesdays', 'Wednesdays', 'Thursdays', 'Fridays', 'Saturdays'];

export type RetryHistorySample = { succeeded_at: Date; after_failure: string | null };
export type RetryTiming = { at: Date; reason: string };

type LocalTime = { weekday: number; hour: number };
const SHORT_WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const formatters = new Map<string, Intl.DateTimeFormat>();

/** The weekday (0 = Sunday) and hour of an instant on the wall clock of `timeZone`. */
export function localTime(at: Date, timeZone: string): LocalTime {
  let format = formatters.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', { timeZone, weekday: 'short', hour: '2-digit', hourCycle: 'h23' });
    formatters.set(timeZone, format);
  }
  const parts = format.formatToParts(at);
  const part = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
  return { weekday: SHORT_WEEKDAYS.indexOf(part('weekday')), hour: Number(part('hour')) % 24 };
}

/** The zone's offset from UTC at `at`, in ms (Asia/Kolkata: +5.5 h). */
function offsetMs(at: Date, timeZone: string): number {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' })
      .formatToParts(at)
      .map((p) => [p.type, p.value]),
  );
  const wall = Date.UTC(Number(parts.year), Number(parts.month) - 1, Number(parts.day), Number(parts.hour) % 24, Number(parts.minute));
  return wall - Math.floor(at.getTime() / 60_000) * 60_000;
}

/** The history's samples on one zone's wall clock, computed once per history and zone (a batch shares its history). */
const localHistories = new WeakMap<RetryHistorySample[], Map<string, LocalTime[]>>();
function localHistory(samples: RetryHistorySample[], timeZone: string): LocalTime[] {
  let byZone = localHistories.get(samples);
  if (!byZone) localHistories.set(samples, (byZone = new Map()));
  let local = byZone.get(timeZone);
  if (!local) byZone.set(timeZone, (local = samples.map((s) => localTime(s.succeeded_at, timeZone))));
  return local;
}

/**
 * When to run a retry the campaign scheduled at `base`. The history is the tenant's successful
 * charges; those that followed a failure with this invoice's failure code are used when there are
 * at least SMART_RETRY_MIN_SAMPLES of them, else all. Hours and weekdays are read on the wall
 * clock of `timeZone` (the invoice's legal entity's). Each of the 24 whole local hours from `base`
 * on scores the share of those successes that happened at its local hour of day — counted on its
 * local weekday alone when that weekday has enough successes — and the best slot wins (ties: the
 * earliest). Too little history, or no slot better than the step's own time: the step's delay.
 */
export function chooseRetryTime(base: Date, failureCode: string | null, history: RetryHistorySample[], timeZone = 'UTC'): RetryTiming {
  const sameCode = failureCode ? history.filter((h) => h.after_failure === failureCode) : [];
  const samples = sameCode.length >= SMART_RETRY_MIN_SAMPLES ? sameCode : history;
  const scope = samples === sameCode ? `successful retries after ${failureCode}` : 'successful charges';
  if (samples.length < SMART_RETRY_MIN_SAMPLES) {
    return {
      at: base,
      reason: `step delay: ${samples.length} ${scope} in ${SMART_RETRY_HISTORY_DAYS} days, fewer than ${SMART_RETRY_MIN_SAMPLES} to learn from`,
    };
  }
  const local = localHistory(samples, timeZone);
  // The first whole hour on the zone's clock at or after base (a half-hour zone's hours start at :30 UTC).
  const offset = offsetMs(base, timeZone);
  const first = new Date(Math.ceil((base.getTime() + offset) / HOUR) * HOUR - offset);
  let best: { at: Date; hour: number; count: number; total: number; weekday: number | null } | null = null;
  for (let i = 0; i < 24; i += 1) {
    const at = new Date(first.getTime() + i * HOUR);
    const slot = localTime(at, timeZone);
    const onDay = local.filter((s) => s.weekday === slot.weekday);
    const pool = onDay.length >= SMART_RETRY_MIN_SAMPLES ? onDay : local;
    const count = pool.filter((s) => s.hour === slot.hour).length;
    if (!best || count / pool.length > best.count / best.total)
      best = { at, hour: slot.hour, count, total: pool.length, weekday: pool === onDay ? slot.weekday : null };
  }
  if (!best || best.count === 0) return { at: base, reason: `step delay: no ${scope} in the next 24 hours' hours of day (${timeZone})` };
  const hh = String(best.hour).padStart(2, '0');
  const utc = timeZone === 'UTC' ? '' : ` (${best.at.toISOString().slice(11, 16)} UTC)`;
  const where = best.weekday === null ? '' : ` on ${WEEKDAYS[best.weekday]}`;
  return {
    at: best.at,
    reason: `smart retry at ${hh}:00 ${timeZone}${utc}: ${best.count} of ${best.total} ${scope}${where} in ${SMART_RETRY_HISTORY_DAYS} days happened in that hour of the day in ${timeZone} (the step's delay gave ${base.toISOString()})`,
  };
}
