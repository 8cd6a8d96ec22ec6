import type { Ctx, ReadCtx } from '../../platform/context.js';
import type { Kysely } from 'kysely';
import type { DB } from '../../platform/db/schema.js';
import { isKnownCurrency } from '../../platform/currencies.js';
import { errors } from '../../platform/errors.js';
import { toIsoOrNull } from '../../platform/time.js';
import type { Page } from '../../platform/http/envelope.js';
import { getTenant } from '../tenants/index.js';
import {
  liveMrr,
  agingBuckets,
  agingInvoices,
  cohortRetention,
  customerChurnByMonth,
  monthEndSnapshots,
  movementsOfBucket,
  movementTotalsByMonth,
  mrrBefore,
  takeMrrSnapshot,
  tenantsWithSubscriptions,
} from './analytics.repository.js';
import type { MrrMovementKind as MovementKind } from './analytics.tables.js';
import type { Mode } from '../../platform/auth/tenant-mode.js';

/** The UTC calendar day of an instant, `YYYY-MM-DD`: the unit of snapshots. */
export function dayOf(instant: Date): string {
  return instant.toISOString().slice(0, 10);
}

const MONTH = /^(\d{4})-(\d{2})(?:-(\d{2}))?$/;
const MAX_RANGE_MONTHS = 120;

function monthIndex(value: string, field: string): number {
  const m = MONTH.exec(value);
  const year = m ? Number(m[1]) : NaN;
  const month = m ? Number(m[2]) : NaN;
  if (!m || month < 1 || month > 12 || year < 1970 || year > 9999) throw errors.invalidField(field, 'must be a month YYYY-MM (or a date YYYY-MM-DD)');
  if (m[3] !== undefined) {
    const day = Number(m[3]);
    const date = new Date(Date.UTC(year, month - 1, day));
    if (date.getUTCMonth() !== month - 1 || day < 1) throw errors.invalidField(field, 'is not a calendar date');
  }
  return year * 12 + (month - 1);
}

function monthStart(index: number): string {
  const year = Math.floor(index / 12);
  const month = (index % 12) + 1;
  return `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}-01`;
}

export type MonthRange = { from: string; toExclusive: string; months: string[] };

/** `from`/`to` as months, both inclusive; default the twelve months up to the current one. */
export function monthRange(query: { from?: string; to?: string }, now: Date): MonthRange {
  const current = now.getUTCFullYear() * 12 + now.getUTCMonth();
  const to = query.to ? monthIndex(query.to, 'to') : current;
  const from = query.from ? monthIndex(query.from, 'from') : to - 11;
  if (from > to) throw errors.invalidField('from', 'must not be after to');
  if (to - from + 1 > MAX_RANGE_MONTHS) throw errors.invalidField('to', `the range may span at most ${MAX_RANGE_MONTHS} months (10 years)`);
  const months: string[] = [];
  for (let i = from; i <= to; i += 1) months.push(monthStart(i).slice(0, 7));
  return { from: monthStart(from), toExclusive: monthStart(to + 1), months };
}

export function checkCurrency(currency: string, field = 'currency'): string {
  const code = currency.toUpperCase();
  if (!isKnownCurrency(code)) throw errors.invalidField(field, `${currency} is not an ISO 4217 currency`);
  return code;
}

async function currencyOf(ctx: ReadCtx, currency: string | undefined): Promise<string> {
  return currency ? checkCurrency(currency) : (await getTenant(ctx)).base_currency;
}

export type SnapshotTotals = { tenants: number; subscriptions: number; movements: number; failed: { tenantId: string; error: unknown }[] };

/**
 * The snapshot job: today's MRR snapshot of every tenant, one transaction each. One tenant's
 * failure is reported and skipped, never a reason to leave the others without their snapshot.
 */
export async function snapshotAllTenants(db: Kysely<DB>, mode: Mode | null, now: Date): Promise<SnapshotTotals> {
  const day = dayOf(now);
  const totals: SnapshotTotals = { tenants: 0, subscriptions: 0, movements: 0, failed: [] };
  for (const tenantId of await tenantsWithSubscriptions(db, mode)) {
    try {
      const result = await db.transaction().execute((tx) => takeMrrSnapshot(tx, tenantId, day, now));
      totals.tenants += 1;
      totals.subscriptions += result.subscriptions;
      totals.movements += result.movements;
    } catch (error) {
      totals.failed.push({ tenantId, error });
    }
  }
  return totals;
}

/** Today's snapshot of the calling tenant, on demand (the same work as the job, for this tenant). */
export async function snapshotTenant(ctx: Ctx): Promise<{ snapshot_date: string; subscriptions: number; movements: number }> {
  const day = dayOf(ctx.now);
  const result = await takeMrrSnapshot(ctx.tx, ctx.tenantId, day, ctx.now);
  return { snapshot_date: day, ...result };
}

export type MrrMonth = { month: string; mrr: number; subscriptions: number; customers: number; snapshot_date: string | null };

/** MRR at the end of each month: its last snapshot, or the one before carried forward. */
export async function getMrr(ctx: ReadCtx, query: { currency?: string; from?: string; to?: string }) {
  const currency = await currencyOf(ctx, query.currency);
  const range = monthRange(query, ctx.now);
  const { before, months } = await monthEndSnapshots(ctx.tx, ctx.tenantId, currency, range.from, range.toExclusive);
  const byMonth = new Map(months.map((m) => [m.month, m]));
  let carried: MrrMonth = before
    ? { month: '', mrr: before.mrr, subscriptions: before.subscriptions, customers: before.customers, snapshot_date: before.snapshot_date }
    : { month: '', mrr: 0, subscriptions: 0, customers: 0, snapshot_date: null };
  const current = dayOf(ctx.now).slice(0, 7);
  // The open month is computed on read from the subscriptions as they are now (decision 0451);
  // months before it answer their last snapshot.
  const live = range.months.includes(current) ? await liveMrr(ctx.tx, ctx.tenantId, currency, ctx.now) : null;
  const out: MrrMonth[] = range.months.map((month) => {
    if (month === current && live) return { month, ...live, snapshot_date: null };
    const row = byMonth.get(month);
    if (row) carried = { month, mrr: row.mrr, subscriptions: row.subscriptions, customers: row.customers, snapshot_date: row.snapshot_date };
    return { ...carried, month };
  });
  return { currency, from: range.months[0]!, to: range.months.at(-1)!, months: out };
}

const KINDS: MovementKind[] = ['new', 'expansion', 'contraction', 'churned', 'reactivated'];

/**
 * The MRR waterfall: per month, the MRR it started with, each kind of movement, and the MRR it
 * ended with. Built from the snapshot job's movements, so starting + movements = ending exactly.
 * Contraction and churn are reported as positive amounts that were lost.
 */
export async function getWaterfall(ctx: ReadCtx, query: { currency?: string; from?: string; to?: string }) {
  const currency = await currencyOf(ctx, query.currency);
  const range = monthRange(query, ctx.now);
  const [starting, totals] = await Promise.all([
    mrrBefore(ctx.tx, ctx.tenantId, currency, range.from),
    movementTotalsByMonth(ctx.tx, ctx.tenantId, currency, range.from, range.toExclusive),
  ]);
  let running = starting;
  const months = range.months.map((month) => {
    const of = (kind: MovementKind) => totals.find((t) => t.month === month && t.kind === kind);
    const amounts = Object.fromEntries(KINDS.map((k) => [k, Math.abs(of(k)?.change ?? 0)])) as Record<MovementKind, number>;
    const counts = Object.fromEntries(KINDS.map((k) => [k, of(k)?.count ?? 0])) as Record<MovementKind, number>;
    const net = amounts.new + amounts.expansion + amounts.reactivated - amounts.contraction - amounts.churned;
    const row = { month, starting_mrr: running, ...amounts, net_change: net, ending_mrr: running + net, counts };
    running += net;
    return row;
  });
  return { currency, from: range.months[0]!, to: range.months.at(-1)!, months };
}

/** The subscriptions behind one bucket of one month (`?bucket=churned&month=2026-10`). */
export async function listWaterfallBucket(ctx: ReadCtx, query: { currency?: string; bucket: MovementKind; month: string }, page: Page) {
  const currency = await currencyOf(ctx, query.currency);
  const range = monthRange({ from: query.month, to: query.month }, ctx.now);
  const { rows, total } = await movementsOfBucket(ctx.tx, ctx.tenantId, currency, query.bucket, range.from, range.toExclusive, page);
  return {
    rows: rows.map((r) => ({ ...r, currency, month: range.months[0]!, change: r.mrr - r.previous_mrr })),
    total,
  };
}

function rate(numerator: number, denominator: number): number | null {
  return denominator === 0 ? null : Math.round((numerator / denominator) * 10_000) / 10_000;
}

/**
 * Logo and revenue churn per month, and net revenue retention (docs/decisions/0075):
 * logo churn = customers paying at the start and not at the end ÷ customers paying at the start;
 * gross revenue churn = (churned + contraction) ÷ starting MRR;
 * net revenue retention = (starting + expansion − contraction − churned) ÷ starting MRR.
 * Rates are fractions rounded to 4 places (null when nothing was there to churn).
 */
export async function getChurn(ctx: ReadCtx, query: { currency?: string; from?: string; to?: string }) {
  const waterfall = await getWaterfall(ctx, query);
  const range = monthRange(query, ctx.now);
  const customers = await customerChurnByMonth(ctx.tx, ctx.tenantId, waterfall.currency, range.from, range.toExclusive);
  const months = waterfall.months.map((w) => {
    const c = customers.find((x) => x.month === w.month) ?? { customers_start: 0, customers_churned: 0 };
    return {
      month: w.month,
      customers_start: c.customers_start,
      customers_churned: c.customers_churned,
      logo_churn_rate: rate(c.customers_churned, c.customers_start),
      starting_mrr: w.starting_mrr,
      churned_mrr: w.churned,
      contraction_mrr: w.contraction,
      expansion_mrr: w.expansion,
      gross_revenue_churn_rate: rate(w.churned + w.contraction, w.starting_mrr),
      net_revenue_retention: rate(w.starting_mrr + w.expansion - w.contraction - w.churned, w.starting_mrr),
    };
  });
  return { currency: waterfall.currency, from: waterfall.from, to: waterfall.to, months };
}

/** Cohorts by the month a customer first paid; per later month, who still pays and how much. */
export async function getCohorts(ctx: ReadCtx, query: { currency?: string; from?: string; to?: string }) {
  const currency = await currencyOf(ctx, query.currency);
  const range = monthRange(query, ctx.now);
  const cells = await cohortRetention(ctx.tx, ctx.tenantId, currency, range.from, range.toExclusive);
  const cohorts = new Map<
    string,
    { cohort: string; customers: number; mrr: number; months: { month: string; customers: number; mrr: number; customer_retention: number | null }[] }
  >();
  for (const cell of cells) {
    let cohort = cohorts.get(cell.cohort);
    if (!cohort) {
      cohort = { cohort: cell.cohort, customers: cell.customers, mrr: cell.mrr, months: [] };
      cohorts.set(cell.cohort, cohort);
    }
    cohort.months.push({ month: cell.month, customers: cell.customers, mrr: cell.mrr, customer_retention: rate(cell.customers, cohort.customers) });
  }
  return { currency, from: range.months[0]!, to: range.months.at(-1)!, cohorts: [...cohorts.values()] };
}

export const AGING_BUCKETS = ['current', '1_30', '31_60', '61_90', '90_plus'] as const;
export type AgingBucket = (typeof AGING_BUCKETS)[number];

/** Amounts still due on open invoices, by days past their due date (DESIGN §14). */
export async function getInvoiceAging(ctx: ReadCtx, query: { currency?: string }) {
  const currency = await currencyOf(ctx, query.currency);
  const today = dayOf(ctx.now);
  const rows = await agingBuckets(ctx.tx, ctx.tenantId, currency, today);
  const buckets = AGING_BUCKETS.map((bucket) => {
    const row = rows.find((r) => r.bucket === bucket);
    return { bucket, amount: row?.amount ?? 0, count: row?.count ?? 0 };
  });
  return { currency, as_of: today, total: buckets.reduce((sum, b) => sum + b.amount, 0), buckets };
}

export async function listAgingBucket(ctx: ReadCtx, query: { currency?: string; bucket: AgingBucket }, page: Page) {
  const currency = await currencyOf(ctx, query.currency);
  const { rows, total } = await agingInvoices(ctx.tx, ctx.tenantId, currency, dayOf(ctx.now), query.bucket, page);
  return {
    rows: rows.map((r) => ({
      invoice_id: r.id,
      number: r.number,
      customer_id: r.customer_id,
      currency,
      due_date: toIsoOrNull(r.due_date),
      days_past_due: Math.max(0, r.days_past_due),
      amount_due: r.amount_due,
      bucket: query.bucket,
    })),
    total,
  };
}

/**
 * Reads and writes of this module's own tables that flows and other modules call; the repository
 * itself is private to the module (index.ts exports operations and types only).
 */
export { liveMrrByCurrency, mrrOnDay } from './analytics.repository.js';
