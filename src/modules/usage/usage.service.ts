import type { Ctx, ReadCtx } from '../../platform/context.js';
import { isUniqueViolation } from '../../platform/db/errors.js';
import { errors } from '../../platform/errors.js';
import type { Page } from '../../platform/http/envelope.js';
import { newId } from '../../platform/ids.js';
import { toIso } from '../../platform/time.js';
import { aggregateUsageByDay, findMetric, listMetricRows, metricsByCodes, type EventInsert, type MetricRow } from './usage.repository.js';
import { insertMetric } from './usage.repository.js';
import type { BillableMetric, CreateBillableMetricBody, DailyUsage, UsageEventBody } from './usage.schemas.js';

export function toMetric(row: MetricRow): BillableMetric {
  return {
    id: row.id,
    tenant_id: row.tenant_id,
    code: row.code,
    name: row.name,
    aggregation: row.aggregation,
    field: row.field,
    dimensions: row.dimensions ?? [],
    created_at: toIso(row.created_at),
  };
}

export async function createMetric(ctx: Ctx, input: CreateBillableMetricBody): Promise<BillableMetric> {
  const row: MetricRow = {
    tenant_id: ctx.tenantId,
    id: newId(),
    code: input.code,
    name: input.name,
    aggregation: input.aggregation,
    field: input.aggregation === 'count' ? (input.field ?? null) : input.field!,
    dimensions: input.dimensions,
    created_at: ctx.now,
  };
  try {
    await insertMetric(ctx.tx, { ...row, dimensions: JSON.stringify(row.dimensions) });
  } catch (error) {
    if (isUniqueViolation(error, 'billable_metrics_tenant_id_code_key')) {
      throw errors.conflict(`a billable metric with code '${input.code}' already exists`, 'metric_code_taken');
    }
    throw error;
  }
  return toMetric(row);
}

export async function getMetric(ctx: ReadCtx, id: string): Promise<BillableMetric> {
  const row = await findMetric(ctx.tx, ctx.tenantId, id);
  if (!row) throw errors.notFound('billable metric');
  return toMetric(row);
}

export async function listMetrics(ctx: ReadCtx, page: Page): Promise<{ metrics: BillableMetric[]; total: number }> {
  const { rows, total } = await listMetricRows(ctx.tx, ctx.tenantId, page);
  return { metrics: rows.map(toMetric), total };
}

/** Each calendar day (YYYY-MM-DD in `timeZone`) from the day of `start` to the day of the instant before `end`. */
export function calendarDays(start: Date, end: Date, timeZone: string): string[] {
  const dayOf = (d: Date) => new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(d);
  const last = dayOf(new Date(end.getTime() - 1));
  const days: string[] = [];
  for (let day = dayOf(start); day <= last;) {
    days.push(day);
    const next = new Date(`${day}T00:00:00Z`);
    next.setUTCDate(next.getUTCDate() + 1);
    day = next.toISOString().slice(0, 10);
  }
  return days;
}

/**
 * A customer's usage of a metric per calendar day in `timeZone` over [start, end), every day listed
 * (zero where nothing was recorded): the dashboard's chart of usage this period. The customer is
 * checked by the caller (a flow); an unknown metric code is a 404.
 */
export async function dailyUsage(
  ctx: ReadCtx,
  input: { customerId: string; metricCode: string; start: Date; end: Date; timeZone: string },
): Promise<DailyUsage> {
  const [metric] = await metricsByCodes(ctx.tx, ctx.tenantId, [input.metricCode]);
  if (!metric) throw errors.notFound('billable metric');
  const rows = await aggregateUsageByDay(ctx.tx, ctx.tenantId, {
    customer_id: input.customerId,
    metric_id: metric.id,
    start: input.start,
    end: input.end,
    timeZone: input.timeZone,
  });
  const byDay = new Map(rows.map((r) => [r.day, Number(r.quantity)]));
  return {
    customer_id: input.customerId,
    metric_code: metric.code,
    aggregation: metric.aggregation,
    time_zone: input.timeZone,
    days: calendarDays(input.start, input.end, input.timeZone).map((date) => ({ date, quantity: byDay.get(date) ?? 0 })),
  };
}

/** Why an event cannot be stored; `status` is what the single-event endpoint answers. */
export type EventRefusal = { status: 400 | 404 | 409; error: string };

/**
 * The stored form of one event whose customer and metric are resolved, or why not: the metric's
 * `field` must be a finite number for sum, max and latest, and a string or number for
 * unique_count (it is counted by its text).
 */
/** An instant PostgreSQL reads exactly as JavaScript does: at most milliseconds, a zone of Z or ±hh:mm. */
const PLAIN_INSTANT = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,3})?(Z|[+-]\d\d:\d\d)$/;

export function eventRow(event: UsageEventBody, customerId: string, metric: MetricRow, now: Date): EventInsert | EventRefusal {
  const properties = event.properties ?? {};
  let value: number | null = null;
  let valueKey: string | null = null;
  if (metric.aggregation === 'sum' || metric.aggregation === 'max' || metric.aggregation === 'latest') {
    const raw = properties[metric.field!];
    if (typeof raw !== 'number' || !Number.isFinite(raw)) {
      return { status: 400, error: `properties.${metric.field} must be a number for the ${metric.aggregation} metric '${metric.code}'` };
    }
    value = raw;
  } else if (metric.aggregation === 'unique_count') {
    const raw = properties[metric.field!];
    if (typeof raw !== 'string' && !(typeof raw === 'number' && Number.isFinite(raw))) {
      return { status: 400, error: `properties.${metric.field} must be a string or a number for the unique_count metric '${metric.code}'` };
    }
    valueKey = String(raw);
  }
  // The client's text is sent as it came when PostgreSQL reads the same instant from it (no
  // second formatting); finer fractions are cut to the millisecond as before.
  const timestamp = event.timestamp;
  const at = timestamp ? Date.parse(timestamp) : now.getTime();
  return {
    transaction_id: event.transaction_id,
    customer_id: customerId,
    metric_id: metric.id,
    ts: timestamp && PLAIN_INSTANT.test(timestamp) ? timestamp : new Date(at).toISOString(),
    at,
    value,
    value_key: valueKey,
    properties,
  };
}

/**
 * A billed quantity from an aggregate (decimal text): whole units, rounded UP (a fractional sum of
 * 2.1 GB bills 3); never negative (a negative sum or latest bills 0).
 */
export function billableQuantity(aggregate: string): number {
  const n = Number(aggregate);
  if (!Number.isFinite(n) || n <= 0) return 0;
  const q = Math.ceil(n - 1e-9);
  if (!Number.isSafeInteger(q)) throw new RangeError(`usage quantity ${aggregate} is too large to bill`);
  return q;
}

/**
 * Reads and writes of this module's own tables that flows and other modules call; the repository
 * itself is private to the module (index.ts exports operations and types only).
 */
export { aggregateUsage, aggregateUsageByDimensions, insertEvents, metricsByCodes } from './usage.repository.js';
