import type { Updateable } from 'kysely';
import type { Tx } from '../../platform/db/schema.js';
import { errors } from '../../platform/errors.js';
import type { ReferralsTable, ReferralStatus } from './referrals.tables.js';
import type { ReferralRow } from './referrals.repository.js';

/**
 *   pending ──complete (referred customer's paid invoice, inside the window)──> completed
 *      │────expire (window closed; the job)──> expired
 *      └────cancel──> canceled
 * completed, expired and canceled are final.
 */
export const referralTransitions = {
  complete: { from: ['pending'], to: 'completed' },
  expire: { from: ['pending'], to: 'expired' },
  cancel: { from: ['pending'], to: 'canceled' },
} as const satisfies Record<string, { from: readonly ReferralStatus[]; to: ReferralStatus }>;

export type ReferralEvent = keyof typeof referralTransitions;

/**
 * The guarded transition. `window` adds the window to the guard: `inside` (expires_at > at) for
 * completion, `closed` (expires_at <= at) for expiry — so a payment and the expiry job racing at
 * the boundary cannot both win. Zero rows → undefined; the caller decides whether that is an error.
 */
export async function tryTransitionReferral(
  tx: Tx,
  tenantId: string,
  id: string,
  event: ReferralEvent,
  patch: Updateable<ReferralsTable> = {},
  window?: { inside?: Date; closed?: Date },
): Promise<ReferralRow | undefined> {
  const t = referralTransitions[event];
  let q = tx
    .updateTable('referrals')
    .set({ ...patch, status: t.to })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .where('status', 'in', [...t.from]);
  if (window?.inside) q = q.where('expires_at', '>', window.inside);
  if (window?.closed) q = q.where('expires_at', '<=', window.closed);
  return q.returningAll().executeTakeFirst();
}

/** As tryTransitionReferral, but zero rows is 404 (missing) or 409 (another state). */
export async function transitionReferral(
  tx: Tx,
  tenantId: string,
  id: string,
  event: ReferralEvent,
  patch: Updateable<ReferralsTable> = {},
): Promise<ReferralRow> {
  const row = await tryTransitionReferral(tx, tenantId, id, event, patch);
  if (row) return row;
  const current = await tx.selectFrom('referrals').select('status').where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
  if (!current) throw errors.notFound('referral');
  throw errors.conflict(`cannot ${event} a referral whose status is ${current.status}`, `referral_${current.status}`);
}
