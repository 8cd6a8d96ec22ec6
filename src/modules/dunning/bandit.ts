import { currencyExponent } from '../../platform/currencies.js';
import { localTime } from './retry.js';

/**
 * Dunning weights (SPEC 4.16; docs/decisions/0310): when a `retry_payment` step runs is learned
 * per tenant by Thompson sampling. A retry's context is the invoice's last failure code × its
 * amount band × the type of the customer's default payment method; its action (arm) is the slot
 * the retry runs in. Each arm's chance of recovering the invoice in that context is a Beta
 * posterior over the tenant's own outcomes (a retry that was followed by the invoice being paid
 * is a success, one followed by another failed charge a failure), with a prior borrowed from the
 * same arm in the tenant's other contexts (at most BORROWED_PRIOR pseudo-outcomes). Each retry
 * draws once from every arm's posterior and runs in the slot whose draw is highest: arms that are
 * good, or still unknown, get tried; arms that keep failing stop being chosen.
 */

export const RETRY_ARMS = ['as_scheduled', 'learned_hour', 'morning', 'evening'] as const;
export type RetryArm = (typeof RETRY_ARMS)[number];

/** Local hours of the fixed slots (the entity's clock). */
const SLOT_HOURS: Record<'morning' | 'evening', number> = { morning: 9, evening: 19 };

/** How many of the tenant's outcomes in other contexts an arm's prior may hold. */
export const BORROWED_PRIOR = 10;

export type RetryContext = { failure_code: string; amount_band: AmountBand; method_type: string };
export type AmountBand = 'under_1k' | '1k_to_10k' | '10k_to_100k' | 'over_100k';
export type ArmStats = { context: string; arm: string; successes: number; failures: number };

/** The amount due's band in major units of its currency (₹999.99 → under_1k; ₹1,180.00 → 1k_to_10k). */
export function amountBand(amountDue: number, currency: string): AmountBand {
  const major = amountDue / 10 ** currencyExponent(currency);
  if (major < 1_000) return 'under_1k';
  if (major < 10_000) return '1k_to_10k';
  if (major < 100_000) return '10k_to_100k';
  return 'over_100k';
}

export function retryContext(failureCode: string | null, amountDue: number, currency: string, methodType: string | null): RetryContext {
  return { failure_code: failureCode ?? 'unknown', amount_band: amountBand(amountDue, currency), method_type: methodType ?? 'none' };
}

/** The stored key of a context: `insufficient_funds|1k_to_10k|card`. */
export function contextKey(context: RetryContext): string {
  return `${context.failure_code}|${context.amount_band}|${context.method_type}`;
}

export function parseContextKey(key: string): RetryContext {
  const [failure_code = 'unknown', amount_band = 'under_1k', method_type = 'none'] = key.split('|');
  return { failure_code, amount_band: amount_band as AmountBand, method_type };
}

/* ── a seeded random source: every choice can be replayed from its seed ─────────────────────── */

export type Random = () => number;

/** mulberry32: a small, fast, seeded generator of uniform numbers in [0, 1). */
export function seededRandom(seed: number): Random {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** A 32-bit seed from text (FNV-1a): an execution and its step number seed its draw. */
export function seedOf(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

function normal(random: Random): number {
  const u = Math.max(random(), Number.EPSILON);
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random());
}

/** Gamma(shape, 1) by Marsaglia and Tsang (shape < 1 boosted). */
function gamma(shape: number, random: Random): number {
  if (shape < 1) return gamma(shape + 1, random) * Math.pow(Math.max(random(), Number.EPSILON), 1 / shape);
  const d = shape - 1 / 3;
  const c = 1 / Math.sqrt(9 * d);
  for (;;) {
    let x: number;
    let v: number;
    do {
      x = normal(random);
      v = 1 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const u = random();
    if (u < 1 - 0.0331 * x ** 4 || Math.log(u) < 0.5 * x * x + d * (1 - v + Math.log(v))) return d * v;
  }
}

export function sampleBeta(alpha: number, beta: number, random: Random): number {
  const x = gamma(alpha, random);
  const y = gamma(beta, random);
  return x / (x + y);
}

/* ── posteriors, weights and the choice ──────────────────────────────────────────────────── */

export type ArmPosterior = { arm: RetryArm; successes: number; failures: number; alpha: number; beta: number; expected_reward: number };

/**
 * Each arm's Beta posterior in `context`: Beta(1, 1), plus the arm's outcomes in the tenant's
 * other contexts scaled down to at most BORROWED_PRIOR, plus its outcomes in this context.
 */
export function posteriors(stats: ArmStats[], context: string): ArmPosterior[] {
  return RETRY_ARMS.map((arm) => {
    const own = stats.find((s) => s.context === context && s.arm === arm);
    const others = stats.filter((s) => s.context !== context && s.arm === arm);
    const otherS = others.reduce((n, s) => n + s.successes, 0);
    const otherF = others.reduce((n, s) => n + s.failures, 0);
    const scale = otherS + otherF > BORROWED_PRIOR ? BORROWED_PRIOR / (otherS + otherF) : 1;
    const successes = own?.successes ?? 0;
    const failures = own?.failures ?? 0;
    const alpha = 1 + otherS * scale + successes;
    const beta = 1 + otherF * scale + failures;
    return { arm, successes, failures, alpha, beta, expected_reward: alpha / (alpha + beta) };
  });
}

/**
 * Thompson sampling: one draw from every arm's posterior; the highest draw wins (ties: the earlier
 * arm). A tenant with no outcome yet (cold start) retries at `learned_hour` — where decision 0131
 * puts it, the step's delay without history — until its first retry's outcome is known.
 */
export function chooseArm(
  stats: ArmStats[],
  context: string,
  random: Random,
): { arm: RetryArm; draws: Record<RetryArm, number>; posteriors: ArmPosterior[]; coldStart: boolean } {
  const arms = posteriors(stats, context);
  if (!stats.some((s) => s.successes + s.failures > 0)) {
    return { arm: 'learned_hour', draws: { as_scheduled: 0, learned_hour: 0, morning: 0, evening: 0 }, posteriors: arms, coldStart: true };
  }
  const draws = {} as Record<RetryArm, number>;
  let best = arms[0]!;
  for (const posterior of arms) {
    draws[posterior.arm] = sampleBeta(posterior.alpha, posterior.beta, random);
    if (draws[posterior.arm] > draws[best.arm]) best = posterior;
  }
  return { arm: best.arm, draws, posteriors: arms, coldStart: false };
}

/**
 * When an arm runs a retry the campaign scheduled at `base`: as scheduled; at the hour history
 * chose (`learnedAt`, decision 0131); or at the first 09:00 / 19:00 on the entity's clock at or
 * after `base`.
 */
export function armTime(arm: RetryArm, base: Date, learnedAt: Date, timeZone: string): Date {
  if (arm === 'as_scheduled') return base;
  if (arm === 'learned_hour') return learnedAt;
  const hour = SLOT_HOURS[arm];
  // Whole hours from base on: the first whose local hour is the slot's (at most 24 to look at).
  const first = new Date(Math.ceil(base.getTime() / 3_600_000) * 3_600_000);
  for (let i = 0; i < 48; i += 1) {
    const at = new Date(first.getTime() + i * 1_800_000);
    const local = localTime(at, timeZone);
    if (local.hour === hour && localMinute(at, timeZone) === 0) return at;
  }
  return base;
}

function localMinute(at: Date, timeZone: string): number {
  return Number(new Intl.DateTimeFormat('en-US', { timeZone, minute: '2-digit' }).format(at)) % 60;
}
