import type { Transitions } from '../../platform/db/transition.js';
import type { AttemptStatus, RefundStatus } from './collections.tables.js';

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
 * A refund of a gateway payment (DESIGN §20):
 *   pending ──succeed──> succeeded
 *      │ ────fail──> failed
 *      └──── record (the gateway's refund id noted; its answer still to come) ──> pending
 * succeeded and failed are final.
 */
export const refundTransitions = {
  succeed: { from: ['pending'], to: 'succeeded' },
  fail: { from: ['pending'], to: 'failed' },
  record: { from: ['pending'], to: 'pending' },
} as const satisfies Transitions<RefundStatus>;

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
