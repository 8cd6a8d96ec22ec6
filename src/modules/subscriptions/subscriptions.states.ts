import { sql, type Updateable } from 'kysely';
import type { Tx } from '../../platform/db/schema.js';
import { errors } from '../../platform/errors.js';
import { transition } from '../../platform/db/transition.js';
import type { SubscriptionRow } from './subscriptions.repository.js';
import type { SubscriptionsTable, SubscriptionStatus } from './subscriptions.tables.js';

type Transition = {
  from: readonly SubscriptionStatus[];
  /** The new status; absent means the status stays (the event changes other columns). */
  to?: SubscriptionStatus;
  /** A second condition on the row, checked in the same guarded UPDATE. */
  pendingCancel?: boolean;
  verb: string;
};

/**
 * Every subscription status change, in one table (`from × event → to`); docs/subscriptions.md
 * draws it. Events marked "run" are the billing run's; the rest are API actions.
 *
 *   trialing ──end_trial (run)──> active ──mark_past_due (run)──> past_due ──mark_unpaid (run)──> unpaid
 *                                  ^  ^ └──────────recover (run)─────────────┘                     │
 *                                  │  └─────────────────────recover (run)────────────────────────────┘
 *                                  └──resume── paused <──pause── active, past_due
 *   cancel (now, any status but canceled) / expire (run, at period end if cancel_at_period_end) ──> canceled
 *   renew (run) keeps active, past_due and unpaid where they are and moves the period on.
 */
export const subscriptionTransitions = {
  renew: { from: ['active', 'past_due', 'unpaid'], verb: 'renew' },
  end_trial: { from: ['trialing'], to: 'active', verb: 'end the trial of' },
  expire: { from: ['active', 'trialing', 'past_due', 'unpaid'], to: 'canceled', verb: 'end' },
  mark_past_due: { from: ['active', 'unpaid'], to: 'past_due', verb: 'mark past due' },
  mark_unpaid: { from: ['active', 'past_due'], to: 'unpaid', verb: 'mark unpaid' },
  recover: { from: ['past_due', 'unpaid'], to: 'active', verb: 'reactivate' },
  pause: { from: ['active', 'past_due'], to: 'paused', pendingCancel: false, verb: 'pause' },
  resume: { from: ['paused'], to: 'active', verb: 'resume' },
  cancel: { from: ['active', 'trialing', 'past_due', 'paused', 'unpaid'], to: 'canceled', verb: 'cancel' },
  schedule_cancel: { from: ['active', 'trialing', 'past_due', 'unpaid'], pendingCancel: false, verb: 'cancel at period end' },
  reactivate: { from: ['active', 'trialing', 'past_due', 'unpaid'], pendingCancel: true, verb: 'reactivate' },
  change_plan: { from: ['active', 'trialing', 'past_due'], verb: 'change the plan of' },
  change_quantity: { from: ['active', 'trialing', 'past_due'], verb: 'change the quantity of' },
  change_items: { from: ['active', 'trialing', 'past_due'], verb: 'change the items of' },
} as const satisfies Record<string, Transition>;

export type SubscriptionEvent = keyof typeof subscriptionTransitions;

/** Whether `event` may happen to a subscription in `status` (the table, for callers that decide ahead). */
export function canTransition(status: SubscriptionStatus, event: SubscriptionEvent): boolean {
  return (subscriptionTransitions[event].from as readonly string[]).includes(status);
}

function refusal(current: Pick<SubscriptionRow, 'status' | 'cancel_at_period_end'>, event: SubscriptionEvent): Error {
  const t: Transition = subscriptionTransitions[event];
  if ((t.from as readonly string[]).includes(current.status) && t.pendingCancel !== undefined) {
    if (event === 'reactivate') return errors.conflict('the subscription has no pending cancellation to undo', 'no_pending_cancellation');
    if (event === 'schedule_cancel') return errors.conflict('the subscription is already set to cancel at period end', 'cancellation_pending');
    return errors.conflict(`cannot ${t.verb} a subscription that is set to cancel at period end; reactivate it first`, 'cancellation_pending');
  }
  return errors.conflict(`cannot ${t.verb} a subscription whose status is ${current.status}`, 'invalid_subscription_state');
}

/** The 409 (or 404) for an event refused against the row as it is now. */
export function refuseTransition(current: SubscriptionRow | undefined, event: SubscriptionEvent): Error {
  if (!current) return errors.notFound('subscription');
  return refusal(current, event);
}

/**
 * The guarded transition: `UPDATE … WHERE status IN (from) [AND cancel_at_period_end = …]
 * RETURNING *`. Zero rows → re-read → 404 (missing or another tenant's) or 409 naming the status.
 */
export async function transitionSubscription(
  tx: Tx,
  tenantId: string,
  id: string,
  event: SubscriptionEvent,
  patch: Updateable<SubscriptionsTable> = {},
): Promise<SubscriptionRow> {
  const t: Transition = subscriptionTransitions[event];
  return transition<SubscriptionRow>(tx, {
    table: 'subscriptions',
    noun: 'subscription',
    tenantId,
    id,
    event,
    transition: t,
    patch,
    guard: (q) => (t.pendingCancel !== undefined ? q.where('cancel_at_period_end', '=', t.pendingCancel) : q),
    refuse: (current) => refusal(current, event),
  });
}

/**
 * The same guarded transition for many subscriptions of one tenant (the billing run's bulk moves).
 * Rows no longer in a `from` status are skipped, not refused: the run re-reads them next time.
 */
export async function transitionSubscriptions(
  tx: Tx,
  tenantId: string,
  ids: readonly string[],
  event: SubscriptionEvent,
  patch: Updateable<SubscriptionsTable> = {},
): Promise<SubscriptionRow[]> {
  if (ids.length === 0) return [];
  const t: Transition = subscriptionTransitions[event];
  let query = tx
    .updateTable('subscriptions')
    .set({ ...patch, ...(t.to ? { status: t.to } : {}) })
    .where('tenant_id', '=', tenantId)
    .where('id', 'in', [...ids])
    .where('status', 'in', [...t.from]);
  if (t.pendingCancel !== undefined) query = query.where('cancel_at_period_end', '=', t.pendingCancel);
  return query.returningAll().execute();
}

/** One renewal as the billing run computed it from the row it claimed. */
export type PeriodAdvance = {
  id: string;
  /** The period end the renewal was computed from: the row must still have it. */
  fromPeriodEnd: Date;
  billingAnchor: Date;
  periodIndex: number;
  periodStart: Date;
  periodEnd: Date;
  /** The renewal's invoice; null when nothing was due (no invoice issued): the latest one stays. */
  latestInvoiceId: string | null;
};

/**
 * Moves many subscriptions to their next period in one statement: `renew` (active, past_due keep
 * their status) or `end_trial` (trialing → active). Guarded by the status and by the period end
 * the renewal was computed from, so a row that changed meanwhile is never moved twice; any
 * mismatch throws and the caller's transaction (with its invoices) rolls back.
 */
export async function advanceSubscriptionPeriods(tx: Tx, tenantId: string, advances: readonly PeriodAdvance[], now: Date): Promise<SubscriptionRow[]> {
  if (advances.length === 0) return [];
  const from: string[] = [...subscriptionTransitions.renew.from, ...subscriptionTransitions.end_trial.from];
  const values = sql.join(
    advances.map(
      (a) =>
        sql`(${a.id}::uuid, ${a.fromPeriodEnd}::timestamptz, ${a.billingAnchor}::timestamptz, ${a.periodIndex}::integer, ${a.periodStart}::timestamptz, ${a.periodEnd}::timestamptz, ${a.latestInvoiceId}::uuid)`,
    ),
  );
  // `id = ANY(…)` lets the planner find the rows by primary key instead of joining the VALUES list
  // against a scan of every subscription of the tenant.
  const result = await sql<SubscriptionRow>`
    UPDATE subscriptions AS s SET
      status = CASE WHEN s.status = 'trialing' THEN ${subscriptionTransitions.end_trial.to} ELSE s.status END,
      billing_anchor = v.billing_anchor,
      period_index = v.period_index,
      current_period_start = v.period_start,
      current_period_end = v.period_end,
      latest_invoice_id = COALESCE(v.latest_invoice_id, s.latest_invoice_id),
      updated_at = ${now}
    FROM (VALUES ${values}) AS v (id, from_period_end, billing_anchor, period_index, period_start, period_end, latest_invoice_id)
    WHERE s.tenant_id = ${tenantId} AND s.id = ANY(${advances.map((a) => a.id)}::uuid[])
      AND s.id = v.id AND s.current_period_end = v.from_period_end
      AND s.status IN (${sql.join(from)})
    RETURNING s.*`.execute(tx);
  if (result.rows.length !== advances.length) {
    throw new Error(`renewal guard: ${advances.length - result.rows.length} of ${advances.length} subscriptions changed while being renewed`);
  }
  return result.rows;
}
