import { sql, type Insertable, type RawBuilder, type Selectable, type Updateable } from 'kysely';
import { testClockScope } from '../../platform/test-clock-scope.js';
import { plainArrayLiteral } from '../../platform/db/array-literal.js';
import { paginate } from '../../platform/db/paginate.js';
import type { LockFlag, Tx } from '../../platform/db/schema.js';
import type { Page } from '../../platform/http/envelope.js';
import type { SubscriptionsTable, SubscriptionStatus } from './subscriptions.tables.js';
import './subscriptions.tables.js';
import { inMode, type Mode } from '../../platform/auth/tenant-mode.js';

export type SubscriptionRow = Selectable<SubscriptionsTable>;

/** The statuses the billing run renews (or ends) when their period is over. */
export const RENEWABLE_STATUSES = ['active', 'trialing', 'past_due', 'unpaid'] as const satisfies readonly SubscriptionStatus[];
/** Renewable or paused: a subscription that still meters usage (decision 0190). */
export const RUNNING_STATUSES = [...RENEWABLE_STATUSES, 'paused'] as const satisfies readonly SubscriptionStatus[];

export async function insertSubscription(tx: Tx, row: Insertable<SubscriptionsTable>): Promise<void> {
  await tx.insertInto('subscriptions').values(row).execute();
}

export async function findSubscription<T extends Tx>(tx: T, tenantId: string, id: string, forUpdate?: LockFlag<T>): Promise<SubscriptionRow | undefined> {
  let q = tx.selectFrom('subscriptions').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id);
  if (forUpdate) q = q.forUpdate();
  return q.executeTakeFirst();
}

export async function findSubscriptionByExternalId(tx: Tx, tenantId: string, externalId: string): Promise<SubscriptionRow | undefined> {
  return tx.selectFrom('subscriptions').selectAll().where('tenant_id', '=', tenantId).where('external_id', '=', externalId).executeTakeFirst();
}

/** A change that is not a status move (latest invoice after a plan change, say). Same tenant scope. */
export async function updateSubscription(tx: Tx, tenantId: string, id: string, patch: Updateable<SubscriptionsTable>): Promise<SubscriptionRow> {
  return tx.updateTable('subscriptions').set(patch).where('tenant_id', '=', tenantId).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

export type SubscriptionFilter = { status?: SubscriptionStatus; customer_id?: string; plan_id?: string };

export async function listSubscriptionRows(
  tx: Tx,
  tenantId: string,
  filter: SubscriptionFilter,
  page: Page,
): Promise<{ rows: SubscriptionRow[]; total: number }> {
  let q = tx.selectFrom('subscriptions').where('tenant_id', '=', tenantId);
  if (filter.status) q = q.where('status', '=', filter.status);
  if (filter.customer_id) q = q.where('customer_id', '=', filter.customer_id);
  if (filter.plan_id) q = q.where('plan_id', '=', filter.plan_id);
  return paginate<SubscriptionRow>(tx, q, { tenantId, table: 'subscriptions', page });
}

/**
 * The billing run's one cross-tenant read: which tenants have a subscription whose period is over.
 * Everything after it is scoped by tenant (and on Citus routes to that tenant's shard).
 */
export async function tenantsWithDueSubscriptions(tx: Tx, mode: Mode | null, now: Date, limit: number): Promise<string[]> {
  const rows = await sql<{ tenant_id: string }>`
    SELECT DISTINCT tenant_id FROM subscriptions
    WHERE status IN (${sql.join(RENEWABLE_STATUSES)}) AND current_period_end <= ${now} AND ${inMode(mode)}
      AND ${testClockScope('subscriptions.tenant_id', 'subscriptions.customer_id')}
    LIMIT ${limit}`.execute(tx);
  return rows.rows.map((r) => r.tenant_id);
}

/**
 * Claims up to `limit` of the tenant's due subscriptions for the caller's transaction:
 * FOR NO KEY UPDATE SKIP LOCKED, so concurrent runs take disjoint batches and none waits for another.
 * NO KEY: a renewal changes no key column, and the weaker lock does not collide with the KEY SHARE
 * locks that inserts referencing a subscription take (an MRR snapshot running at the same moment
 * would otherwise make the run skip the subscription, as if another run held it).
 * The locks end with the caller's transaction; nothing is held across batches.
 */
export async function claimDueSubscriptions(
  tx: Tx,
  tenantId: string,
  now: Date,
  limit: number,
  options: { exclude?: readonly string[]; only?: string } = {},
): Promise<SubscriptionRow[]> {
  let q = tx
    .selectFrom('subscriptions')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('status', 'in', [...RENEWABLE_STATUSES])
    .where('current_period_end', '<=', now)
    .where(testClockScope('subscriptions.tenant_id', 'subscriptions.customer_id'));
  if (options.only) q = q.where('id', '=', options.only);
  if (options.exclude?.length) q = q.where('id', 'not in', [...options.exclude]);
  // Ordered by the period end alone, so the partial index serves the order and LIMIT stops the scan
  // early (a tie-breaker on id would sort every due row on every claim).
  return q.orderBy('current_period_end').limit(limit).forNoKeyUpdate().skipLocked().execute();
}

/**
 * The other due subscriptions of these customers, claimed like claimDueSubscriptions (the billing
 * run adds the siblings of a batch's children billed to a parent, so the parent's period goes on
 * one consolidated invoice: decision 0550).
 */
export async function claimDueSubscriptionsOfCustomers(
  tx: Tx,
  tenantId: string,
  now: Date,
  customerIds: string[],
  exclude: readonly string[],
): Promise<SubscriptionRow[]> {
  if (customerIds.length === 0) return [];
  let q = tx
    .selectFrom('subscriptions')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('customer_id', '=', sql<string>`ANY(${customerIds}::uuid[])`)
    .where('status', 'in', [...RENEWABLE_STATUSES])
    .where('current_period_end', '<=', now)
    .where(testClockScope('subscriptions.tenant_id', 'subscriptions.customer_id'));
  if (exclude.length) q = q.where('id', '<>', sql<string>`ALL(${[...exclude]}::uuid[])`);
  return q.forNoKeyUpdate().skipLocked().execute();
}

/** The running (renewable or paused) subscriptions of customers: usage ingestion checks an event against their current period. */
export async function runningSubscriptionsOfCustomers(
  tx: Tx,
  tenantId: string,
  customerIds: string[],
): Promise<Pick<SubscriptionRow, 'id' | 'customer_id' | 'plan_id' | 'currency' | 'current_period_start' | 'latest_invoice_id' | 'status'>[]> {
  if (customerIds.length === 0) return [];
  return tx
    .selectFrom('subscriptions')
    .select(['id', 'customer_id', 'plan_id', 'currency', 'current_period_start', 'latest_invoice_id', 'status'])
    .where('tenant_id', '=', tenantId)
    .where('customer_id', '=', sql<string>`ANY(${customerIds}::uuid[])`)
    .where('status', 'in', RUNNING_STATUSES)
    .execute();
}

/**
 * Late usage (DESIGN §13), in one query for a whole ingestion batch: for each (customer, metric
 * code, oldest event instant) of the batch, the latest current-period start among the customer's
 * running subscriptions that meter the metric (an active metered price of their plan in their
 * currency) and whose period starts after that oldest event, counting only subscriptions whose
 * latest invoice is not a draft (a draft can still change). Only pairs with such a start come
 * back — none when every event is in its current period, the usual case.
 */
export async function meteredPeriodCutoffs(
  tx: Tx,
  tenantId: string,
  pairs: { customerId: string; metricCode: string; oldest: Date }[],
): Promise<{ customer_id: string; metric_code: string; cutoff: Date }[]> {
  if (pairs.length === 0) return [];
  let oldest = pairs[0]!.oldest;
  for (const p of pairs) if (p.oldest < oldest) oldest = p.oldest;
  // The guard is evaluated once (an uncorrelated EXISTS, planned as a one-time filter) by a range
  // read of subscriptions_period_start: when no running subscription of the tenant started its
  // period after the batch's oldest event — the usual case, events arriving as they happen — no
  // pair is looked up at all (decision 0790).
  const { rows } = await sql<{ customer_id: string; metric_code: string; cutoff: Date }>`
    SELECT p.c::text AS customer_id, p.m AS metric_code, max(s.current_period_start) AS cutoff
      FROM ROWS FROM (unnest(${plainArrayLiteral(pairs.map((p) => p.customerId))}::uuid[]), json_array_elements_text(${JSON.stringify(pairs.map((p) => p.metricCode))}::json),
                      unnest(${plainArrayLiteral(pairs.map((p) => p.oldest.toISOString()))}::timestamptz[]))
           AS p(c, m, oldest)
      JOIN subscriptions s ON s.tenant_id = ${tenantId}::uuid AND s.customer_id = p.c AND s.status = ANY(${[...RUNNING_STATUSES]}::text[])
                          AND s.current_period_start > p.oldest
     WHERE EXISTS (SELECT 1 FROM prices pr
                    WHERE pr.tenant_id = s.tenant_id AND pr.plan_id = s.plan_id AND pr.currency = s.currency
                      AND pr.billing_scheme = 'metered' AND pr.active AND pr.metric_code = p.m)
       AND NOT EXISTS (SELECT 1 FROM invoices i WHERE i.tenant_id = s.tenant_id AND i.id = s.latest_invoice_id AND i.status = 'draft')
       AND EXISTS (SELECT 1 FROM subscriptions r
                    WHERE r.tenant_id = ${tenantId}::uuid AND r.current_period_start > ${oldest}::timestamptz AND r.status = ANY(${[...RUNNING_STATUSES]}::text[]))
     GROUP BY p.c, p.m`.execute(tx);
  return rows;
}

/**
 * A running (or paused) subscription of `planId` in `currency` whose customer has another running
 * subscription metering `metricCode` in its currency — the pair a new metered price would make
 * bill one event twice (decision 0190). Undefined when there is none.
 */
export async function subscriptionPairMeteringMetric(
  tx: Tx,
  tenantId: string,
  planId: string,
  metricCode: string,
  currency: string,
): Promise<{ mine: string; other: string } | undefined> {
  const live = RUNNING_STATUSES;
  return tx
    .selectFrom('subscriptions as mine')
    .innerJoin('subscriptions as other', (join) =>
      join.onRef('other.tenant_id', '=', 'mine.tenant_id').onRef('other.customer_id', '=', 'mine.customer_id').onRef('other.id', '<>', 'mine.id'),
    )
    .innerJoin('prices as p', (join) =>
      join.onRef('p.tenant_id', '=', 'other.tenant_id').onRef('p.plan_id', '=', 'other.plan_id').onRef('p.currency', '=', 'other.currency'),
    )
    .select(['mine.id as mine', 'other.id as other'])
    .where('mine.tenant_id', '=', tenantId)
    .where('mine.plan_id', '=', planId)
    .where('mine.currency', '=', currency)
    .where('mine.status', 'in', live)
    .where('other.status', 'in', live)
    .where('p.billing_scheme', '=', 'metered')
    .where('p.active', '=', true)
    .where('p.metric_code', '=', metricCode)
    .limit(1)
    .executeTakeFirst();
}

/** The tenant's past_due and unpaid subscriptions (the run checks whether they were paid). */
export async function delinquentSubscriptionIds(tx: Tx, tenantId: string): Promise<{ id: string; status: SubscriptionStatus }[]> {
  return (
    tx
      .selectFrom('subscriptions')
      .select(['id', 'status'])
      .where('tenant_id', '=', tenantId)
      .where('status', 'in', ['past_due', 'unpaid'])
      // Only what Kosh itself invoiced can recover by Kosh's invoices: an imported past_due
      // subscription owes an invoice of the old system, which Kosh cannot see.
      .where('latest_invoice_id', 'is not', null)
      .where(testClockScope('subscriptions.tenant_id', 'subscriptions.customer_id'))
      .execute()
  );
}

/** Which tenants have past_due or unpaid subscriptions (cross-tenant, like tenantsWithDueSubscriptions). */
export async function tenantsWithDelinquentSubscriptions(tx: Tx, mode: Mode | null): Promise<string[]> {
  const rows = await sql<{
    tenant_id: string;
  }>`SELECT DISTINCT tenant_id FROM subscriptions WHERE status IN ('past_due', 'unpaid') AND ${inMode(mode)}
      AND ${testClockScope('subscriptions.tenant_id', 'subscriptions.customer_id')}`.execute(tx);
  return rows.rows.map((r) => r.tenant_id);
}

/**
 * Trialing subscriptions of every tenant whose trial ends in (from, to], oldest end first, after
 * `after` (a keyset cursor: trial end then id) — the trial-ending notice scans them.
 */
/** Whether a subscription in the test clock scope is trialing: a test clock's advance skips the trial-notice scan while none is. */
export function trialsInClockScope(): RawBuilder<boolean> {
  return sql<boolean>`EXISTS (SELECT 1 FROM subscriptions WHERE status = 'trialing'
    AND ${testClockScope('subscriptions.tenant_id', 'subscriptions.customer_id')})`;
}

export async function trialsEndingBetween(
  tx: Tx,
  from: Date,
  to: Date,
  limit: number,
  after?: { trial_end: Date; tenant_id: string; id: string },
): Promise<Pick<SubscriptionRow, 'tenant_id' | 'id' | 'customer_id' | 'plan_id' | 'trial_end'>[]> {
  let q = tx
    .selectFrom('subscriptions')
    .select(['tenant_id', 'id', 'customer_id', 'plan_id', 'trial_end'])
    .where('status', '=', 'trialing')
    .where('trial_end', '>', from)
    .where('trial_end', '<=', to)
    .where(testClockScope('subscriptions.tenant_id', 'subscriptions.customer_id'));
  if (after) {
    q = q.where((eb) =>
      eb.or([
        eb('trial_end', '>', after.trial_end),
        eb.and([
          eb('trial_end', '=', after.trial_end),
          eb.or([eb('tenant_id', '>', after.tenant_id), eb.and([eb('tenant_id', '=', after.tenant_id), eb('id', '>', after.id)])]),
        ]),
      ]),
    );
  }
  return q.orderBy('trial_end').orderBy('tenant_id').orderBy('id').limit(limit).execute();
}

/** The earliest period end (a renewal or a trial's end) after `after` among the subscriptions in the test clock scope (an advance steps to it). */
export async function nextPeriodEndInClockScope(tx: Tx, after: Date): Promise<Date | null> {
  const rows = await sql<{ at: Date | null }>`
    SELECT min(current_period_end) AS at FROM subscriptions
    WHERE status IN (${sql.join(RENEWABLE_STATUSES)}) AND current_period_end > ${after}
      AND ${testClockScope('subscriptions.tenant_id', 'subscriptions.customer_id')}`.execute(tx);
  const at = rows.rows[0]?.at;
  return at ? new Date(at) : null;
}
