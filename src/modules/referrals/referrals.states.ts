import type { Updateable } from 'kysely';
import type { Tx } from '../../platform/db/schema.js';
import { transition, tryTransition } from '../../platform/db/transition.js';
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
  return tryTransition<ReferralRow>(tx, {
    table: 'referrals',
    tenantId,
    id,
    event,
    transition: referralTransitions[event],
    patch,
    guard: (q) => {
      let guarded = q;
      if (window?.inside) guarded = guarded.where('expires_at', '>', window.inside);
      if (window?.closed) guarded = guarded.where('expires_at', '<=', window.closed);
      return guarded;
    },
  });
}

export async function transitionReferral(
  tx: Tx,
  tenantId: string,
  id: string,
  event: ReferralEvent,
  patch: Updateable<ReferralsTable> = {},
): Promise<ReferralRow> {
  return transition<ReferralRow>(tx, { table: 'referrals', noun: 'referral', tenantId, id, event, transition: referralTransitions[event], patch });
}
