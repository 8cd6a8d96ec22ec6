import type { Ctx, ReadCtx } from '../../platform/context.js';
import { isUniqueViolation } from '../../platform/db/errors.js';
import { errors } from '../../platform/errors.js';
import { emitEvent } from '../../platform/events/events.js';
import type { Page } from '../../platform/http/envelope.js';
import { newId } from '../../platform/ids.js';
import { toIso, toIsoOrNull } from '../../platform/time.js';
import { findPlan } from '../plans/index.js';
import { addInterval } from '../subscriptions/index.js';
import { applyDiscounts, type DiscountableLine, type DiscountRule } from './apply-discounts.js';
import type { Coupon, CreateCouponBody, Discount, UpdateCouponBody } from './coupons.schemas.js';
import {
  claimRedemption,
  countDiscountUses,
  endDiscounts,
  findCoupon,
  findCouponByCode,
  findCouponsByIds,
  insertCoupon,
  insertDiscount,
  insertInvoiceDiscounts,
  listCouponRows,
  openSubscriptionDiscounts,
  endSubscriptionDiscount,
  setDiscountInvoice,
  updateCouponRow,
  type CouponRow,
  type DiscountRow,
} from './coupons.repository.js';

const UUID_SHAPE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function isValid(row: CouponRow, now: Date): boolean {
  return row.active && (row.redeem_by === null || row.redeem_by > now) && (row.max_redemptions === null || row.times_redeemed < row.max_redemptions);
}

export function toCoupon(row: CouponRow, now: Date): Coupon {
  return {
    id: row.id,
    tenant_id: row.tenant_id,
    object: 'coupon',
    code: row.code,
    name: row.name,
    percent_off: row.percent_off_bp === null ? null : row.percent_off_bp / 100,
    amount_off: row.amount_off,
    currency: row.currency,
    duration: row.duration,
    duration_in_months: row.duration_in_months,
    max_redemptions: row.max_redemptions,
    times_redeemed: row.times_redeemed,
    redeem_by: toIsoOrNull(row.redeem_by),
    plan_ids: row.plan_ids,
    active: row.active,
    valid: isValid(row, now),
    metadata: row.metadata,
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}

export function toDiscount(row: DiscountRow, coupon: Pick<CouponRow, 'code'>): Discount {
  return {
    id: row.id,
    object: 'discount',
    coupon_id: row.coupon_id,
    coupon_code: coupon.code,
    customer_id: row.customer_id,
    subscription_id: row.subscription_id,
    invoice_id: row.invoice_id,
    start: toIso(row.starts_at),
    end: toIsoOrNull(row.ends_at),
    invoices_discounted: row.invoices_discounted,
    ended_at: toIsoOrNull(row.ended_at),
  };
}

/** A coupon names plans like a subscription does: a missing (or another tenant's) plan is a 404. */
async function assertPlansExist(ctx: Ctx, planIds: readonly string[]): Promise<void> {
  for (const planId of planIds) {
    if (!(await findPlan(ctx.tx, ctx.tenantId, planId))) throw errors.notFound(`plan ${planId}`);
  }
}

export async function createCoupon(ctx: Ctx, input: CreateCouponBody): Promise<Coupon> {
  const planIds = [...new Set(input.plan_ids ?? [])];
  await assertPlansExist(ctx, planIds);
  let row: CouponRow;
  try {
    row = await insertCoupon(ctx.tx, {
      tenant_id: ctx.tenantId,
      id: newId(),
      code: input.code,
      name: input.name ?? input.code,
      percent_off_bp: input.percent_off === undefined ? null : Math.round(input.percent_off * 100),
      amount_off: input.amount_off ?? null,
      currency: input.amount_off === undefined ? null : input.currency!,
      duration: input.duration,
      duration_in_months: input.duration_in_months ?? null,
      max_redemptions: input.max_redemptions ?? null,
      redeem_by: input.redeem_by ? new Date(input.redeem_by) : null,
      plan_ids: JSON.stringify(planIds),
      active: true,
      metadata: JSON.stringify(input.metadata),
      created_at: ctx.now,
      updated_at: ctx.now,
    });
  } catch (error) {
    if (isUniqueViolation(error, 'coupons_tenant_id_code_key')) throw errors.conflict(`a coupon with code '${input.code}' already exists`, 'coupon_code_taken');
    throw error;
  }
  const coupon = toCoupon(row, ctx.now);
  await emitEvent(ctx, 'coupon.created', coupon);
  return coupon;
}

export async function getCoupon(ctx: ReadCtx, id: string): Promise<Coupon> {
  const row = await findCoupon(ctx.tx, ctx.tenantId, id);
  if (!row) throw errors.notFound('coupon');
  return toCoupon(row, ctx.now);
}

export async function listCoupons(ctx: ReadCtx, filter: { active?: 'true' | 'false' }, page: Page): Promise<{ coupons: Coupon[]; total: number }> {
  const { rows, total } = await listCouponRows(ctx.tx, ctx.tenantId, { active: filter.active === undefined ? undefined : filter.active === 'true' }, page);
  return { coupons: rows.map((r) => toCoupon(r, ctx.now)), total };
}

export async function updateCoupon(ctx: Ctx, id: string, input: UpdateCouponBody): Promise<Coupon> {
  const patch = {
    ...(input.name !== undefined ? { name: input.name } : {}),
    ...(input.active !== undefined ? { active: input.active } : {}),
    ...(input.metadata !== undefined ? { metadata: JSON.stringify(input.metadata) } : {}),
    updated_at: ctx.now,
  };
  const row = await updateCouponRow(ctx.tx, ctx.tenantId, id, patch);
  if (!row) throw errors.notFound('coupon');
  const coupon = toCoupon(row, ctx.now);
  await emitEvent(ctx, 'coupon.updated', coupon);
  return coupon;
}

/** A coupon by the `coupon` field of a request: its id (UUID-shaped) or its code. */
export async function resolveCoupon(ctx: Ctx, reference: string): Promise<CouponRow> {
  const row = UUID_SHAPE.test(reference) ? await findCoupon(ctx.tx, ctx.tenantId, reference) : await findCouponByCode(ctx.tx, ctx.tenantId, reference);
  if (!row) throw errors.notFound('coupon');
  return row;
}

export type RedemptionTarget = {
  customerId: string;
  currency: string;
  /** The plans the discounted document bills; a plan-restricted coupon needs one of its plans among them. */
  planIds: string[];
  subscriptionId?: string | null;
  invoiceId?: string | null;
};

/** The coupon's reason it cannot be redeemed now, or null. */
function refusal(row: CouponRow, now: Date) {
  if (!row.active) return errors.conflict(`coupon ${row.code} is not active`, 'coupon_inactive');
  if (row.redeem_by !== null && row.redeem_by <= now)
    return errors.conflict(`coupon ${row.code} could be redeemed until ${toIso(row.redeem_by)}`, 'coupon_expired');
  if (row.max_redemptions !== null && row.times_redeemed >= row.max_redemptions) {
    return errors.conflict(`coupon ${row.code} has reached its ${row.max_redemptions} redemptions`, 'coupon_max_redemptions_reached');
  }
  return null;
}

/** Why the coupon cannot be redeemed now for this target (inactive, expired, used up, another currency or plan), or null. */
export function redemptionRefusal(row: CouponRow, target: Pick<RedemptionTarget, 'currency' | 'planIds'>, now: Date): string | null {
  const early = refusal(row, now);
  if (early) return early.message;
  if (row.currency !== null && row.currency !== target.currency) return `coupon ${row.code} takes ${row.currency} off; this is billed in ${target.currency}`;
  if (row.plan_ids.length > 0 && !target.planIds.some((p) => row.plan_ids.includes(p))) return `coupon ${row.code} applies only to other plans`;
  return null;
}

/**
 * Redeems a coupon (by id or code) for a subscription or one invoice: checks it applies (409
 * `coupon_not_applicable`: another plan, another currency), counts the redemption race-free (409
 * `coupon_inactive`, `coupon_expired`, `coupon_max_redemptions_reached`) and records the discount.
 * A subscription keeps one discount in force: a new one ends the old.
 */
export async function redeemCoupon(ctx: Ctx, reference: string, target: RedemptionTarget): Promise<{ discount: DiscountRow; coupon: CouponRow }> {
  const found = await resolveCoupon(ctx, reference);
  const early = refusal(found, ctx.now);
  if (early) throw early;
  if (found.currency !== null && found.currency !== target.currency) {
    throw errors.conflict(`coupon ${found.code} takes ${found.currency} off; this is billed in ${target.currency}`, 'coupon_not_applicable');
  }
  if (found.plan_ids.length > 0 && !target.planIds.some((p) => found.plan_ids.includes(p))) {
    throw errors.conflict(`coupon ${found.code} applies only to plans ${found.plan_ids.join(', ')}`, 'coupon_not_applicable');
  }
  const coupon = await claimRedemption(ctx.tx, ctx.tenantId, found.id, ctx.now);
  if (!coupon) {
    const now = await findCoupon(ctx.tx, ctx.tenantId, found.id);
    throw (now && refusal(now, ctx.now)) ?? errors.conflict(`coupon ${found.code} cannot be redeemed now`, 'coupon_inactive');
  }
  if (target.subscriptionId) {
    const open = await openSubscriptionDiscounts(ctx.tx, ctx.tenantId, [target.subscriptionId]);
    await endDiscounts(
      ctx.tx,
      ctx.tenantId,
      open.map((d) => d.id),
      ctx.now,
    );
  }
  const discount = await insertDiscount(ctx.tx, {
    tenant_id: ctx.tenantId,
    id: newId(),
    coupon_id: coupon.id,
    customer_id: target.customerId,
    subscription_id: target.subscriptionId ?? null,
    invoice_id: target.invoiceId ?? null,
    starts_at: ctx.now,
    ends_at: coupon.duration === 'repeating' ? addInterval(ctx.now, 'month', coupon.duration_in_months!) : null,
    ended_at: null,
    created_at: ctx.now,
  });
  return { discount, coupon };
}

/** A discount with its coupon, as invoicing applies it. */
export type DiscountInForce = { discount: DiscountRow; coupon: CouponRow };

export function discountRule(coupon: CouponRow): DiscountRule {
  return { percent_off_bp: coupon.percent_off_bp, amount_off: coupon.amount_off, plan_ids: coupon.plan_ids };
}

/**
 * Whether a subscription's discount covers an invoice whose period starts at `periodStart`:
 * `once` the first invoice it discounts, `repeating` invoices of periods that start before its end
 * (start + duration_in_months), `forever` every one — and only in the coupon's currency.
 */
export function discountCovers(d: DiscountInForce, periodStart: Date, currency: string): boolean {
  if (d.discount.ended_at !== null) return false;
  if (d.coupon.currency !== null && d.coupon.currency !== currency) return false;
  switch (d.coupon.duration) {
    case 'once':
      return d.discount.invoices_discounted === 0;
    case 'repeating':
      return d.discount.ends_at !== null && periodStart < d.discount.ends_at;
    case 'forever':
      return true;
  }
}

/** The discount in force on each of these subscriptions (locked for this transaction). */
export async function subscriptionDiscounts(ctx: ReadCtx, subscriptionIds: string[]): Promise<Map<string, DiscountInForce>> {
  const rows = await openSubscriptionDiscounts(ctx.tx, ctx.tenantId, subscriptionIds);
  const coupons = new Map((await findCouponsByIds(ctx.tx, ctx.tenantId, [...new Set(rows.map((r) => r.coupon_id))])).map((c) => [c.id, c]));
  return new Map(rows.map((r) => [r.subscription_id!, { discount: r, coupon: coupons.get(r.coupon_id)! }]));
}

/**
 * Records what discounts took off an invoice and counts the use: a `once` discount ends with its
 * first invoice, a `repeating` one once its end has passed. Zero amounts are recorded too (the
 * discount applied, there was nothing to take off) but do not use up a `once` discount.
 */
export async function recordInvoiceDiscounts(ctx: Ctx, invoiceId: string, applied: { inForce: DiscountInForce; amount: number }[]): Promise<void> {
  if (applied.length === 0) return;
  await insertInvoiceDiscounts(
    ctx.tx,
    applied.map(({ inForce, amount }) => ({
      tenant_id: ctx.tenantId,
      id: newId(),
      invoice_id: invoiceId,
      discount_id: inForce.discount.id,
      coupon_id: inForce.coupon.id,
      amount,
    })),
  );
  const uses = applied
    .filter(({ inForce, amount }) => amount > 0 || inForce.coupon.duration !== 'once' || inForce.discount.subscription_id === null)
    .map(({ inForce }) => ({
      discountId: inForce.discount.id,
      end:
        inForce.discount.subscription_id === null ||
        inForce.coupon.duration === 'once' ||
        (inForce.discount.ends_at !== null && inForce.discount.ends_at <= ctx.now),
    }));
  await countDiscountUses(ctx.tx, ctx.tenantId, uses, ctx.now);
  const invoiceOnly = applied.filter(({ inForce }) => inForce.discount.subscription_id === null && inForce.discount.invoice_id === null);
  await setDiscountInvoice(
    ctx.tx,
    ctx.tenantId,
    invoiceOnly.map(({ inForce }) => inForce.discount.id),
    invoiceId,
  );
}

/**
 * Lines with these discounts taken off (applyDiscounts, in order), each line carrying its
 * `discount_amount`, and what each discount took (for recordInvoiceDiscounts).
 */
export function discountLines<L extends DiscountableLine>(
  lines: readonly L[],
  inForce: readonly DiscountInForce[],
): { lines: (L & { discount_amount: number })[]; applied: { inForce: DiscountInForce; amount: number }[] } {
  const allocation = applyDiscounts(
    lines,
    inForce.map((d) => discountRule(d.coupon)),
  );
  return {
    lines: lines.map((l, i) => ({ ...l, discount_amount: allocation.lineDiscounts[i]! })),
    applied: inForce.map((d, i) => ({ inForce: d, amount: allocation.discountTotals[i]! })),
  };
}

/** Ends the discount in force on a subscription (its later invoices are not discounted); 404 when none. */
export async function removeSubscriptionDiscount(ctx: Ctx, subscriptionId: string): Promise<DiscountRow> {
  const ended = await endSubscriptionDiscount(ctx.tx, ctx.tenantId, subscriptionId, ctx.now);
  if (!ended) throw errors.notFound('discount');
  return ended;
}

/**
 * Reads and writes of this module's own tables that flows and other modules call; the repository
 * itself is private to the module (index.ts exports operations and types only).
 */
export { findCoupon } from './coupons.repository.js';
