import type { Updateable } from 'kysely';
import type { Tx } from '../../platform/db/schema.js';
import { transition } from '../../platform/db/transition.js';
import type { CreditGrantRow } from './credits.repository.js';
import type { CreditGrantsTable, CreditGrantStatus } from './credits.tables.js';

/**
 * Every credit grant status change (`from × event → to`). Draw-downs move `remaining`, not the
 * status, except the last one (active → depleted, in the draw's guarded UPDATE).
 *
 *   pending ──activate (top-up invoice paid)──> active ──draw (to 0)──> depleted
 *      │                                          ├──expire──> expired
 *      └──void (top-up invoice voided)──> voided <┘ (promotional only)
 */
export const creditGrantTransitions = {
  activate: { from: ['pending'], to: 'active' },
  void: { from: ['pending', 'active'], to: 'voided' },
  expire: { from: ['active'], to: 'expired' },
} as const satisfies Record<string, { from: readonly CreditGrantStatus[]; to: CreditGrantStatus }>;

export async function transitionCreditGrant(
  tx: Tx,
  tenantId: string,
  id: string,
  event: keyof typeof creditGrantTransitions,
  patch: Updateable<CreditGrantsTable> = {},
): Promise<CreditGrantRow> {
  return transition<CreditGrantRow>(tx, {
    table: 'credit_grants',
    noun: 'credit_grant',
    tenantId,
    id,
    event,
    transition: creditGrantTransitions[event],
    patch,
  });
}
