import { sql } from 'kysely';
import { paginate, type ListResult } from '../../platform/db/paginate.js';
import type { Tx } from '../../platform/db/schema.js';
import type { Page } from '../../platform/http/envelope.js';
import type { MrrMovementKind } from './analytics.tables.js';
import { inMode, type Mode } from '../../platform/auth/tenant-mode.js';

/**
 * SQL of the analytics module. The snapshot is set-based (three statements per tenant, whatever
 * its size); reads go to the small per-day table or the movements index, never the subscriptions.
 */

/** Tenants that have any subscription: the snapshot job's only cross-tenant read. */
export async function tenantsWithSubscriptions(tx: Tx, mode: Mode | null): Promise<string[]> {
  const { rows } = await sql<{ tenant_id: string }>`SELECT DISTINCT tenant_id FROM subscriptions WHERE ${inMode(mode)}`.execute(tx);
  return rows.map((r) => r.tenant_id);
}

/**
 * Every subscription's MRR now (docs/decisions/0075, 0451): the recurring price of one period ×
 * quantity, less the subscription's coupon while it still applies (`forever`, or `repeating` until
 * its end; a `once` coupon discounts one invoice, not the recurring revenue) — a percentage
 * rounded half-up on the period's amount as invoices take it, an amount off at most the period's
 * amount — then brought to a month and divided by the interval count, rounded half-up once.
 * Subscription items (add-ons, decision 0470) add their price × quantity to the period's amount;
 * the coupon takes a percentage off each item line the coupon covers (no plans named, or the
 * item's plan among them), rounded half-up per line as invoices take it, and an amount off at
 * most what the covered lines come to (decision 0560).
 * `monthlyRecurringRevenue` (mrr.ts) computes the same; a test holds the two together.
 */
function computedMrr(tenantId: string, now: Date) {
  return sql`
      SELECT subscription_id, customer_id, currency,
        round(greatest(gross - discount, 0)::numeric * factor_numerator / factor_denominator)::bigint AS mrr
      FROM (
        SELECT s.id AS subscription_id, s.customer_id, s.currency,
          CASE WHEN s.status IN ('active', 'past_due') THEN coalesce(p.amount::bigint * s.quantity, 0) + it.gross ELSE 0 END AS gross,
          CASE WHEN s.status NOT IN ('active', 'past_due') OR dc.coupon_id IS NULL THEN 0
               WHEN dc.percent_off_bp IS NOT NULL THEN coalesce(round(p.amount::numeric * s.quantity * dc.percent_off_bp / 10000)::bigint, 0) + it.percent_off
               ELSE least(dc.amount_off, coalesce(p.amount::bigint * s.quantity, 0) + it.covered) END AS discount,
          (CASE s.interval_unit WHEN 'week' THEN 52 WHEN 'day' THEN 365 ELSE 1 END) AS factor_numerator,
          ((CASE s.interval_unit WHEN 'month' THEN 1 ELSE 12 END) * s.interval_count) AS factor_denominator
        FROM subscriptions s
        -- One recurring price per subscription: its own, else the plan's newest active one in its
        -- currency. Metered prices bill usage, not a recurring fee; a plan with a fixed and a
        -- metered price (or an archived and a new price) must not count a subscription twice.
        LEFT JOIN LATERAL (
          SELECT pr.amount FROM prices pr
          WHERE pr.tenant_id = s.tenant_id AND pr.plan_id = s.plan_id AND pr.currency = s.currency AND pr.metric_code IS NULL
          ORDER BY (pr.id = s.price_id) DESC NULLS LAST, pr.active DESC, pr.created_at DESC
          LIMIT 1
        ) p ON true
        -- The subscription's coupon still in force (the first one applied, if several).
        LEFT JOIN LATERAL (
          SELECT c.id AS coupon_id, c.percent_off_bp, c.amount_off, c.plan_ids FROM discounts d
          JOIN coupons c ON c.tenant_id = d.tenant_id AND c.id = d.coupon_id
          WHERE d.tenant_id = s.tenant_id AND d.subscription_id = s.id AND d.ended_at IS NULL AND d.starts_at <= ${now}
            AND (d.ends_at IS NULL OR d.ends_at > ${now}) AND c.duration <> 'once'
            AND (c.amount_off IS NULL OR c.currency = s.currency)
            AND (jsonb_array_length(c.plan_ids) = 0 OR c.plan_ids @> jsonb_build_array(s.plan_id::text))
          ORDER BY d.created_at, d.id
          LIMIT 1
        ) dc ON true
        -- The add-ons: their amount, what the coupon covers of it, and its percentage off line by line.
        LEFT JOIN LATERAL (
          SELECT coalesce(sum(ip.amount::bigint * si.quantity), 0)::bigint AS gross,
            coalesce(sum(ip.amount::bigint * si.quantity) FILTER (WHERE covered), 0)::bigint AS covered,
            coalesce(sum(round(ip.amount::numeric * si.quantity * dc.percent_off_bp / 10000)) FILTER (WHERE covered), 0)::bigint AS percent_off
          FROM subscription_items si
          JOIN prices ip ON ip.tenant_id = si.tenant_id AND ip.id = si.price_id
          CROSS JOIN LATERAL (
            SELECT dc.coupon_id IS NOT NULL AND (jsonb_array_length(dc.plan_ids) = 0 OR dc.plan_ids @> jsonb_build_array(si.plan_id::text)) AS covered
          ) cov
          WHERE si.tenant_id = s.tenant_id AND si.subscription_id = s.id
        ) it ON true
        WHERE s.tenant_id = ${tenantId}
      ) g`;
}

/** The MRR of one currency as the subscriptions are now (the open month reads this, not a snapshot). */
export async function liveMrr(tx: Tx, tenantId: string, currency: string, now: Date): Promise<{ mrr: number; subscriptions: number; customers: number }> {
  const { rows } = await sql<{ mrr: string; subscriptions: number; customers: number }>`
    WITH computed AS (${computedMrr(tenantId, now)})
    SELECT coalesce(sum(mrr), 0)::text AS mrr, (count(*) FILTER (WHERE mrr > 0))::int AS subscriptions,
      (count(DISTINCT customer_id) FILTER (WHERE mrr > 0))::int AS customers
    FROM computed WHERE currency = ${currency}`.execute(tx);
  const r = rows[0]!;
  return { mrr: Number(r.mrr), subscriptions: Number(r.subscriptions), customers: Number(r.customers) };
}

/** Each currency's MRR of one tenant as the subscriptions are now, every currency it has subscriptions in (zero included). */
export async function liveMrrByCurrency(tx: Tx, tenantId: string, now: Date): Promise<{ currency: string; mrr: number }[]> {
  const { rows } = await sql<{ currency: string; mrr: string }>`
    WITH computed AS (${computedMrr(tenantId, now)})
    SELECT currency, coalesce(sum(mrr), 0)::text AS mrr FROM computed GROUP BY currency ORDER BY currency`.execute(tx);
  return rows.map((r) => ({ currency: r.currency, mrr: Number(r.mrr) }));
}

/**
 * Today's snapshot of one tenant: recomputes every subscription's MRR, records today's movements
 * against the state at the end of yesterday, and refreshes today's totals. Past days are never
 * touched. Every currency the tenant ever had MRR in gets a row, zero included, so "the last
 * snapshot on or before a day" is right per currency. `mrr_current.prior_*` keep yesterday's end state so a second run today replaces today's
 * movement instead of stacking another on it.
 */
export async function takeMrrSnapshot(tx: Tx, tenantId: string, day: string, now: Date): Promise<{ subscriptions: number; movements: number }> {
  await sql`DELETE FROM mrr_movements WHERE tenant_id = ${tenantId} AND effective_date = ${day}::date`.execute(tx);
  const { rows } = await sql<{ subscriptions: number; movements: number }>`
    WITH computed AS (${computedMrr(tenantId, now)}),
    base AS (
      SELECT c.subscription_id, c.customer_id, c.currency, c.mrr AS current_mrr, m.mrr AS last_mrr, m.as_of,
        coalesce(CASE WHEN m.as_of = ${day}::date THEN m.prior_mrr ELSE m.mrr END, 0) AS base_mrr,
        coalesce(CASE WHEN m.as_of = ${day}::date THEN m.prior_ever_positive ELSE m.ever_positive END, false) AS base_ever
      FROM computed c
      LEFT JOIN mrr_current m ON m.tenant_id = ${tenantId} AND m.subscription_id = c.subscription_id
      WHERE c.mrr > 0 OR m.subscription_id IS NOT NULL
    ),
    moved AS (
      INSERT INTO mrr_movements (tenant_id, subscription_id, customer_id, currency, effective_date, kind, previous_mrr, mrr, created_at)
      SELECT ${tenantId}, subscription_id, customer_id, currency, ${day}::date,
        CASE WHEN base_mrr = 0 THEN (CASE WHEN base_ever THEN 'reactivated' ELSE 'new' END)
             WHEN current_mrr = 0 THEN 'churned'
             WHEN current_mrr > base_mrr THEN 'expansion'
             ELSE 'contraction' END,
        base_mrr, current_mrr, ${now}
      FROM base WHERE base_mrr <> current_mrr
      RETURNING 1
    ),
    kept AS (
      INSERT INTO mrr_current (tenant_id, subscription_id, customer_id, currency, mrr, ever_positive, as_of, prior_mrr, prior_ever_positive)
      SELECT ${tenantId}, subscription_id, customer_id, currency, current_mrr, base_ever OR current_mrr > 0, ${day}::date, base_mrr, base_ever
      FROM base WHERE last_mrr IS DISTINCT FROM current_mrr
      ON CONFLICT (tenant_id, subscription_id) DO UPDATE SET
        customer_id = EXCLUDED.customer_id, currency = EXCLUDED.currency, mrr = EXCLUDED.mrr,
        ever_positive = EXCLUDED.ever_positive, as_of = EXCLUDED.as_of,
        prior_mrr = EXCLUDED.prior_mrr, prior_ever_positive = EXCLUDED.prior_ever_positive
      RETURNING 1
    )
    SELECT (SELECT count(*) FROM base)::int AS subscriptions, (SELECT count(*) FROM moved)::int AS movements`.execute(tx);
  await sql`DELETE FROM mrr_daily WHERE tenant_id = ${tenantId} AND snapshot_date = ${day}::date`.execute(tx);
  await sql`
    INSERT INTO mrr_daily (tenant_id, snapshot_date, currency, mrr, subscriptions, customers, taken_at)
    SELECT ${tenantId}, ${day}::date, currency, sum(mrr), count(*) FILTER (WHERE mrr > 0), count(DISTINCT customer_id) FILTER (WHERE mrr > 0), ${now}
    FROM mrr_current WHERE tenant_id = ${tenantId}
    GROUP BY currency`.execute(tx);
  return rows[0]!;
}

export type DailyRow = { snapshot_date: string; mrr: number; subscriptions: number; customers: number };

/** The last snapshot of each month in [from, toExclusive), and the last one before `from` (carried in). */
export async function monthEndSnapshots(
  tx: Tx,
  tenantId: string,
  currency: string,
  from: string,
  toExclusive: string,
): Promise<{ before: DailyRow | undefined; months: (DailyRow & { month: string })[] }> {
  const [before, months] = await Promise.all([
    sql<DailyRow>`
      SELECT snapshot_date::text AS snapshot_date, mrr, subscriptions, customers FROM mrr_daily
      WHERE tenant_id = ${tenantId} AND currency = ${currency} AND snapshot_date < ${from}::date
      ORDER BY snapshot_date DESC LIMIT 1`.execute(tx),
    sql<DailyRow & { month: string }>`
      SELECT DISTINCT ON (date_trunc('month', snapshot_date)) to_char(snapshot_date, 'YYYY-MM') AS month,
        snapshot_date::text AS snapshot_date, mrr, subscriptions, customers
      FROM mrr_daily
      WHERE tenant_id = ${tenantId} AND currency = ${currency} AND snapshot_date >= ${from}::date AND snapshot_date < ${toExclusive}::date
      ORDER BY date_trunc('month', snapshot_date), snapshot_date DESC`.execute(tx),
  ]);
  return { before: before.rows[0], months: months.rows };
}

/**
 * The MRR just before `before`: the last day total before it. Movements exist only on snapshot
 * days and each day's total is the sum of every movement up to it, so this equals Σ of every
 * movement's change before `before` — read from one row instead of the whole history.
 */
export async function mrrBefore(tx: Tx, tenantId: string, currency: string, before: string): Promise<number> {
  const { rows } = await sql<{ mrr: number }>`
    SELECT mrr FROM mrr_daily WHERE tenant_id = ${tenantId} AND currency = ${currency} AND snapshot_date < ${before}::date
    ORDER BY snapshot_date DESC LIMIT 1`.execute(tx);
  return rows[0]?.mrr ?? 0;
}

export type MovementTotals = { month: string; kind: string; change: number; count: number };

export async function movementTotalsByMonth(tx: Tx, tenantId: string, currency: string, from: string, toExclusive: string): Promise<MovementTotals[]> {
  const { rows } = await sql<MovementTotals>`
    SELECT to_char(date_trunc('month', effective_date), 'YYYY-MM') AS month, kind,
      sum(mrr - previous_mrr)::bigint AS change, count(*)::int AS count
    FROM mrr_movements
    WHERE tenant_id = ${tenantId} AND currency = ${currency} AND effective_date >= ${from}::date AND effective_date < ${toExclusive}::date
    GROUP BY 1, 2`.execute(tx);
  return rows.map((r) => ({ ...r, change: Number(r.change) }));
}

export type MovementRow = {
  id: string;
  subscription_id: string;
  customer_id: string;
  effective_date: string;
  kind: string;
  previous_mrr: number;
  mrr: number;
};

/** The movements of one kind in [from, toExclusive), oldest first, through paginate (decision 0035). */
export async function movementsOfBucket(
  tx: Tx,
  tenantId: string,
  currency: string,
  kind: string,
  from: string,
  toExclusive: string,
  page: Page,
): Promise<ListResult<MovementRow>> {
  const q = tx
    .selectFrom('mrr_movements')
    .where('tenant_id', '=', tenantId)
    .where('currency', '=', currency)
    .where('kind', '=', kind as MrrMovementKind)
    .where(sql<boolean>`effective_date >= ${from}::date AND effective_date < ${toExclusive}::date`);
  return paginate<MovementRow>(tx, q, {
    tenantId,
    table: 'mrr_movements',
    page,
    orderBy: 'effective_date',
    ascending: true,
    columns: ['id', 'subscription_id', 'customer_id', 'kind', 'previous_mrr', 'mrr'],
    select: (query) => query.select(sql<string>`mrr_movements.effective_date::text`.as('effective_date')),
  });
}

/**
 * Per month in [from, toExclusive): customers with MRR at the start, and how many of them had none
 * at the end (logo churn). A customer's MRR at an instant is the sum of their movements before it.
 */
export async function customerChurnByMonth(
  tx: Tx,
  tenantId: string,
  currency: string,
  from: string,
  toExclusive: string,
): Promise<{ month: string; customers_start: number; customers_churned: number }[]> {
  const { rows } = await sql<{ month: string; customers_start: number; customers_churned: number }>`
    WITH months AS (
      SELECT m::date AS start, (m + interval '1 month')::date AS stop
      FROM generate_series(${from}::date, (${toExclusive}::date - interval '1 day'), interval '1 month') AS m
    ),
    per_customer AS (
      SELECT months.start, mv.customer_id,
        sum(mv.mrr - mv.previous_mrr) FILTER (WHERE mv.effective_date < months.start) AS at_start,
        sum(mv.mrr - mv.previous_mrr) AS at_end
      FROM months JOIN mrr_movements mv
        ON mv.tenant_id = ${tenantId} AND mv.currency = ${currency} AND mv.effective_date < months.stop
      GROUP BY months.start, mv.customer_id
    )
    SELECT to_char(months.start, 'YYYY-MM') AS month,
      count(pc.customer_id) FILTER (WHERE pc.at_start > 0)::int AS customers_start,
      count(pc.customer_id) FILTER (WHERE pc.at_start > 0 AND pc.at_end = 0)::int AS customers_churned
    FROM months LEFT JOIN per_customer pc ON pc.start = months.start
    GROUP BY months.start ORDER BY months.start`.execute(tx);
  return rows;
}

/**
 * Cohorts by the month a customer first had MRR; for each later month up to `toExclusive`, the
 * customers still paying and their MRR at that month's end.
 */
export async function cohortRetention(
  tx: Tx,
  tenantId: string,
  currency: string,
  from: string,
  toExclusive: string,
): Promise<{ cohort: string; month: string; customers: number; mrr: number }[]> {
  const { rows } = await sql<{ cohort: string; month: string; customers: number; mrr: string | number }>`
    WITH firsts AS (
      SELECT customer_id, date_trunc('month', min(effective_date))::date AS cohort
      FROM mrr_movements WHERE tenant_id = ${tenantId} AND currency = ${currency} AND mrr > previous_mrr AND previous_mrr = 0
      GROUP BY customer_id
    ),
    cohort_customers AS (
      SELECT customer_id, cohort FROM firsts WHERE cohort >= ${from}::date AND cohort < ${toExclusive}::date
    ),
    months AS (
      SELECT m::date AS start, (m + interval '1 month')::date AS stop
      FROM generate_series(${from}::date, (${toExclusive}::date - interval '1 day'), interval '1 month') AS m
    ),
    at_month_end AS (
      SELECT cc.cohort, months.start, cc.customer_id, sum(mv.mrr - mv.previous_mrr) AS mrr
      FROM cohort_customers cc
      JOIN months ON months.start >= cc.cohort
      JOIN mrr_movements mv ON mv.tenant_id = ${tenantId} AND mv.currency = ${currency} AND mv.customer_id = cc.customer_id AND mv.effective_date < months.stop
      GROUP BY cc.cohort, months.start, cc.customer_id
    )
    SELECT to_char(cohort, 'YYYY-MM') AS cohort, to_char(start, 'YYYY-MM') AS month,
      count(*) FILTER (WHERE mrr > 0)::int AS customers, coalesce(sum(mrr) FILTER (WHERE mrr > 0), 0)::bigint AS mrr
    FROM at_month_end GROUP BY cohort, start ORDER BY cohort, start`.execute(tx);
  return rows.map((r) => ({ ...r, mrr: Number(r.mrr) }));
}

export type AgingRow = { id: string; number: string | null; customer_id: string; due_date: Date | null; amount_due: number; days_past_due: number };

const AGING_BUCKET_SQL = sql`CASE WHEN days_past_due <= 0 THEN 'current' WHEN days_past_due <= 30 THEN '1_30' WHEN days_past_due <= 60 THEN '31_60' WHEN days_past_due <= 90 THEN '61_90' ELSE '90_plus' END`;

/** Amounts still due on open invoices of one currency, by days past due at `today`. */
export async function agingBuckets(tx: Tx, tenantId: string, currency: string, today: string): Promise<{ bucket: string; amount: number; count: number }[]> {
  const { rows } = await sql<{ bucket: string; amount: string | number; count: number }>`
    WITH due AS (
      SELECT amount_due, coalesce(${today}::date - (due_date AT TIME ZONE 'UTC')::date, 0) AS days_past_due
      FROM invoices WHERE tenant_id = ${tenantId} AND status = 'open' AND currency = ${currency} AND amount_due > 0
    )
    SELECT ${AGING_BUCKET_SQL} AS bucket, sum(amount_due)::bigint AS amount, count(*)::int AS count FROM due GROUP BY 1`.execute(tx);
  return rows.map((r) => ({ ...r, amount: Number(r.amount) }));
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** The due_date range of an aging bucket at `today` (days past due = today − the due day, in UTC). */
function bucketRange(bucket: string, today: string): { onOrAfter?: Date; before?: Date; undated: boolean } {
  const midnight = Date.parse(`${today}T00:00:00Z`);
  const daysAgo = (n: number) => new Date(midnight - n * DAY_MS);
  switch (bucket) {
    case 'current':
      return { onOrAfter: daysAgo(0), undated: true };
    case '1_30':
      return { onOrAfter: daysAgo(30), before: daysAgo(0), undated: false };
    case '31_60':
      return { onOrAfter: daysAgo(60), before: daysAgo(30), undated: false };
    case '61_90':
      return { onOrAfter: daysAgo(90), before: daysAgo(60), undated: false };
    default:
      return { before: daysAgo(90), undated: false };
  }
}

/**
 * The open invoices of one aging bucket, most overdue first (due_date, then id), through paginate
 * (decision 0035). A bucket is a due_date range, so the open-invoice due-date index serves it.
 */
export async function agingInvoices(tx: Tx, tenantId: string, currency: string, today: string, bucket: string, page: Page): Promise<ListResult<AgingRow>> {
  const range = bucketRange(bucket, today);
  let q = tx.selectFrom('invoices').where('tenant_id', '=', tenantId).where('status', '=', 'open').where('currency', '=', currency).where('amount_due', '>', 0);
  if (range.onOrAfter && range.undated) q = q.where((eb) => eb.or([eb('due_date', '>=', range.onOrAfter!), eb('due_date', 'is', null)]));
  else if (range.onOrAfter) q = q.where('due_date', '>=', range.onOrAfter);
  if (range.before) q = q.where('due_date', '<', range.before);
  return paginate<AgingRow>(tx, q, {
    tenantId,
    table: 'invoices',
    page,
    orderBy: 'due_date',
    ascending: true,
    columns: ['id', 'number', 'customer_id', 'due_date', 'amount_due'],
    select: (query) => query.select(sql<number>`coalesce(${today}::date - (invoices.due_date AT TIME ZONE 'UTC')::date, 0)`.as('days_past_due')),
  });
}

/** The tenant's MRR per currency on the last snapshot on or before `day` (consolidation reads this). */
export async function mrrOnDay(
  tx: Tx,
  tenantIds: string[],
  day: string,
): Promise<{ tenant_id: string; currency: string; mrr: number; snapshot_date: string }[]> {
  if (tenantIds.length === 0) return [];
  const { rows } = await sql<{ tenant_id: string; currency: string; mrr: number; snapshot_date: string }>`
    SELECT DISTINCT ON (tenant_id, currency) tenant_id, currency, mrr, snapshot_date::text AS snapshot_date
    FROM mrr_daily WHERE tenant_id = ANY(${tenantIds}::uuid[]) AND snapshot_date <= ${day}::date
    ORDER BY tenant_id, currency, snapshot_date DESC`.execute(tx);
  return rows;
}
