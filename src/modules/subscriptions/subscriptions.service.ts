import { sql } from 'kysely';
import type { Ctx, ReadCtx } from '../../platform/context.js';
import type { LockFlag } from '../../platform/db/schema.js';
import { errors } from '../../platform/errors.js';
import { emitEvent } from '../../platform/events/events.js';
import type { Page } from '../../platform/http/envelope.js';
import { newId } from '../../platform/ids.js';
import { toIso, toIsoOrNull } from '../../platform/time.js';
import { findCustomer, type Customer } from '../customers/index.js';
import { findPlan, findPrice, pricesOfPlans, type IntervalUnit, type PlanRow, type PriceRow } from '../plans/index.js';
import { getTenant } from '../tenants/index.js';
import { addInterval, daysBetween, periodBoundary, type BillingPeriod } from './periods.js';
import {
  findSubscription,
  findSubscriptionByExternalId,
  insertSubscription,
  listSubscriptionRows,
  runningSubscriptionsOfCustomers,
  subscriptionPairMeteringMetric,
  type SubscriptionFilter,
  type SubscriptionRow,
} from './subscriptions.repository.js';
import type { Subscription } from './subscriptions.schemas.js';
import { refuseTransition, transitionSubscription } from './subscriptions.states.js';
import type { CancellationReason, SubscriptionStatus } from './subscriptions.tables.js';

export function toSubscription(row: SubscriptionRow): Subscription {
  return {
    id: row.id,
    tenant_id: row.tenant_id,
    customer_id: row.customer_id,
    plan_id: row.plan_id,
    price_id: row.price_id,
    status: row.status,
    currency: row.currency,
    quantity: row.quantity,
    gift_code: row.gift_code,
    gifted_by: row.gifted_by,
    current_period_start: toIso(row.current_period_start),
    current_period_end: toIso(row.current_period_end),
    cancel_at_period_end: row.cancel_at_period_end,
    trial_start: toIsoOrNull(row.trial_start),
    trial_end: toIsoOrNull(row.trial_end),
    canceled_at: toIsoOrNull(row.canceled_at),
    paused_at: toIsoOrNull(row.paused_at),
    ended_at: toIsoOrNull(row.ended_at),
    external_id: row.external_id,
    latest_invoice_id: row.latest_invoice_id,
    metadata: row.metadata,
    collection_method: row.collection_method ?? 'send_invoice',
    cancellation_reason: row.cancellation_reason ?? null,
    cancellation_feedback: row.cancellation_feedback ?? null,
    minimum_commitment:
      row.minimum_amount != null && row.minimum_since != null
        ? { amount: row.minimum_amount, price_id: row.minimum_price_id ?? null, since: toIso(row.minimum_since) }
        : null,
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}

export async function getSubscriptionRow<C extends ReadCtx>(ctx: C, id: string, forUpdate?: LockFlag<C['tx']>): Promise<SubscriptionRow> {
  const row = await findSubscription<C['tx']>(ctx.tx, ctx.tenantId, id, forUpdate);
  if (!row) throw errors.notFound('subscription');
  return row;
}

export async function getSubscription(ctx: ReadCtx, id: string): Promise<Subscription> {
  return toSubscription(await getSubscriptionRow(ctx, id));
}

export async function listSubscriptions(ctx: ReadCtx, filter: SubscriptionFilter, page: Page): Promise<{ subscriptions: Subscription[]; total: number }> {
  const { rows, total } = await listSubscriptionRows(ctx.tx, ctx.tenantId, filter, page);
  return { subscriptions: rows.map(toSubscription), total };
}

// ── periods ─────────────────────────────────────────────────────────────────────────────────────

type Schedule = Pick<SubscriptionRow, 'billing_anchor' | 'period_index' | 'interval_unit' | 'interval_count'>;

/** Period `index` of a subscription's schedule (index >= 0), always from the anchor: no drift. */
export function periodOf(schedule: Pick<Schedule, 'billing_anchor' | 'interval_unit' | 'interval_count'>, index: number): BillingPeriod {
  const { billing_anchor: anchor, interval_unit: unit, interval_count: count } = schedule;
  return { index, start: periodBoundary(anchor, unit, count, index), end: periodBoundary(anchor, unit, count, index + 1) };
}

/** The period that follows the current one: index + 1 (index -1, a stored period, is followed by 0). */
export function periodAfter(schedule: Schedule): BillingPeriod {
  return periodOf(schedule, schedule.period_index + 1);
}

/** Whole days left in the current period at `at` (0 once it is over) and its length in days. */
export function remainingDays(period: { start: Date; end: Date }, at: Date): { remaining: number; total: number } {
  const total = daysBetween(period.start, period.end);
  const remaining = Math.min(total, Math.max(0, daysBetween(at, period.end)));
  return { remaining, total };
}

// ── pricing ─────────────────────────────────────────────────────────────────────────────────────

/**
 * A plan and its fixed price in a currency; `price` null: a pure usage plan in that currency (only
 * metered prices, billed in arrears: decision 0190).
 */
export type PlanPrice = { plan: PlanRow; price: PriceRow | null; currency: string };

/**
 * The plan and its price in `currency`. Without a currency: the tenant's base currency if the
 * plan has a price in it, else the plan's only price. Unknown plan → 404; no price → 400 on
 * `field`. A currency with metered prices only answers price null (a pure usage plan).
 */
export async function resolvePlanPrice(ctx: Ctx, planId: string, currency: string | undefined, field = 'currency'): Promise<PlanPrice> {
  const plan = await findPlan(ctx.tx, ctx.tenantId, planId);
  if (!plan) throw errors.notFound('plan');
  const all = await pricesOfPlans(ctx.tx, ctx.tenantId, [plan.id], { scope: 'all', activeOnly: true });
  const fixedIn = (c: string) => all.find((p) => p.currency === c && p.billing_scheme !== 'metered') ?? null;
  const currencies = [...new Set(all.map((p) => p.currency))];
  if (currency) {
    if (!currencies.includes(currency)) {
      throw errors.invalidField(field, `plan ${plan.code} has no price in ${currency} (it has: ${currencies.join(', ') || 'none'})`);
    }
    return { plan, price: fixedIn(currency), currency };
  }
  const base = (await getTenant(ctx)).base_currency;
  const chosen = currencies.includes(base) ? base : currencies.length === 1 ? currencies[0] : undefined;
  if (!chosen) {
    throw errors.invalidField('currency', `plan ${plan.code} has prices in ${currencies.join(', ')}: say which currency`);
  }
  return { plan, price: fixedIn(chosen), currency: chosen };
}

/**
 * The plan and price a subscription bills: the price it references (kept, even archived, until the
 * subscription is changed), else — a subscription stored before prices were referenced — its
 * plan's active price in its currency.
 */
export async function resolveSubscriptionPrice(ctx: Ctx, row: Pick<SubscriptionRow, 'plan_id' | 'price_id' | 'currency'>): Promise<PlanPrice> {
  if (row.price_id) {
    const [plan, price] = await Promise.all([findPlan(ctx.tx, ctx.tenantId, row.plan_id), findPrice(ctx.tx, ctx.tenantId, row.price_id)]);
    if (plan && price) return { plan, price, currency: price.currency };
  }
  return resolvePlanPrice(ctx, row.plan_id, row.currency);
}

/**
 * One metric is metered once per customer (decision 0190): usage events belong to a customer,
 * and every running subscription of the customer metering the event's metric would bill it. So a
 * subscription (new, or changing plan: `except` itself) whose plan meters, in its currency, a
 * metric that another running or paused subscription of the customer already meters is refused
 * (409 `metric_already_metered`). Concurrent subscriptions of one customer are serialized by an
 * advisory lock taken only when the plan meters something.
 */
export async function assertMetricsMeteredOnce(
  ctx: Ctx,
  subject: { customerId: string; planId: string; currency: string; except?: string },
  field = 'plan_id',
): Promise<void> {
  const metered = await pricesOfPlans(ctx.tx, ctx.tenantId, [subject.planId], { scope: 'metered', activeOnly: true });
  const codes = new Set(metered.filter((p) => p.currency === subject.currency).map((p) => p.metric_code));
  if (codes.size === 0) return;
  await lockCustomersMetering(ctx, [subject.customerId]);
  const others = (await runningSubscriptionsOfCustomers(ctx.tx, ctx.tenantId, [subject.customerId])).filter((s) => s.id !== subject.except);
  if (others.length === 0) return;
  const theirs = await pricesOfPlans(ctx.tx, ctx.tenantId, [...new Set(others.map((s) => s.plan_id))], { scope: 'metered', activeOnly: true });
  for (const other of others) {
    const clash = theirs.find((p) => p.plan_id === other.plan_id && p.currency === other.currency && codes.has(p.metric_code));
    if (clash) {
      throw errors.conflict(
        `${field}: the customer's subscription ${other.id} already meters ${clash.metric_code}; a metric is billed by one subscription per customer (cancel or change that one first)`,
        'metric_already_metered',
      );
    }
  }
}

/**
 * Serializes, until the transaction ends, everything that starts metering for these customers
 * (a new or changed subscription, an import): the lock is taken in id order, so two callers
 * locking overlapping sets cannot deadlock.
 */
export async function lockCustomersMetering(ctx: Ctx, customerIds: string[]): Promise<void> {
  for (const id of [...new Set(customerIds)].sort()) {
    await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`metered:${ctx.tenantId}:${id}`}, 0))`.execute(ctx.tx);
  }
}

/**
 * The same rule when a plan gains a metered price (POST /v1/plans/{id}/prices): refused (409
 * `metric_already_metered`) when a customer with a running subscription of the plan has another
 * running subscription metering that metric — both would bill every event. Called after the price
 * is written, in the same transaction, so the 409 leaves the plan as it was.
 */
export async function assertPlanMeteredOnce(ctx: Ctx, planId: string, metricCode: string, currency: string): Promise<void> {
  const pair = await subscriptionPairMeteringMetric(ctx.tx, ctx.tenantId, planId, metricCode, currency);
  if (pair) {
    throw errors.conflict(
      `metric_code: subscription ${pair.mine} of this plan belongs to a customer whose subscription ${pair.other} already meters ${metricCode}; a metric is billed by one subscription per customer`,
      'metric_already_metered',
    );
  }
}

/** Leaves room for tax on top: the invoice total must stay a safe integer. */
export function assertChargeable(price: Pick<PriceRow, 'amount'> | null, quantity: number, field = 'quantity'): void {
  if (price && price.amount * quantity > Number.MAX_SAFE_INTEGER / 2) {
    throw errors.invalidField(field, `${quantity} × ${price.amount} is too large an amount to invoice`);
  }
}

// ── records ─────────────────────────────────────────────────────────────────────────────────────

/**
 * A subscription as another flow states it (gift redemption, the bulk importer): explicit
 * period, status and cancel_at_period_end, and no invoice. The given period is stored as is
 * (period index -1) and the schedule continues from its end with the plan's interval.
 */
export type SubscriptionRecordInput = {
  customerId: string;
  planId: string;
  currency?: string;
  quantity?: number;
  status: SubscriptionStatus;
  currentPeriodStart: Date;
  currentPeriodEnd: Date;
  cancelAtPeriodEnd?: boolean;
  trialStart?: Date | null;
  trialEnd?: Date | null;
  canceledAt?: Date | null;
  endedAt?: Date | null;
  pausedAt?: Date | null;
  giftCode?: string | null;
  giftedBy?: string | null;
  externalId?: string | null;
  metadata?: Record<string, unknown>;
  collectionMethod?: 'send_invoice' | 'charge_automatically';
  /** Defaults to index -1 anchored at currentPeriodEnd (see above); createSubscription passes period 0. */
  schedule?: { billingAnchor: Date; periodIndex: number };
  /** Emit subscription.created (default true); a flow that invoices first emits it itself. */
  emit?: boolean;
  /** A minimum commitment per period (decision 0540), checked by the caller (assertCommittable). */
  minimum?: { amount: number; priceId: string | null; since: Date } | null;
};

export type CreatedRecord = { row: SubscriptionRow; customer: Customer } & PlanPrice;

export async function createSubscriptionRecord(ctx: Ctx, input: SubscriptionRecordInput): Promise<CreatedRecord> {
  const customer = await findCustomer(ctx.tx, ctx.tenantId, input.customerId);
  if (!customer) throw errors.notFound('customer');
  const planPrice = await resolvePlanPrice(ctx, input.planId, input.currency);
  const { plan, price, currency } = planPrice;
  if (input.status !== 'canceled') await assertMetricsMeteredOnce(ctx, { customerId: customer.id, planId: plan.id, currency });
  const quantity = input.quantity ?? 1;
  assertChargeable(price, quantity);
  await assertRecordable(ctx, input);
  const row = recordRow(ctx, input, customer.id, planPrice, quantity);
  await insertSubscription(ctx.tx, { ...row, metadata: JSON.stringify(row.metadata) });
  if (input.emit ?? true) await emitEvent(ctx, 'subscription.created', toSubscription(row));
  return { row, customer, plan, price, currency };
}

/** A stated period that runs forwards, a giver who exists, an external id not taken. */
async function assertRecordable(ctx: Ctx, input: SubscriptionRecordInput): Promise<void> {
  if (!(input.currentPeriodEnd > input.currentPeriodStart)) {
    throw errors.invalidField('current_period_end', 'must be after current_period_start');
  }
  if (input.giftedBy && !(await findCustomer(ctx.tx, ctx.tenantId, input.giftedBy))) throw errors.notFound('customer');
  if (input.externalId && (await findSubscriptionByExternalId(ctx.tx, ctx.tenantId, input.externalId))) {
    throw errors.conflict(`a subscription with external_id '${input.externalId}' already exists`, 'external_id_taken');
  }
}

/** The record's lifecycle dates as stated: a canceled one ended at its period's end unless told otherwise; a paused one paused now unless told. */
function recordLifecycle(
  ctx: Ctx,
  input: SubscriptionRecordInput,
): Pick<SubscriptionRow, 'cancel_at_period_end' | 'trial_start' | 'trial_end' | 'canceled_at' | 'paused_at' | 'ended_at'> {
  const ended = input.status === 'canceled' ? (input.endedAt ?? input.currentPeriodEnd) : (input.endedAt ?? null);
  return {
    cancel_at_period_end: input.cancelAtPeriodEnd ?? false,
    trial_start: input.trialStart ?? null,
    trial_end: input.trialEnd ?? null,
    canceled_at: input.canceledAt ?? (input.status === 'canceled' ? ended : null),
    paused_at: input.status === 'paused' ? (input.pausedAt ?? ctx.now) : null,
    ended_at: ended,
  };
}

function recordRow(ctx: Ctx, input: SubscriptionRecordInput, customerId: string, { plan, price, currency }: PlanPrice, quantity: number): SubscriptionRow {
  const schedule = input.schedule ?? { billingAnchor: input.currentPeriodEnd, periodIndex: -1 };
  return {
    tenant_id: ctx.tenantId,
    id: newId(),
    customer_id: customerId,
    plan_id: plan.id,
    price_id: price?.id ?? null,
    currency,
    quantity,
    status: input.status,
    interval_unit: plan.interval_unit as IntervalUnit,
    interval_count: plan.interval_count,
    billing_anchor: schedule.billingAnchor,
    period_index: schedule.periodIndex,
    current_period_start: input.currentPeriodStart,
    current_period_end: input.currentPeriodEnd,
    ...recordLifecycle(ctx, input),
    gift_code: input.giftCode ?? null,
    gifted_by: input.giftedBy ?? null,
    external_id: input.externalId ?? null,
    latest_invoice_id: null,
    metadata: input.metadata ?? {},
    collection_method: input.collectionMethod ?? 'send_invoice',
    cancellation_reason: null,
    cancellation_feedback: null,
    minimum_amount: input.minimum?.amount ?? null,
    minimum_price_id: input.minimum?.priceId ?? null,
    minimum_since: input.minimum?.since ?? null,
    created_at: ctx.now,
    updated_at: ctx.now,
  };
}

/** The schedule of a subscription that starts now (or at a backdated start) on `plan`. */
export function startingSchedule(
  plan: Pick<PlanRow, 'interval_unit' | 'interval_count'>,
  start: Date,
  trialDays: number,
): {
  status: 'active' | 'trialing';
  period: { start: Date; end: Date };
  schedule: { billingAnchor: Date; periodIndex: number };
  trial: { start: Date; end: Date } | null;
} {
  if (trialDays > 0) {
    const trialEnd = addInterval(start, 'day', trialDays);
    return { status: 'trialing', period: { start, end: trialEnd }, schedule: { billingAnchor: trialEnd, periodIndex: -1 }, trial: { start, end: trialEnd } };
  }
  const first = periodOf({ billing_anchor: start, interval_unit: plan.interval_unit as IntervalUnit, interval_count: plan.interval_count }, 0);
  return { status: 'active', period: first, schedule: { billingAnchor: start, periodIndex: 0 }, trial: null };
}

// ── state changes that touch nothing but the subscription ──────────────────────────────────────

export async function pauseSubscription(ctx: Ctx, id: string): Promise<SubscriptionRow> {
  const row = await transitionSubscription(ctx.tx, ctx.tenantId, id, 'pause', { paused_at: ctx.now, updated_at: ctx.now });
  await emitEvent(ctx, 'subscription.paused', toSubscription(row));
  return row;
}

/** cancel_at_period_end: the billing run ends the subscription at current_period_end, without an invoice. */
/** Why a cancellation happens, recorded on the subscription (and so in its events). */
export type CancellationDetails = { reason?: CancellationReason; feedback?: string };

export async function scheduleCancellation(ctx: Ctx, id: string, details: CancellationDetails = {}): Promise<SubscriptionRow> {
  const row = await transitionSubscription(ctx.tx, ctx.tenantId, id, 'schedule_cancel', {
    cancel_at_period_end: true,
    canceled_at: ctx.now,
    cancellation_reason: details.reason ?? null,
    cancellation_feedback: details.feedback ?? null,
    updated_at: ctx.now,
  });
  await emitEvent(ctx, 'subscription.cancel_scheduled', toSubscription(row));
  return row;
}

/** Undoes a pending cancel_at_period_end while the period still runs. */
export async function reactivateSubscription(ctx: Ctx, id: string): Promise<SubscriptionRow> {
  const current = await findSubscription(ctx.tx, ctx.tenantId, id, true);
  if (!current) throw errors.notFound('subscription');
  if (current.cancel_at_period_end && current.current_period_end <= ctx.now && current.status !== 'canceled') {
    throw errors.conflict('the period has already ended; the subscription is being canceled', 'period_ended');
  }
  const row = await transitionSubscription(ctx.tx, ctx.tenantId, id, 'reactivate', {
    cancel_at_period_end: false,
    canceled_at: null,
    cancellation_reason: null,
    cancellation_feedback: null,
    updated_at: ctx.now,
  });
  await emitEvent(ctx, 'subscription.reactivated', toSubscription(row));
  return row;
}

/** Ends the subscription now; the caller (cancel flow) settles any credit and names its final invoice. */
export async function endSubscriptionNow(
  ctx: Ctx,
  id: string,
  finalInvoiceId: string | null = null,
  details: CancellationDetails = {},
): Promise<SubscriptionRow> {
  const row = await transitionSubscription(ctx.tx, ctx.tenantId, id, 'cancel', {
    ...(finalInvoiceId ? { latest_invoice_id: finalInvoiceId } : {}),
    canceled_at: ctx.now,
    cancellation_reason: details.reason ?? null,
    cancellation_feedback: details.feedback ?? null,
    ended_at: ctx.now,
    cancel_at_period_end: false,
    updated_at: ctx.now,
  });
  await emitEvent(ctx, 'subscription.canceled', toSubscription(row));
  return row;
}

/** Locks the row and refuses (409) when `event` may not happen to it. */
export async function lockForTransition(
  ctx: Ctx,
  id: string,
  event: Parameters<typeof refuseTransition>[1],
  allowed: (row: SubscriptionRow) => boolean,
): Promise<SubscriptionRow> {
  const row = await findSubscription(ctx.tx, ctx.tenantId, id, true);
  if (!row || !allowed(row)) throw refuseTransition(row, event);
  return row;
}

/**
 * Reads and writes of this module's own tables that flows and other modules call; the repository
 * itself is private to the module (index.ts exports operations and types only).
 */
export {
  claimDueSubscriptions,
  claimDueSubscriptionsOfCustomers,
  nextPeriodEndInClockScope,
  delinquentSubscriptionIds,
  tenantsWithDelinquentSubscriptions,
  tenantsWithDueSubscriptions,
  trialsEndingBetween,
  trialsInClockScope,
  dueSubscriptionsInClockScope,
  updateSubscription,
  meteredPeriodCutoffs,
  RUNNING_STATUSES,
  runningSubscriptionsOfCustomers,
} from './subscriptions.repository.js';
