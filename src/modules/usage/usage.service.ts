import type { Ctx, ReadCtx } from '../../platform/context.js';
import { isUniqueViolation } from '../../platform/db/errors.js';
import { errors } from '../../platform/errors.js';
import type { Page } from '../../platform/http/envelope.js';
import { newId } from '../../platform/ids.js';
import { toIso } from '../../platform/time.js';
import { findMetric, listMetricRows, type EventInsert, type MetricRow } from './usage.repository.js';
import { insertMetric } from './usage.repository.js';
import type { BillableMetric, CreateBillableMetricBody, UsageEventBody } from './usage.schemas.js';

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
