import { sql, type Kysely } from 'kysely';
import type { Ctx } from '../../platform/context.js';
import type { DB } from '../../platform/db/schema.js';
import { emitEvent } from '../../platform/events/events.js';
import { tenantsWithOverdueSubscriptionInvoices, unsettledSubscriptionInvoices } from '../../modules/invoices/index.js';
import { childrenBilledTo, findCustomers } from '../../modules/customers/index.js';
import {
  claimDueSubscriptions,
  claimDueSubscriptionsOfCustomers,
  delinquentSubscriptionIds,
  tenantsWithDelinquentSubscriptions,
  tenantsWithDueSubscriptions,
  toSubscription,
  transitionSubscriptions,
  type SubscriptionRow,
} from '../../modules/subscriptions/index.js';
import { renewSubscriptions } from './renew-subscriptions.js';
import type { Mode } from '../../platform/auth/tenant-mode.js';

export type BillingRunReport = {
  renewed: number;
  trials_ended: number;
  ended: number;
  failed: number;
  past_due: number;
  unpaid: number;
  recovered: number;
};

export type BillingRunOptions = {
  /** Subscriptions claimed and renewed per transaction. */
  batchSize?: number;
  log?: (message: string, fields?: Record<string, unknown>) => void;
  /** Only this mode's tenants (the job passes the deployment's mode); every tenant when absent. */
  mode?: Mode;
};

const DEFAULT_BATCH = 50;

/**
 * The billing run (job `subscriptions.billing_run`, every minute): renews every subscription whose
 * period has ended at `now`, then moves subscriptions to past_due / unpaid and back by the state
 * of their invoices. Re-running at the same instant finds nothing due and changes nothing.
 *
 * Crash safety: each batch is claimed (FOR UPDATE SKIP LOCKED) and renewed in one transaction, so
 * a batch is either wholly done — invoices, numbers, ledger entries, events, periods moved — or
 * not at all, and no lock outlives its batch. A batch that fails is retried one subscription per
 * transaction, so one bad subscription is skipped (and logged) without holding up the others.
 */
export async function runBillingRun(db: Kysely<DB>, now: Date, options: BillingRunOptions = {}): Promise<BillingRunReport> {
  const batchSize = options.batchSize ?? DEFAULT_BATCH;
  const log = options.log ?? (() => {});
  const mode = options.mode ?? null;
  const report: BillingRunReport = { renewed: 0, trials_ended: 0, ended: 0, failed: 0, past_due: 0, unpaid: 0, recovered: 0 };
  const failed = new Set<string>();
  const done = new Set<string>();

  const renewBatch = async (tenantId: string, only?: string) =>
    db.transaction().execute(async (tx) => {
      const ctx: Ctx = { tx, tenantId, now };
      const first = await claimDueSubscriptions(tx, tenantId, now, only ? 1 : batchSize, { exclude: [...failed], only });
      const claimed = only ? first : [...first, ...(await siblingsBilledTogether(ctx, first, failed))];
      const outcome = await renewSubscriptions(ctx, claimed);
      return { claimed: claimed.map((r) => r.id), outcome };
    });

  for (;;) {
    const tenants = (await tenantsWithDueSubscriptions(db, mode, now, done.size + 100)).filter((t) => !done.has(t));
    if (tenants.length === 0) break;
    for (const tenantId of tenants) {
      for (;;) {
        let claimed: string[] = [];
        try {
          const result = await renewBatch(tenantId);
          claimed = result.claimed;
          report.renewed += result.outcome.renewed.length;
          report.trials_ended += result.outcome.trialsEnded.length;
          report.ended += result.outcome.ended.length;
        } catch (error) {
          // Find the culprit: the same subscriptions, one per transaction.
          const retry = await db.transaction().execute((tx) => claimDueSubscriptions(tx, tenantId, now, batchSize, { exclude: [...failed] }));
          claimed = retry.map((r) => r.id);
          for (const id of claimed) {
            try {
              const result = await renewBatch(tenantId, id);
              report.renewed += result.outcome.renewed.length;
              report.trials_ended += result.outcome.trialsEnded.length;
              report.ended += result.outcome.ended.length;
            } catch (single) {
              failed.add(id);
              report.failed += 1;
              log('subscription renewal failed', { tenantId, subscriptionId: id, err: (single as Error).message, batchError: (error as Error).message });
            }
          }
        }
        if (claimed.length === 0) break;
      }
      done.add(tenantId);
    }
  }

  const delinquencyTenants = new Set([
    ...(await tenantsWithOverdueSubscriptionInvoices(db, mode, now)),
    ...(await tenantsWithDelinquentSubscriptions(db, mode)),
  ]);
  for (const tenantId of delinquencyTenants) {
    const moved = await db.transaction().execute((tx) => settleDelinquency({ tx, tenantId, now }));
    report.past_due += moved.pastDue;
    report.unpaid += moved.unpaid;
    report.recovered += moved.recovered;
  }
  return report;
}

/**
 * The other due subscriptions of the children billed to the same parents as the children in a
 * claimed batch, claimed too (decision 0550): a parent's period goes on one consolidated invoice
 * however the batch happened to be cut. One skipped as locked (another worker renewing it at this
 * instant) goes on that worker's invoice for the parent.
 */
async function siblingsBilledTogether(ctx: Ctx, claimed: SubscriptionRow[], failed: ReadonlySet<string>): Promise<SubscriptionRow[]> {
  if (claimed.length === 0) return [];
  const customers = await findCustomers(
    ctx.tx,
    ctx.tenantId,
    claimed.map((r) => r.customer_id),
  );
  const parents = [...new Set(customers.filter((c) => c.bill_to === 'parent' && c.parent_customer_id).map((c) => c.parent_customer_id!))];
  if (parents.length === 0) return [];
  const children = await childrenBilledTo(ctx.tx, ctx.tenantId, parents);
  return claimDueSubscriptionsOfCustomers(ctx.tx, ctx.tenantId, ctx.now, children, [...claimed.map((r) => r.id), ...failed]);
}

/**
 * Delinquency by the invoices: a subscription with an invoice open past its due date is past_due;
 * one with an uncollectible invoice is unpaid; once neither remains (paid, credited or voided) it
 * is active again. Each move is a guarded transition, so it happens (and emits) once.
 */
export async function settleDelinquency(ctx: Ctx): Promise<{ pastDue: number; unpaid: number; recovered: number }> {
  // One delinquency pass per tenant at a time: two racing runs would lock the same subscriptions
  // in different orders and deadlock. The second waits, then finds every move already made.
  await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`delinquency:${ctx.tenantId}`}, 0))`.execute(ctx.tx);
  const unsettled = await unsettledSubscriptionInvoices(ctx.tx, ctx.tenantId, ctx.now);
  const bySubscription = new Map(unsettled.map((u) => [u.subscription_id, u]));
  const delinquent = await delinquentSubscriptionIds(ctx.tx, ctx.tenantId);
  const patch = { updated_at: ctx.now };
  const unpaid = await transitionSubscriptions(
    ctx.tx,
    ctx.tenantId,
    unsettled.filter((u) => u.uncollectible).map((u) => u.subscription_id),
    'mark_unpaid',
    patch,
  );
  const pastDue = await transitionSubscriptions(
    ctx.tx,
    ctx.tenantId,
    unsettled.filter((u) => u.overdue && !u.uncollectible).map((u) => u.subscription_id),
    'mark_past_due',
    patch,
  );
  const recovered = await transitionSubscriptions(
    ctx.tx,
    ctx.tenantId,
    delinquent.filter((d) => !bySubscription.has(d.id)).map((d) => d.id),
    'recover',
    patch,
  );
  for (const row of pastDue) await emitEvent(ctx, 'subscription.past_due', toSubscription(row));
  for (const row of unpaid) await emitEvent(ctx, 'subscription.unpaid', toSubscription(row));
  for (const row of recovered) await emitEvent(ctx, 'subscription.recovered', toSubscription(row));
  return { pastDue: pastDue.length, unpaid: unpaid.length, recovered: recovered.length };
}
