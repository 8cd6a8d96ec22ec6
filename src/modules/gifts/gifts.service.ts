import type { Ctx, ReadCtx } from '../../platform/context.js';
import { errors } from '../../platform/errors.js';
import { emitEvent } from '../../platform/events/events.js';
import type { Page } from '../../platform/http/envelope.js';
import { newId } from '../../platform/ids.js';
import { toIso, toIsoOrNull } from '../../platform/time.js';
import { generateGiftCode, giftPrice, normalizeGiftCode } from './gift-codes.js';
import { codeExists, findGift, findGiftByCode, insertGift, listGiftRows, type GiftFilter, type GiftRow } from './gifts.repository.js';
import type { Gift } from './gifts.schemas.js';
import { transitionGift } from './gifts.states.js';

const DAY_MS = 86_400_000;
/** A gift code stays redeemable for one year unless the caller says otherwise. */
export const GIFT_VALIDITY_DAYS = 365;

export function toGift(row: GiftRow): Gift {
  return {
    id: row.id,
    tenant_id: row.tenant_id,
    code: row.code,
    plan_id: row.plan_id,
    buyer_customer_id: row.buyer_customer_id,
    recipient_email: row.recipient_email,
    status: row.status,
    redeemed_by_customer_id: row.redeemed_by_customer_id,
    redeemed_at: toIsoOrNull(row.redeemed_at),
    ...(row.invoice_id ? { invoice_id: row.invoice_id } : {}),
    subscription_id: row.subscription_id,
    duration_months: row.duration_months,
    currency: row.currency,
    amount: row.amount,
    expires_at: toIso(row.expires_at),
    canceled_at: toIsoOrNull(row.canceled_at),
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}

export { giftPrice };

/** A code not yet used in the tenant. With 80 random bits a retry is practically never needed. */
async function freshCode(ctx: Ctx): Promise<string> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const code = generateGiftCode();
    if (!(await codeExists(ctx.tx, ctx.tenantId, code))) return code;
  }
  throw new Error('could not draw an unused gift code in 5 attempts');
}

export type NewGift = {
  plan_id: string;
  buyer_customer_id: string;
  recipient_email: string;
  duration_months: number;
  currency: string;
  amount: number;
  invoice_id: string | null;
};

/** Stores a purchased gift with a fresh code and emits gift.purchased (the purchase flow calls this). */
export async function insertPurchasedGift(ctx: Ctx, input: NewGift): Promise<GiftRow> {
  const row: GiftRow = {
    tenant_id: ctx.tenantId,
    id: newId(),
    code: await freshCode(ctx),
    plan_id: input.plan_id,
    buyer_customer_id: input.buyer_customer_id,
    recipient_email: input.recipient_email,
    status: 'purchased',
    duration_months: input.duration_months,
    currency: input.currency,
    amount: input.amount,
    invoice_id: input.invoice_id,
    redeemed_by_customer_id: null,
    redeemed_at: null,
    subscription_id: null,
    canceled_at: null,
    expires_at: new Date(ctx.now.getTime() + GIFT_VALIDITY_DAYS * DAY_MS),
    created_at: ctx.now,
    updated_at: ctx.now,
  };
  await insertGift(ctx.tx, row);
  await emitEvent(ctx, 'gift.purchased', toGift(row));
  return row;
}

export async function getGiftRow(ctx: ReadCtx, id: string): Promise<GiftRow> {
  const row = await findGift(ctx.tx, ctx.tenantId, id);
  if (!row) throw errors.notFound('gift');
  return row;
}

export async function getGift(ctx: ReadCtx, id: string): Promise<Gift> {
  return toGift(await getGiftRow(ctx, id));
}

export async function listGifts(ctx: ReadCtx, filter: GiftFilter, page: Page): Promise<{ gifts: Gift[]; total: number }> {
  const { rows, total } = await listGiftRows(ctx.tx, ctx.tenantId, filter, page);
  return { gifts: rows.map(toGift), total };
}

/**
 * purchased → canceled, the first step of the cancel flow. Redemption fields are cleared (SPEC
 * 4.1: after a cancel they are null). Emits gift.canceled; the flow settles the invoice after.
 */
export async function markGiftCanceled(ctx: Ctx, id: string): Promise<GiftRow> {
  const row = await transitionGift(ctx.tx, ctx.tenantId, id, 'cancel', {
    canceled_at: ctx.now,
    redeemed_by_customer_id: null,
    redeemed_at: null,
    updated_at: ctx.now,
  });
  await emitEvent(ctx, 'gift.canceled', toGift(row));
  return row;
}

/** One message for every code that does not lead to a redeemable gift, so nothing is revealed. */
const INVALID_CODE = 'this gift code is not valid';

/**
 * Finds the gift a typed code names and locks it (FOR UPDATE) for the redemption — before the
 * invoice, the same order as the cancel flow, so the two never deadlock. A malformed, unknown, other
 * tenant's or canceled code all answer the same 422; a used, expired or unpaid one says so (its
 * holder has the code already, so that reveals nothing new).
 */
export async function lockRedeemableGift(ctx: Ctx, typed: string): Promise<GiftRow> {
  const code = normalizeGiftCode(typed);
  const found = code ? await findGiftByCode(ctx.tx, ctx.tenantId, code, true) : undefined;
  if (!found || found.status === 'canceled') throw errors.unprocessable(INVALID_CODE, 'gift_code_invalid');
  if (found.status === 'redeemed') throw errors.unprocessable('this gift code has already been used', 'gift_code_used');
  if (found.expires_at <= ctx.now) throw errors.unprocessable('this gift code has expired', 'gift_code_expired');
  return found;
}

/**
 * purchased → redeemed by `customerId`. The guarded UPDATE also re-checks expiry, so of two
 * customers racing for one code exactly one gets the row; the other gets the 422 for a used code.
 */
export async function markGiftRedeemed(ctx: Ctx, gift: GiftRow, customerId: string, subscriptionId: string): Promise<GiftRow> {
  const row = await transitionGift(
    ctx.tx,
    ctx.tenantId,
    gift.id,
    'redeem',
    { redeemed_by_customer_id: customerId, redeemed_at: ctx.now, subscription_id: subscriptionId, updated_at: ctx.now },
    { unexpiredAt: ctx.now },
  );
  await emitEvent(ctx, 'gift.redeemed', toGift(row));
  return row;
}
