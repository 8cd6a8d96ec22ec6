import type { Ctx } from '../../platform/context.js';
import { evaluateUsageAlerts } from '../../modules/alerts/index.js';
import { customerRefs } from '../../modules/customers/index.js';
import { getInvoiceRow } from '../../modules/invoices/index.js';
import { pricesOfPlans } from '../../modules/plans/index.js';
import { runningSubscriptionsOfCustomers } from '../../modules/subscriptions/index.js';
import {
  eventRow,
  insertEvents,
  metricsByCodes,
  parseUsageEvent,
  type EventInsert,
  type EventRefusal,
  type MetricRow,
  type UsageEventBody,
  type UsageIngestResult,
} from '../../modules/usage/index.js';

export type RecordedUsage = UsageIngestResult & { refusals: (EventRefusal & { index: number })[] };

const issueText = (issues: { path: PropertyKey[]; message: string }[]) =>
  issues.map((i) => `${i.path.map(String).join('.') || 'event'}: ${i.message}`).join('; ');

/**
 * Records a batch of usage events (DESIGN §13), set-based: one query resolves the customers, one
 * the metrics, one the customers' running subscriptions (and one their metered prices), then ONE
 * INSERT … SELECT FROM unnest(arrays) stores every valid event (decision 0430). An invalid event is refused
 * with its index and the others are stored; a transaction_id already recorded is a counted
 * duplicate. An event dated before the current period of a subscription that meters its metric is
 * refused, unless that subscription's latest invoice is still a draft (it can still change).
 */
export async function recordUsageEvents(ctx: Ctx, raw: unknown[]): Promise<RecordedUsage> {
  const refusals: RecordedUsage['refusals'] = [];
  const parsed: { index: number; event: UsageEventBody }[] = [];
  raw.forEach((item, index) => {
    const result = parseUsageEvent(item);
    if (result.success) parsed.push({ index, event: result.data });
    else refusals.push({ index, status: 400, error: issueText(result.error.issues) });
  });

  const ids = [...new Set(parsed.flatMap(({ event }) => (event.customer_id ? [event.customer_id] : [])))];
  const externalIds = [...new Set(parsed.flatMap(({ event }) => (!event.customer_id && event.external_customer_id ? [event.external_customer_id] : [])))];
  const codes = [...new Set(parsed.map(({ event }) => event.metric_code))];
  const [customers, metrics] = [await customerRefs(ctx.tx, ctx.tenantId, ids, externalIds), await metricsByCodes(ctx.tx, ctx.tenantId, codes)];
  const byId = new Set(customers.map((c) => c.id));
  const byExternal = new Map<string, string | null>();
  for (const c of customers) {
    if (c.external_id === null) continue;
    // Two customers sharing an external id: the reference is ambiguous (null), not one of them.
    byExternal.set(c.external_id, byExternal.has(c.external_id) ? null : c.id);
  }
  const metricByCode = new Map<string, MetricRow>(metrics.map((m) => [m.code, m]));

  const rows: { index: number; row: EventInsert; metricCode: string }[] = [];
  for (const { index, event } of parsed) {
    let customerId: string | undefined;
    if (event.customer_id) customerId = byId.has(event.customer_id) ? event.customer_id : undefined;
    else {
      const found = byExternal.get(event.external_customer_id!);
      if (found === null) {
        refusals.push({ index, status: 409, error: `external_customer_id '${event.external_customer_id}' names more than one customer` });
        continue;
      }
      customerId = found;
    }
    if (!customerId) {
      refusals.push({
        index,
        status: 404,
        error: event.customer_id ? `customer ${event.customer_id} not found` : `no customer with external_id '${event.external_customer_id}'`,
      });
      continue;
    }
    const metric = metricByCode.get(event.metric_code);
    if (!metric) {
      refusals.push({ index, status: 404, error: `billable metric '${event.metric_code}' not found` });
      continue;
    }
    const row = eventRow(event, customerId, metric, ctx.now);
    if ('error' in row) refusals.push({ index, ...row });
    else rows.push({ index, row, metricCode: metric.code });
  }

  const late = await latePeriodStarts(ctx, rows);
  const storable: EventInsert[] = [];
  const pairs = new Map<string, { customerId: string; metricCode: string }>();
  for (const item of rows) {
    const start = late.get(`${item.row.customer_id}/${item.metricCode}`);
    if (start && new Date(item.row.ts) < start) {
      refusals.push({
        index: item.index,
        status: 409,
        error: `timestamp ${item.row.ts} is before the current period (from ${start.toISOString()}) of a subscription billing '${item.metricCode}', whose last invoice is issued`,
      });
    } else {
      storable.push(item.row);
      pairs.set(`${item.row.customer_id}/${item.metricCode}`, { customerId: item.row.customer_id, metricCode: item.metricCode });
    }
  }
  const inserted = await insertEvents(ctx.tx, ctx.tenantId, storable, ctx.now);
  // The usage alerts on the batch's (customer, metric) pairs, once per batch in its transaction
  // (DESIGN §23, decision 0430).
  if (inserted > 0) await evaluateUsageAlerts(ctx, [...pairs.values()]);
  refusals.sort((a, b) => a.index - b.index);
  return {
    accepted: inserted,
    duplicates: storable.length - inserted,
    rejected: refusals.map((r) => ({ index: r.index, error: r.error })),
    refusals,
  };
}

/**
 * Per (customer, metric code): the earliest instant an event may carry — the latest current-period
 * start among the customer's running subscriptions that meter the metric and whose latest invoice
 * is not a draft. Skips the invoice reads unless some event is that old.
 */
async function latePeriodStarts(ctx: Ctx, rows: { row: EventInsert; metricCode: string }[]): Promise<Map<string, Date>> {
  const out = new Map<string, Date>();
  if (rows.length === 0) return out;
  const subscriptions = await runningSubscriptionsOfCustomers(ctx.tx, ctx.tenantId, [...new Set(rows.map((r) => r.row.customer_id))]);
  if (subscriptions.length === 0) return out;
  const metered = await pricesOfPlans(ctx.tx, ctx.tenantId, [...new Set(subscriptions.map((s) => s.plan_id))], { scope: 'metered', activeOnly: true });
  const metricsOfPlan = new Map<string, Set<string>>();
  for (const p of metered) {
    const key = `${p.plan_id}/${p.currency}`;
    if (!metricsOfPlan.has(key)) metricsOfPlan.set(key, new Set());
    metricsOfPlan.get(key)!.add(p.metric_code!);
  }
  const oldest = new Map<string, Date>();
  for (const r of rows) {
    const key = `${r.row.customer_id}/${r.metricCode}`;
    const ts = new Date(r.row.ts);
    if (!oldest.has(key) || ts < oldest.get(key)!) oldest.set(key, ts);
  }
  const draftCache = new Map<string, boolean>();
  for (const s of subscriptions) {
    for (const code of metricsOfPlan.get(`${s.plan_id}/${s.currency}`) ?? []) {
      const key = `${s.customer_id}/${code}`;
      const first = oldest.get(key);
      if (!first || first >= s.current_period_start) continue;
      let draft = false;
      if (s.latest_invoice_id) {
        if (!draftCache.has(s.latest_invoice_id)) draftCache.set(s.latest_invoice_id, (await getInvoiceRow(ctx, s.latest_invoice_id)).status === 'draft');
        draft = draftCache.get(s.latest_invoice_id)!;
      }
      if (draft) continue;
      const current = out.get(key);
      if (!current || s.current_period_start > current) out.set(key, s.current_period_start);
    }
  }
  return out;
}
