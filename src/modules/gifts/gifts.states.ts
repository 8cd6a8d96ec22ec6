import type { Updateable } from 'kysely';
import type { Tx } from '../../platform/db/schema.js';
import { errors } from '../../platform/errors.js';
import { transition } from '../../platform/db/transition.js';
import type { GiftsTable, GiftStatus } from './gifts.tables.js';
import type { GiftRow } from './gifts.repository.js';

/**
 *   purchased ──cancel──> canceled      (settlement per SPEC 4.1, same transaction)
 *       └──────redeem──> redeemed      (code unexpired, purchase invoice paid; a subscription is made)
 * redeemed and canceled are final: cancel answers 409.
 */
export const giftTransitions = {
  cancel: { from: ['purchased'], to: 'canceled' },
  redeem: { from: ['purchased'], to: 'redeemed' },
} as const satisfies Record<string, { from: readonly GiftStatus[]; to: GiftStatus }>;

export type GiftEvent = keyof typeof giftTransitions;

/**
 * The guarded transition: `UPDATE gifts … WHERE status IN (from) RETURNING *`. On PostgreSQL a
 * concurrent second UPDATE waits for the first transaction, then re-checks the status and finds
 * nothing — so of twenty racing cancels exactly one flips the gift. Zero rows → 404 or 409.
 */
export async function transitionGift(
  tx: Tx,
  tenantId: string,
  id: string,
  event: GiftEvent,
  patch: Updateable<GiftsTable> = {},
  guard: { unexpiredAt?: Date } = {},
): Promise<GiftRow> {
  const { unexpiredAt } = guard;
  return transition<GiftRow>(tx, {
    table: 'gifts',
    noun: 'gift',
    tenantId,
    id,
    event,
    transition: giftTransitions[event],
    patch,
    guard: (q) => (unexpiredAt ? q.where('expires_at', '>', unexpiredAt) : q),
    refuse: (current) => {
      if (event !== 'redeem') return undefined;
      // A code holder lost a race or the code lapsed meanwhile: SPEC 4.9's 422, not a 409.
      if (current.status === 'purchased') return errors.unprocessable('this gift code has expired', 'gift_code_expired');
      if (current.status === 'canceled') return errors.unprocessable('this gift code is not valid', 'gift_code_invalid');
      return errors.unprocessable('this gift code has already been used', 'gift_code_used');
    },
  });
}
