import type { Ctx, ReadCtx } from '../../platform/context.js';
import { errors } from '../../platform/errors.js';
import { numberListsLiteral } from '../../platform/db/array-literal.js';
import { emitEvent } from '../../platform/events/events.js';
import { newId } from '../../platform/ids.js';
import { toIso } from '../../platform/time.js';
import { paidCreditBalances } from '../credits/index.js';
import { getCustomer } from '../customers/index.js';
import { invoicedSince } from '../invoices/index.js';
import { getSubscriptionRow, RUNNING_STATUSES, runningSubscriptionsOfCustomers } from '../subscriptions/index.js';
import { getTenant } from '../tenants/index.js';
import { aggregateUsage, billableQuantity, metricsByCodes, type EventInsert, type UsageWindow } from '../usage/index.js';
import {
  activeAlertsOf,
  archiveAlertRow,
  findAlert,
  insertAlert,
  insertTriggers,
  listAlertRows,
  liveTriggers,
  foldUsageAlerts,
  holdUsageQueue,
  lockUsageFold,
  queueUsageDeltas,
  type AlertRow,
  type StoredPairs,
} from './alerts.repository.js';
import type { CreateAlertBody } from './alerts.schemas.js';
import type { AlertType } from './alerts.tables.js';

export function toAlert(row: AlertRow) {
  return {
    id: row.id,
    customer_id: row.customer_id,
    subscription_id: row.subscription_id,
    type: row.type,
    metric_code: row.metric_code,
    currency: row.currency,
    threshold: row.threshold,
    action: row.action,
    recurring: row.recurring,
    status: row.status,
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}

export async function createAlert(ctx: Ctx, body: CreateAlertBody): Promise<AlertRow> {
  let customerId = body.customer_id;
  if (body.subscription_id) {
    const sub = await getSubscriptionRow(ctx, body.subscription_id);
    if (customerId && customerId !== sub.customer_id) throw errors.invalidField('customer_id', 'is not the subscription’s customer');
    customerId = sub.customer_id;
  }
  if (!customerId) throw errors.invalidField('customer_id', 'give customer_id or subscription_id');
  await getCustomer(ctx, customerId);
  if (body.type === 'usage_threshold') {
    if (!body.metric_code) throw errors.invalidField('metric_code', 'a usage_threshold alert needs the billable metric it watches');
    if ((await metricsByCodes(ctx.tx, ctx.tenantId, [body.metric_code])).length === 0)
      throw errors.invalidField('metric_code', `no billable metric has the code ${body.metric_code}`);
    if (body.currency) throw errors.invalidField('currency', 'a usage_threshold alert counts a quantity, not money');
  } else if (body.metric_code) throw errors.invalidField('metric_code', `a ${body.type} alert watches money, not a metric`);
  const currency = body.type === 'usage_threshold' ? null : (body.currency ?? (await getTenant(ctx)).base_currency);
  // Batches in flight commit first, and later ones see this alert and queue their deltas for it
  // (decision 0900): the fold that seeds its total measures every batch that queued nothing.
  if (body.type === 'usage_threshold') await holdUsageQueue(ctx.tx, ctx.tenantId);
  const row = await insertAlert(ctx.tx, {
    tenant_id: ctx.tenantId,
    id: newId(),
    customer_id: customerId,
    subscription_id: body.subscription_id ?? null,
    type: body.type,
    metric_code: body.metric_code ?? null,
    currency,
    threshold: body.threshold,
    action: body.action,
    recurring: body.recurring,
    status: 'active',
    created_at: ctx.now,
    updated_at: ctx.now,
  });
  // It may already be crossed.
  await evaluateAlerts(ctx, [customerId], [row.type]);
  return row;
}

export async function listAlerts(ctx: ReadCtx, customerId?: string): Promise<AlertRow[]> {
  return listAlertRows(ctx.tx, ctx.tenantId, customerId);
}

/** Archives an alert: it stops watching, and a block it put on the customer is lifted now (a change). */
export async function archiveAlert(ctx: Ctx, id: string): Promise<AlertRow> {
  const current = await findAlert(ctx.tx, ctx.tenantId, id);
  if (!current) throw errors.notFound('alert');
  const row = await archiveAlertRow(ctx.tx, ctx.tenantId, id, ctx.now);
  if (!row) throw errors.conflict('the alert is already archived', 'alert_archived');
  // A change of entitlements like its trigger: every process drops the customer's cached answer
  // on commit (decision 0420's notification), so a block it put is lifted now (decision 0570).
  await emitEvent(ctx, 'alert.archived', toAlert(row));
  return row;
}

const MONTH_START = (now: Date) => new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));

/** Each alert's current period start: its subscription's, else the customer's first running one's, else the UTC month; a one-off alert has one period. */
async function periodsOf(ctx: ReadCtx, alerts: AlertRow[]): Promise<Map<string, Date>> {
  const subs = await runningSubscriptionsOfCustomers(ctx.tx, ctx.tenantId, [...new Set(alerts.map((a) => a.customer_id))]);
  const byId = new Map(subs.map((s) => [s.id, s]));
  // The customer's first running subscription by id.
  const firstOf = new Map<string, (typeof subs)[number]>();
  for (const s of subs) {
    const first = firstOf.get(s.customer_id);
    if (!first || s.id < first.id) firstOf.set(s.customer_id, s);
  }
  const out = new Map<string, Date>();
  for (const a of alerts) {
    const sub = a.subscription_id ? byId.get(a.subscription_id) : firstOf.get(a.customer_id);
    out.set(a.id, a.recurring ? (sub?.current_period_start ?? MONTH_START(ctx.now)) : new Date(0));
  }
  return out;
}

/** Whether each alert is crossed now, with the value measured. */
async function measure(ctx: ReadCtx, alerts: AlertRow[], periods: Map<string, Date>): Promise<Map<string, { crossed: boolean; value: number }>> {
  const out = new Map<string, { crossed: boolean; value: number }>();
  const usage = alerts.filter((a) => a.type === 'usage_threshold');
  // One window per (customer, metric, period start): alerts watching the same quantity share it.
  const windowOf = (a: AlertRow) => `${a.customer_id}/${a.metric_code}/${(a.recurring ? periods.get(a.id)! : new Date(0)).getTime()}`;
  const windows = new Map<string, UsageWindow>();
  for (const a of usage) {
    const key = windowOf(a);
    if (!windows.has(key)) {
      const start = a.recurring ? periods.get(a.id)! : new Date(0);
      windows.set(key, { key, customer_id: a.customer_id, metric_code: a.metric_code!, start, end: new Date('9999-12-31T23:59:59Z') });
    }
  }
  const quantities = await aggregateUsage(ctx.tx, ctx.tenantId, [...windows.values()]);
  for (const a of usage) {
    const value = billableQuantity(quantities.get(windowOf(a))?.quantity ?? '0');
    out.set(a.id, { crossed: value >= a.threshold, value });
  }
  const spend = alerts.filter((a) => a.type === 'spend_threshold');
  const spent = await invoicedSince(
    ctx.tx,
    ctx.tenantId,
    spend.map((a) => ({ customerId: a.customer_id, currency: a.currency!, since: a.recurring ? periods.get(a.id)! : new Date(0) })),
  );
  spend.forEach((a, i) => out.set(a.id, { crossed: spent[i]! >= a.threshold, value: spent[i]! }));
  const credit = alerts.filter((a) => a.type === 'credit_balance_below');
  if (credit.length > 0) {
    const balances = await paidCreditBalances(ctx, [...new Set(credit.map((a) => a.customer_id))]);
    for (const a of credit) {
      const value = balances.get(`${a.customer_id}/${a.currency}`) ?? 0;
      out.set(a.id, { crossed: value < a.threshold, value });
    }
  }
  return out;
}

/**
 * Evaluates the customers' active alerts of these types in the caller's transaction (invoice and
 * grant changes: once per event batch; ingestion's usage alerts are folded by the worker, see
 * queueUsageAlertEvaluation). A crossed alert triggers once per period: the trigger row is
 * inserted or nothing happens, and only a new row emits `alert.triggered` (which also moves the
 * entitlement version, so a block shows at once).
 */
export async function evaluateAlerts(ctx: Ctx, customerIds: string[], types: readonly AlertType[]): Promise<number> {
  const alerts = await activeAlertsOf(ctx.tx, ctx.tenantId, customerIds, types);
  if (alerts.length === 0) return 0;
  return triggerCrossed(ctx, alerts, await periodsOf(ctx, alerts));
}

/** What an ingestion batch stored, for the running totals of the alerts watching it (decisions 0800, 0900). */
export type UsageBatch = { events: EventInsert[]; inserted: number };

/**
 * Queues an ingestion batch's stored events for the usage alerts watching them (DESIGN §23,
 * decision 0900): one row in the batch's transaction, no lock and no evaluation here. The worker
 * folds the queued rows into the alerts about once a second (foldPendingUsageAlerts), one
 * statement per tenant for every batch queued since.
 *
 * `batch` is what the batch stored: when every event in it was new (no duplicate, in the batch or
 * already stored), its events are the deltas, summed per pair; otherwise which ones were stored is
 * not known here, and the fold measures again the totals of the alerts its pairs move.
 */
export async function queueUsageAlertEvaluation(ctx: Ctx, batch: UsageBatch): Promise<void> {
  if (batch.inserted === 0) return;
  await queueUsageDeltas(ctx.tx, ctx.tenantId, storedPairs(batch), ctx.now);
}

/**
 * Folds one tenant's queued usage deltas into its usage alerts (decision 0900), in one transaction
 * that holds the tenant's fold (another worker folding it already: nothing happens, what it misses
 * waits for the next tick). Alerts already triggered in their current period are not measured
 * (once per period: nothing more can happen until the next one); a crossed one gets its trigger
 * row and emits `alert.triggered` (which also moves the entitlement version, so a block shows at
 * once). Answers how many triggered.
 */
export async function foldTenantUsageAlerts(ctx: Ctx): Promise<number> {
  if (!(await lockUsageFold(ctx.tx, ctx.tenantId))) return 0;
  // The statement runs after the lock: its snapshot sees what the previous fold committed.
  const fresh = await foldUsageAlerts(ctx.tx, ctx.tenantId, RUNNING_STATUSES, MONTH_START(ctx.now), ctx.now);
  for (const a of fresh) {
    await emitEvent(ctx, 'alert.triggered', { ...toAlert(a), value: a.value, period_start: toIso(a.period_start) });
  }
  return fresh.length;
}

/** The batch's events per (customer, metric id) pair: their values and earliest instant (see StoredPairs). */
function storedPairs(batch: UsageBatch): StoredPairs {
  const byPair = new Map<string, { customer: string; metric: string; values: (number | null)[]; earliest: number }>();
  for (const e of batch.events) {
    const key = `${e.customer_id}/${e.metric_id}`;
    const pair = byPair.get(key);
    if (pair) {
      pair.values.push(e.value);
      if (e.at < pair.earliest) pair.earliest = e.at;
    } else byPair.set(key, { customer: e.customer_id, metric: e.metric_id, values: [e.value], earliest: e.at });
  }
  const pairs = [...byPair.values()];
  return {
    customers: pairs.map((p) => p.customer),
    metrics: pairs.map((p) => p.metric),
    values: numberListsLiteral(pairs.map((p) => p.values)),
    earliest: pairs.map((p) => new Date(p.earliest).toISOString()),
    exact: batch.inserted === batch.events.length,
  };
}

/**
 * Measures the alerts and triggers the crossed ones once per period: their trigger rows are
 * inserted in one statement (or nothing happens for a row already there), and only a new row
 * emits `alert.triggered` (which also moves the entitlement version, so a block shows at once).
 */
async function triggerCrossed(ctx: Ctx, alerts: AlertRow[], periods: Map<string, Date>): Promise<number> {
  const measured = await measure(ctx, alerts, periods);
  const crossed = alerts.filter((a) => measured.get(a.id)!.crossed);
  const fresh = await insertTriggers(
    ctx.tx,
    ctx.tenantId,
    crossed.map((a) => ({ alertId: a.id, periodStart: periods.get(a.id)!, value: measured.get(a.id)!.value })),
    ctx.now,
  );
  for (const a of crossed) {
    if (!fresh.has(a.id)) continue;
    await emitEvent(ctx, 'alert.triggered', { ...toAlert(a), value: measured.get(a.id)!.value, period_start: toIso(periods.get(a.id)!) });
  }
  return fresh.size;
}

/**
 * The block alert that blocks the customer now, or null: triggered in its current period, not
 * archived since — and for credit_balance_below, still below (a top-up lifts it).
 */
export async function blockingAlert(ctx: ReadCtx, customerId: string): Promise<string | null> {
  const alerts = (await activeAlertsOf(ctx.tx, ctx.tenantId, [customerId], ['usage_threshold', 'spend_threshold', 'credit_balance_below'])).filter(
    (a) => a.action === 'block',
  );
  if (alerts.length === 0) return null;
  const periods = await periodsOf(ctx, alerts);
  const live = await liveTriggers(
    ctx.tx,
    ctx.tenantId,
    alerts.map((a) => ({ alertId: a.id, periodStart: periods.get(a.id)! })),
  );
  const candidates = alerts.filter((a) => live.has(a.id));
  if (candidates.length === 0) return null;
  const credit = candidates.filter((a) => a.type === 'credit_balance_below');
  const measured = credit.length > 0 ? await measure(ctx, credit, periods) : new Map<string, { crossed: boolean }>();
  return candidates.find((a) => a.type !== 'credit_balance_below' || measured.get(a.id)?.crossed)?.id ?? null;
}
