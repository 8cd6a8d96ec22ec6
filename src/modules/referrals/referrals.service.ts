import { randomBytes } from 'node:crypto';
import type { Ctx, ReadCtx } from '../../platform/context.js';
import { errors } from '../../platform/errors.js';
import { emitEvent } from '../../platform/events/events.js';
import { newId } from '../../platform/ids.js';
import { toIso, toIsoOrNull } from '../../platform/time.js';
import { getCustomer } from '../customers/index.js';
import { getTenant, readSettings } from '../tenants/index.js';
import {
  codeExists,
  findLiveReferralOf,
  findPendingReferralOf,
  findReferral,
  insertReferral,
  listReferralRows,
  recordReward,
  type ReferralFilter,
  type ReferralRow,
} from './referrals.repository.js';
import { DEFAULT_PAGE_SIZE, type CreateReferralBody, type ListReferralsQuery, type Referral } from './referrals.schemas.js';
import { transitionReferral, tryTransitionReferral } from './referrals.states.js';

const DAY_MS = 86_400_000;
const CODE_ALPHABET = '23456789ABCDEFGHJKLMNPQRSTUVWXYZ';

export function toReferral(row: ReferralRow): Referral {
  return {
    id: row.id,
    tenant_id: row.tenant_id,
    code: row.code,
    referrer_id: row.referrer_id,
    referred_id: row.referred_id,
    status: row.status,
    reward_amount: row.reward_amount,
    currency: row.currency,
    reward_credited: row.reward_credited,
    credit_note_id: row.credit_note_id,
    qualifying_invoice_id: row.qualifying_invoice_id,
    expires_at: toIso(row.expires_at),
    qualified_at: toIsoOrNull(row.qualified_at),
    completed_at: toIsoOrNull(row.completed_at),
    expired_at: toIsoOrNull(row.expired_at),
    canceled_at: toIsoOrNull(row.canceled_at),
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}

function drawCode(): string {
  return `REF-${[...randomBytes(8)].map((b) => CODE_ALPHABET[b & 31]).join('')}`;
}

async function freshCode(ctx: Ctx): Promise<string> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const code = drawCode();
    if (!(await codeExists(ctx.tx, ctx.tenantId, code))) return code;
  }
  throw new Error('could not draw an unused referral code in 5 attempts');
}

/**
 * A pending referral. The window (tenant setting referral_window_days, default 30) is fixed here
 * as `expires_at`, so changing the setting later does not move existing referrals' windows.
 */
export async function createReferral(ctx: Ctx, input: CreateReferralBody): Promise<ReferralRow> {
  const referrer = await getCustomer(ctx, input.referrer_id);
  const referred = await getCustomer(ctx, input.referred_id);
  const existing = await findLiveReferralOf(ctx.tx, ctx.tenantId, referred.id);
  if (existing) {
    throw errors.conflict(`customer ${referred.id} already has a ${existing.status} referral (${existing.code})`, 'already_referred');
  }
  const settings = await readSettings(ctx);
  const currency = input.currency ?? (await getTenant(ctx)).base_currency;
  const row: ReferralRow = {
    tenant_id: ctx.tenantId,
    id: newId(),
    code: await freshCode(ctx),
    referrer_id: referrer.id,
    referred_id: referred.id,
    status: 'pending',
    reward_amount: input.reward_amount ?? settings.referral_reward_amount,
    currency,
    reward_credited: false,
    credit_note_id: null,
    qualifying_invoice_id: null,
    expires_at: new Date(ctx.now.getTime() + settings.referral_window_days * DAY_MS),
    qualified_at: null,
    completed_at: null,
    expired_at: null,
    canceled_at: null,
    created_at: ctx.now,
    updated_at: ctx.now,
  };
  // A concurrent create for the same referred customer loses on the partial unique index (409).
  await insertReferral(ctx.tx, row);
  await emitEvent(ctx, 'referral.created', toReferral(row));
  return row;
}

export async function getReferral(ctx: ReadCtx, id: string): Promise<Referral> {
  const row = await findReferral(ctx.tx, ctx.tenantId, id);
  if (!row) throw errors.notFound('referral');
  return toReferral(row);
}

export type ReferralPage = { referrals: Referral[]; total: number; page: number; perPage: number; offset: number; hasMore: boolean };

export async function listReferrals(ctx: ReadCtx, query: ListReferralsQuery): Promise<ReferralPage> {
  const perPage = query.per_page ?? query.limit ?? DEFAULT_PAGE_SIZE;
  if (query.starting_after !== undefined && query.ending_before !== undefined) {
    throw errors.invalidField('ending_before', 'give starting_after or ending_before, not both');
  }
  const cursor = query.starting_after ?? query.ending_before;
  // A cursor page is not an offset page: meta.page is 1 and offset 0 (the page is relative to the cursor).
  const offset = cursor !== undefined ? 0 : (query.offset ?? (query.page - 1) * perPage);
  const filter: ReferralFilter = { status: query.status, referrer_id: query.referrer_id };
  const { rows, total, hasMore } = await listReferralRows(ctx.tx, ctx.tenantId, filter, {
    limit: perPage,
    offset,
    ...(query.starting_after !== undefined ? { startingAfter: query.starting_after } : {}),
    ...(query.ending_before !== undefined ? { endingBefore: query.ending_before } : {}),
  });
  return { referrals: rows.map(toReferral), total, perPage, offset, page: Math.floor(offset / perPage) + 1, hasMore };
}

export async function cancelReferral(ctx: Ctx, id: string): Promise<ReferralRow> {
  const row = await transitionReferral(ctx.tx, ctx.tenantId, id, 'cancel', { canceled_at: ctx.now, updated_at: ctx.now });
  await emitEvent(ctx, 'referral.canceled', toReferral(row));
  return row;
}

/** pending → expired once the window has closed; null when it is not (or no longer) due. */
export async function expireReferral(ctx: Ctx, id: string): Promise<ReferralRow | null> {
  const row = await tryTransitionReferral(ctx.tx, ctx.tenantId, id, 'expire', { expired_at: ctx.now, updated_at: ctx.now }, { closed: ctx.now });
  if (!row) return null;
  await emitEvent(ctx, 'referral.expired', toReferral(row));
  return row;
}

/**
 * pending → completed for the referred customer's paid invoice, if they have a pending referral
 * whose window is still open; null otherwise. The guarded UPDATE makes concurrent payments of
 * two invoices complete it once. The caller credits the reward and then calls recordReferralReward.
 */
export async function markReferralCompleted(ctx: Ctx, referredId: string, invoiceId: string): Promise<ReferralRow | null> {
  const pending = await findPendingReferralOf(ctx.tx, ctx.tenantId, referredId);
  if (!pending) return null;
  const row = await tryTransitionReferral(
    ctx.tx,
    ctx.tenantId,
    pending.id,
    'complete',
    { qualified_at: ctx.now, completed_at: ctx.now, qualifying_invoice_id: invoiceId, updated_at: ctx.now },
    { inside: ctx.now },
  );
  return row ?? null;
}

/** Links the reward credit note and emits referral.completed. */
export async function recordReferralReward(ctx: Ctx, referral: ReferralRow, creditNoteId: string | null): Promise<ReferralRow> {
  const row = creditNoteId ? await recordReward(ctx.tx, ctx.tenantId, referral.id, creditNoteId) : referral;
  await emitEvent(ctx, 'referral.completed', toReferral(row));
  return row;
}

/**
 * Reads and writes of this module's own tables that flows and other modules call; the repository
 * itself is private to the module (index.ts exports operations and types only).
 */
export { referredWithPendingReferral } from './referrals.repository.js';
