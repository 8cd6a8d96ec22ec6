import { mulDivRoundHalfUp } from '../../platform/money.js';
import type { IntervalUnit } from '../plans/index.js';

/**
 * Monthly recurring revenue of one subscription (docs/decisions/0075): the price of one period
 * times the quantity, brought to a month — yearly ÷ 12, weekly × 52 ÷ 12, daily × 365 ÷ 12 — and
 * divided by the interval count, rounded half-up once; add-ons (subscription items) add their
 * price × quantity, and a coupon takes its percentage off line by line. Only `active` and `past_due` subscriptions
 * count: trials, paused, unpaid and canceled ones have no MRR. The SQL of the snapshot job
 * (analytics.repository.ts) computes the same; a test holds the two together.
 */
export const MRR_STATUSES = ['active', 'past_due'] as const;

export function monthlyFactor(unit: IntervalUnit): { numerator: number; denominator: number } {
  switch (unit) {
    case 'month':
      return { numerator: 1, denominator: 1 };
    case 'year':
      return { numerator: 1, denominator: 12 };
    case 'week':
      return { numerator: 52, denominator: 12 };
    case 'day':
      return { numerator: 365, denominator: 12 };
  }
}

export function monthlyRecurringRevenue(input: {
  amount: number;
  quantity: number;
  intervalUnit: IntervalUnit;
  intervalCount: number;
  status: string;
  /** The subscription's coupon while it applies (`forever`, or `repeating` before its end; decision 0451). */
  coupon?: { percentOffBp?: number | null; amountOff?: number | null } | null;
  /** Its add-ons (decision 0470): a price per period, a quantity, and whether the coupon covers the add-on's plan. */
  items?: readonly { amount: number; quantity: number; covered: boolean }[];
}): number {
  if (!(MRR_STATUSES as readonly string[]).includes(input.status)) return 0;
  const { numerator, denominator } = monthlyFactor(input.intervalUnit);
  // One line per component, as the invoice has: the plan's fee, then each add-on.
  const lines = [
    { amount: input.amount * input.quantity, covered: true },
    ...(input.items ?? []).map((i) => ({ amount: i.amount * i.quantity, covered: i.covered })),
  ];
  const gross = lines.reduce((sum, l) => sum + l.amount, 0);
  const covered = lines.filter((l) => l.covered);
  const c = input.coupon;
  const discount = !c
    ? 0
    : c.percentOffBp != null
      ? covered.reduce((sum, l) => sum + mulDivRoundHalfUp(l.amount, c.percentOffBp!, 10_000), 0)
      : Math.min(
          c.amountOff ?? 0,
          covered.reduce((sum, l) => sum + l.amount, 0),
        );
  return mulDivRoundHalfUp(Math.max(gross - discount, 0), numerator, denominator * input.intervalCount);
}
