import type { ReadCtx } from '../../platform/context.js';
import { formatMoney } from '../../platform/money.js';
import { creditedSubtotalsOfLines } from '../../modules/credit-notes/index.js';
import { pricedLinesWithin, type DraftLine } from '../../modules/invoices/index.js';
import { findPlan, findPrice, type PlanRow, type PriceRow } from '../../modules/plans/index.js';
import { daysBetween, prorateByDays, type SubscriptionRow } from '../../modules/subscriptions/index.js';

type Period = { start: Date; end: Date };

/** One subscription whose period is being closed by the invoice being built (renewal, final, immediate cancel). */
export type CommitmentSubject = {
  subscription: Pick<SubscriptionRow, 'id' | 'currency' | 'minimum_amount' | 'minimum_price_id' | 'minimum_since'>;
  plan: Pick<PlanRow, 'id' | 'name' | 'hsn_code' | 'tax_rate_bp'>;
  /** The plan's fixed price (its HSN/SAC is the fee's); null for a pure usage plan. */
  fixedPrice: Pick<PriceRow, 'hsn_code'> | null;
  /** The whole billing period the commitment is for. */
  period: Period;
  /** Where the committed time ends: the period's end, or an immediate cancellation's instant. */
  until: Date;
  /** The lines of the invoice being built, after the subscription's coupon (its own usage for the period among them). */
  lines: readonly DraftLine[];
};

/** What a commitment comes to for one period (decision 0540). */
export type CommitmentCheck = { committed: number; billed: number; trueUp: number; committedDays: number; periodDays: number };

const day = (d: Date) => d.toISOString().slice(0, 10);
const within = (l: { period_start?: Date | null; period_end?: Date | null }, p: Period) =>
  !!l.period_start && !!l.period_end && l.period_start >= p.start && l.period_end <= p.end;

/**
 * The minimum commitment's true-up line for each subject (null: no commitment, or no shortfall) —
 * decision 0540:
 *
 *   committed = round_half_up(minimum × committed days ÷ period days)
 *   true-up   = max(0, committed − net billed for the period in the commitment's scope)
 *
 * Committed days run from the later of the period's start and the commitment's `since` to
 * `until` (calendar days, as every proration here). Net billed is every priced line the
 * subscription was invoiced for within the period — the plan's fee, items, usage; of the one
 * committed price when the commitment names one — after discounts and before GST, less what live
 * credit notes took off those lines (unused time after a change or cancellation), plus the lines
 * of the invoice being built. One-off charges and earlier true-ups name no price and do not count.
 * The line is taxed like the fee: the committed price's (else the plan fee's) HSN/SAC and the
 * plan's rate. It is added after the coupon, so a coupon never reduces what the minimum guarantees.
 */
export async function commitmentTrueUps(ctx: ReadCtx, subjects: CommitmentSubject[]): Promise<(DraftLine | null)[]> {
  const checks = subjects.map((s) => (s.subscription.minimum_amount ? committedFor(s) : null));
  const open = subjects.filter((_, i) => checks[i] !== null);
  if (open.length === 0) return subjects.map(() => null);
  const stored = await pricedLinesWithin(
    ctx.tx,
    ctx.tenantId,
    open.map((s) => ({ subscriptionId: s.subscription.id, start: s.period.start, end: s.period.end })),
  );
  const credited = await creditedSubtotalsOfLines(ctx.tx, ctx.tenantId, stored);
  const out: (DraftLine | null)[] = [];
  for (const [i, s] of subjects.entries()) {
    const check = checks[i];
    if (!check) {
      out.push(null);
      continue;
    }
    const scope = s.subscription.minimum_price_id;
    const inScope = (priceId: string | null | undefined) => !!priceId && (scope === null || priceId === scope);
    const billedBefore = stored
      .filter((l) => l.subscription_id === s.subscription.id && inScope(l.price_id))
      .reduce((sum, l) => sum + l.amount - (credited.get(l.id) ?? 0), 0);
    const billedNow = s.lines
      .filter((l) => inScope(l.price_id) && within(l, s.period))
      .reduce((sum, l) => sum + l.quantity * l.unit_amount - (l.discount_amount ?? 0), 0);
    const billed = billedBefore + billedNow;
    const trueUp = Math.max(0, check.committed - billed);
    out.push(trueUp > 0 ? await trueUpLine(ctx, s, { ...check, billed, trueUp }) : null);
  }
  return out;
}

/** The prorated minimum of a subject's period (null when the commitment covers none of it). */
export function committedFor(s: Pick<CommitmentSubject, 'subscription' | 'period' | 'until'>): Omit<CommitmentCheck, 'billed' | 'trueUp'> | null {
  const { minimum_amount: amount, minimum_since: since } = s.subscription;
  if (!amount || !since) return null;
  const from = since > s.period.start ? since : s.period.start;
  const periodDays = daysBetween(s.period.start, s.period.end);
  const committedDays = Math.min(periodDays, Math.max(0, daysBetween(from, s.until)));
  if (periodDays <= 0 || committedDays === 0) return null;
  return { committed: prorateByDays(amount, committedDays, periodDays), committedDays, periodDays };
}

async function trueUpLine(ctx: ReadCtx, s: CommitmentSubject, check: CommitmentCheck): Promise<DraftLine> {
  let plan = s.plan;
  let hsn = s.fixedPrice?.hsn_code || s.plan.hsn_code || undefined;
  const priceId = s.subscription.minimum_price_id;
  if (priceId) {
    // A committed price is taxed like its own line: its HSN/SAC, else its plan's, at its plan's rate.
    const price = await findPrice(ctx.tx, ctx.tenantId, priceId);
    const pricePlan = price && price.plan_id !== plan.id ? await findPlan(ctx.tx, ctx.tenantId, price.plan_id) : undefined;
    if (pricePlan) plan = pricePlan;
    hsn = price?.hsn_code || plan.hsn_code || undefined;
  }
  const currency = s.subscription.currency;
  const prorated = check.committedDays < check.periodDays ? ` (${check.committedDays} of ${check.periodDays} days)` : '';
  return {
    description: `Minimum commitment true-up: ${formatMoney(check.committed, currency)} committed${prorated}, ${formatMoney(check.billed, currency)} billed, ${day(s.period.start)} to ${day(s.until)}`,
    quantity: 1,
    unit_amount: check.trueUp,
    hsn_code: hsn,
    tax_rate_bp: plan.tax_rate_bp,
    plan_id: plan.id,
    price_id: null,
    period_start: s.period.start,
    period_end: s.until,
  };
}
