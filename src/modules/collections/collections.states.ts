import type { Selectable, Updateable } from 'kysely';
import type { Tx } from '../../platform/db/schema.js';
import { transition, type Transitions } from '../../platform/db/transition.js';
import { errors } from '../../platform/errors.js';
import type { AttemptStatus, RefundsTable, RefundStatus } from './collections.tables.js';

/**
 * A payment attempt (DESIGN §11). `pending` has a sub-state, `pending_reason`: `notice` (a mandate
 * debit waiting out its pre-debit notice), `charging` (sent, or about to be), `confirmation` (the
 * gateway answered "pending"; a webhook or the resolver settles it).
 *
 *   pending ──succeed (the gateway charged)──> succeeded
 *      │ ────fail (the gateway declined, or gave up)──> failed
 *      │ ────cancel (only while `notice`: never sent)──> canceled
 *      └──── claim_notice / record (`notice` → `charging`; a gateway reference noted) ──> pending
 * succeeded, failed and canceled are final: a second settlement of the same attempt (a webhook
 * after the synchronous answer) finds no `pending` row and changes nothing.
 */
export const attemptTransitions = {
  succeed: { from: ['pending'], to: 'succeeded' },
  fail: { from: ['pending'], to: 'failed' },
  cancel: { from: ['pending'], to: 'canceled' },
  record: { from: ['pending'], to: 'pending' },
} as const satisfies Transitions<AttemptStatus>;

/**
 * A refund (DESIGN §20):
 *   pending ──succeed (the gateway paid it)──> succeeded
 *      │ ────mark_paid (an offline refund paid by hand, docs/decisions/0570)──> succeeded
 *      │ ────fail (the gateway refused it)──> failed
 *      │ ────mark_failed (an offline refund that will not be paid)──> failed
 *      └──── record (the gateway's refund id noted; its answer still to come) ──> pending
 *   succeeded ──fail_after_success (the gateway reports a refund it had paid as failed: the card
 *               was closed, the bank sent the money back; docs/decisions/0860)──> failed
 * failed is final.
 */
export const refundTransitions = {
  succeed: { from: ['pending'], to: 'succeeded' },
  mark_paid: { from: ['pending'], to: 'succeeded' },
  fail: { from: ['pending'], to: 'failed' },
  mark_failed: { from: ['pending'], to: 'failed' },
  fail_after_success: { from: ['succeeded'], to: 'failed' },
  record: { from: ['pending'], to: 'pending' },
} as const satisfies Transitions<RefundStatus>;

/**
 * An offline refund settled by hand (docs/decisions/0570): the guarded `mark_paid` / `mark_failed`
 * move of a pending refund that no gateway carries (`gateway IS NULL`). A refund in another status
 * → 409 `refund_<status>`; a gateway's refund → 409 `refund_not_offline`.
 */
export async function settleOfflineRefund(
  tx: Tx,
  tenantId: string,
  id: string,
  event: 'mark_paid' | 'mark_failed',
  patch: Updateable<RefundsTable>,
): Promise<Selectable<RefundsTable>> {
  return transition<Selectable<RefundsTable>>(tx, {
    table: 'refunds',
    noun: 'refund',
    tenantId,
    id,
    event,
    transition: refundTransitions[event],
    patch,
    guard: (query) => query.where('gateway', 'is', null),
    refuse: (current) =>
      current.status === 'pending' && current.gateway !== null
        ? errors.conflict(
            `the refund is paid by the ${current.gateway} gateway, which reports its outcome: only an offline refund is marked by hand`,
            'refund_not_offline',
          )
        : undefined,
  });
}

export type CheckoutSessionStatus = 'open' | 'complete' | 'expired';

/**
 * A hosted checkout session (DESIGN §11):
 *   open ──complete (its invoice paid through it)──> complete
 *     └──expire──> expired
 * An open session past `expires_at` is treated as expired when read (no job rewrites it).
 */
export const checkoutSessionTransitions = {
  complete: { from: ['open'], to: 'complete' },
  expire: { from: ['open'], to: 'expired' },
} as const satisfies Transitions<CheckoutSessionStatus>;

/** Statuses with no way out. */
export function finalStatuses<Status extends string>(transitions: Transitions<Status>, all: readonly Status[]): Status[] {
  return all.filter((s) => !Object.values(transitions).some((t) => t.from.includes(s) && t.to !== s));
}
