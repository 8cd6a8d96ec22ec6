import type { Kysely, Updateable } from 'kysely';
import type { Ctx } from '../../platform/context.js';
import type { DB } from '../../platform/db/schema.js';
import { errors } from '../../platform/errors.js';
import { emitEvent } from '../../platform/events/events.js';
import { toIso } from '../../platform/time.js';
import { getCreditNote, type CreditNote } from '../../modules/credit-notes/index.js';
import { getCustomer } from '../../modules/customers/index.js';
import { renderInvoice, type InvoiceRow } from '../../modules/invoices/index.js';
import {
  assertChargeable,
  assertMetricsMeteredOnce,
  canTransition,
  lockForTransition,
  periodOf,
  remainingDays,
  resolvePlanPrice,
  resolveSubscriptionPrice,
  toSubscription,
  transitionSubscription,
  type ChangePlanBody,
  type PlanChange,
  type SubscriptionRow,
} from '../../modules/subscriptions/index.js';
import { creditUnusedSubscriptionTime } from './credit-unused-subscription-time.js';
import { invoiceSubscriptionPeriod, proratedFixedCharge, proratedItemCharges } from './invoice-subscription-period.js';
import { itemChargesOfSubscription } from './subscription-item-charges.js';
import { previewInRollback } from './preview.js';

type SubscriptionPatch = Updateable<DB['subscriptions']>;

export type PlanChangeResult = {
  subscription: SubscriptionRow;
  invoice: InvoiceRow | null;
  /** As it stands after the change (spent on the new invoice, if it was). */
  creditNote: CreditNote | null;
  proration: PlanChange['proration'];
};

type ChargedPlan = { interval_unit: SubscriptionRow['interval_unit']; interval_count: number };
type ChargedPrice = Parameters<typeof proratedFixedCharge>[0];

/**
 * What the new plan charges at the change: on the same interval, the rest of the current period
 * pro rata (`sameInterval` gives the days left of the days in it); on another interval, a whole
 * first period starting now, which also moves the schedule (`patch`).
 */
function newPlanCharge(
  now: Date,
  row: SubscriptionRow,
  plan: ChargedPlan,
  price: ChargedPrice | null,
  sameInterval: { remaining: number; total: number } | null,
): { period: { start: Date; end: Date }; unitAmount: number; amount: number; patch: Partial<SubscriptionPatch> } {
  if (sameInterval) {
    const charge = price ? proratedFixedCharge(price, row.quantity, sameInterval.remaining, sameInterval.total) : null;
    return { period: { start: now, end: row.current_period_end }, unitAmount: charge?.unitAmount ?? 0, amount: charge?.amount ?? 0, patch: {} };
  }
  const period = periodOf({ billing_anchor: now, interval_unit: plan.interval_unit, interval_count: plan.interval_count }, 0);
  const charge = price ? proratedFixedCharge(price, row.quantity, 1, 1) : null;
  return {
    period,
    unitAmount: charge?.unitAmount ?? 0,
    amount: charge?.amount ?? 0,
    patch: { billing_anchor: now, period_index: 0, current_period_start: period.start, current_period_end: period.end },
  };
}

/**
 * POST /v1/subscriptions/{id}/change-plan: an immediate change (docs/subscriptions.md, "Plan
 * changes"). With `prorate` (the default):
 * - the unused part of the old plan is credited to the day, as a credit note on the invoice that
 *   paid for the current period (GST reversed pro rata there);
 * - same interval: the period stays; the rest of it is charged on the new plan, to the day
 *   (unit price × remaining days ÷ period days, half-up), on one subscription_update invoice;
 * - another interval: a new period of the new plan starts now and is charged in full.
 * The new invoice is finalized with credit, so the credit note (if the old invoice was paid) is
 * spent on it first; a credit larger than the charge stays on the customer's balance.
 * Without `prorate`: nothing is credited or charged now; the new plan is billed from the next
 * renewal (another interval starts its schedule at the current period's end). While trialing:
 * the plan is swapped and the trial runs on.
 */
export async function changeSubscriptionPlan(ctx: Ctx, id: string, input: Omit<ChangePlanBody, 'preview'>): Promise<PlanChangeResult> {
  const row = await lockForTransition(ctx, id, 'change_plan', (r) => canTransition(r.status, 'change_plan'));
  if (input.plan_id === row.plan_id) throw errors.invalidField('plan_id', 'the subscription is already on this plan');
  const { plan, price } = await resolvePlanPrice(ctx, input.plan_id, row.currency, 'plan_id');
  if (!plan.active) throw errors.conflict(`plan ${plan.code} is not active`, 'plan_inactive');
  assertChargeable(price, row.quantity, 'plan_id');
  await assertMetricsMeteredOnce(ctx, { customerId: row.customer_id, planId: plan.id, currency: row.currency, except: row.id });
  const { plan: oldPlan } = await resolveSubscriptionPrice(ctx, row);

  const sameInterval = plan.interval_unit === row.interval_unit && plan.interval_count === row.interval_count;
  // Add-ons are billed on the subscription's interval (decision 0470): a plan of another interval would leave them out of step.
  const items = await itemChargesOfSubscription(ctx, row.id);
  if (!sameInterval && items.length > 0) {
    throw errors.conflict(
      `plan_id: plan ${plan.code} bills on another interval than the subscription's ${items.length} add-on item(s); remove them first`,
      'subscription_has_items',
    );
  }
  const current = { start: row.current_period_start, end: row.current_period_end };
  const { remaining, total } = remainingDays(current, ctx.now);
  const patch: SubscriptionPatch = {
    plan_id: plan.id,
    price_id: price?.id ?? null,
    interval_unit: plan.interval_unit,
    interval_count: plan.interval_count,
    updated_at: ctx.now,
  };
  let invoice: InvoiceRow | null = null;
  let creditNoteId: string | null = null;
  let unusedCredit = 0;
  let unusedValue = 0;
  let creditCapped = false;
  let newCharge = 0;
  let newChargeTotal = 0;
  let chargePeriod = current;
  const prorated = input.prorate && row.status !== 'trialing';

  if (row.status === 'trialing') {
    // The trial period is stored (index -1, anchored at its end): the new interval applies after it.
  } else if (!prorated) {
    // Billed from the next renewal. Another interval: its schedule starts where this period ends.
    if (!sameInterval) Object.assign(patch, { billing_anchor: row.current_period_end, period_index: -1 });
  } else {
    const credit = await creditUnusedSubscriptionTime(ctx, row, `Unused time on ${oldPlan.name} (changed to ${plan.name})`);
    creditNoteId = credit.note?.id ?? null;
    unusedCredit = credit.amount;
    unusedValue = credit.unusedValue;
    creditCapped = credit.capped;
    const customer = await getCustomer(ctx, row.customer_id);
    const charge = newPlanCharge(ctx.now, row, plan, price, sameInterval ? { remaining, total } : null);
    chargePeriod = charge.period;
    newCharge = charge.unitAmount;
    newChargeTotal = charge.amount;
    Object.assign(patch, charge.patch);
    // The credit covered the add-ons on the invoice too: the rest of the period charges them again (same interval only).
    const itemCharge = proratedItemCharges(items, remaining, total);
    newChargeTotal += itemCharge.amount;
    // A pure usage plan (no fixed price) charges nothing now: its usage is billed at the period's end.
    if ((price && newCharge > 0) || itemCharge.amount > 0) {
      invoice = await invoiceSubscriptionPeriod(ctx, {
        subscription: row,
        plan,
        price: price && newCharge > 0 ? price : null,
        customer,
        period: chargePeriod,
        billingReason: 'subscription_update',
        unitAmount: newCharge,
        items: itemCharge.items,
      });
      patch.latest_invoice_id = invoice.id;
    }
  }
  const subscription = await transitionSubscription(ctx.tx, ctx.tenantId, id, 'change_plan', patch);
  await emitEvent(ctx, 'subscription.plan_changed', { ...toSubscription(subscription), previous_plan_id: row.plan_id });
  return {
    subscription,
    invoice,
    creditNote: creditNoteId ? await getCreditNote(ctx, creditNoteId) : null,
    proration: {
      prorated,
      changed_at: toIso(ctx.now),
      period_start: toIso(chargePeriod.start),
      period_end: toIso(chargePeriod.end),
      remaining_days: remaining,
      period_days: total,
      unused_value: unusedValue,
      unused_credit: unusedCredit,
      credit_capped: creditCapped,
      new_charge: newChargeTotal,
    },
  };
}

/** The API shape of a plan change, rendered inside the transaction that made it. */
export async function renderPlanChange(ctx: Ctx, result: PlanChangeResult, preview: boolean): Promise<PlanChange> {
  return {
    preview,
    subscription: toSubscription(result.subscription),
    invoice: result.invoice ? await renderInvoice(ctx, result.invoice) : null,
    credit_note: result.creditNote,
    proration: result.proration,
  };
}

/**
 * `preview: true`: the very same change (same code, same numbers and tax) in a transaction that is
 * then rolled back, so nothing is written — no invoice, no number taken, no event.
 */
export async function previewSubscriptionPlanChange(
  db: Kysely<DB>,
  tenantId: string,
  now: Date,
  id: string,
  input: Omit<ChangePlanBody, 'preview'>,
): Promise<PlanChange> {
  return previewInRollback(db, tenantId, now, async (ctx) => renderPlanChange(ctx, await changeSubscriptionPlan(ctx, id, input), true));
}
