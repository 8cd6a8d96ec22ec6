import type { Ctx } from '../../platform/context.js';
import { queueUsageAlertEvaluation } from '../../modules/alerts/index.js';
import { customerRefs } from '../../modules/customers/index.js';
import { meteredPeriodCutoffs } from '../../modules/subscriptions/index.js';
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

/** A uuid as PostgreSQL writes it; a customer_id in capitals names no customer (it never did). */
const LOWER_UUID = /^[0-9a-f-]{36}$/;

/** A storable event, with its (customer, metric) pair's key for the late check. */
type Resolved = { index: number; row: EventInsert; metricCode: string; pair: string };

/**
 * Records a batch of usage events (DESIGN §13), set-based (decisions 0430, 0690): one query
 * finds which referenced customers do not exist (and resolves external ids), one the metrics, one
 * the late events' period starts (rows only where an event is older than a period it would bill
 * into), then ONE INSERT stores every valid event. An invalid event is refused with its index and
 * the others are stored; a transaction_id already recorded is a counted duplicate. An event dated
 * before the current period of a subscription that meters its metric is refused, unless that
 * subscription's latest invoice is still a draft (it can still change).
 */
export async function recordUsageEvents(ctx: Ctx, raw: unknown[]): Promise<RecordedUsage> {
  const refusals: RecordedUsage['refusals'] = [];
  const parsed: { index: number; event: UsageEventBody }[] = [];
  const ids = new Set<string>();
  const externalIds = new Set<string>();
  const codes = new Set<string>();
  for (let index = 0; index < raw.length; index += 1) {
    const result = parseUsageEvent(raw[index]);
    if (!result.success) {
      refusals.push({ index, status: 400, error: issueText(result.error.issues) });
      continue;
    }
    const event = result.data;
    parsed.push({ index, event });
    if (event.customer_id) {
      if (LOWER_UUID.test(event.customer_id)) ids.add(event.customer_id);
    } else externalIds.add(event.external_customer_id!);
    codes.add(event.metric_code);
  }

  const refs = await customerRefs(ctx.tx, ctx.tenantId, [...ids], [...externalIds]);
  const metrics = await metricsByCodes(ctx.tx, ctx.tenantId, [...codes]);
  const byExternal = new Map<string, string | null>();
  for (const c of refs.external) {
    // Two customers sharing an external id: the reference is ambiguous (null), not one of them.
    byExternal.set(c.external_id, byExternal.has(c.external_id) ? null : c.id);
  }
  const metricByCode = new Map<string, MetricRow>(metrics.map((m) => [m.code, m]));
  const exists = (id: string) => ids.has(id) && !refs.missing.has(id);

  const rows: Resolved[] = [];
  for (const { index, event } of parsed) {
    let customerId: string | undefined;
    if (event.customer_id) customerId = exists(event.customer_id) ? event.customer_id : undefined;
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
    else rows.push({ index, row, metricCode: metric.code, pair: `${customerId}/${metric.code}` });
  }

  const late = await latePeriodStarts(ctx, rows);
  const storable: EventInsert[] = [];
  for (const item of rows) {
    const key = item.pair;
    const start = late.size > 0 ? late.get(key) : undefined;
    if (start && item.row.at < start.getTime()) {
      refusals.push({
        index: item.index,
        status: 409,
        error: `timestamp ${new Date(item.row.at).toISOString()} is before the current period (from ${start.toISOString()}) of a subscription billing '${item.metricCode}', whose last invoice is issued`,
      });
    } else storable.push(item.row);
  }
  const inserted = await insertEvents(ctx.tx, ctx.tenantId, storable, ctx.now);
  // What the batch stored is queued for the usage alerts in its transaction; the worker folds it
  // into their running totals about once a second (DESIGN §23, decisions 0800, 0900).
  await queueUsageAlertEvaluation(ctx, { events: storable, inserted });
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
 * is not a draft — for the pairs whose oldest event is before such a start, in one query.
 */
async function latePeriodStarts(ctx: Ctx, rows: Resolved[]): Promise<Map<string, Date>> {
  const out = new Map<string, Date>();
  if (rows.length === 0) return out;
  const oldest = new Map<string, { customerId: string; metricCode: string; at: number }>();
  for (const r of rows) {
    const current = oldest.get(r.pair);
    if (!current) oldest.set(r.pair, { customerId: r.row.customer_id, metricCode: r.metricCode, at: r.row.at });
    else if (r.row.at < current.at) current.at = r.row.at;
  }
  const cutoffs = await meteredPeriodCutoffs(
    ctx.tx,
    ctx.tenantId,
    [...oldest.values()].map((p) => ({ customerId: p.customerId, metricCode: p.metricCode, oldest: new Date(p.at) })),
  );
  for (const c of cutoffs) out.set(`${c.customer_id}/${c.metric_code}`, c.cutoff);
  return out;
}
