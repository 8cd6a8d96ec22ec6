/** The public face of usage: billable metrics, event storage and the period aggregation. */
export { billableQuantity, calendarDays, createMetric, dailyUsage, eventRow, getMetric, listMetrics, toMetric, type EventRefusal } from './usage.service.js';
export type { DimensionalWindow, EventInsert, MetricRow, UsageGroup, UsageWindow } from './usage.repository.js';
export {
  billableMetricSchema,
  createBillableMetricBody,
  MAX_DAILY_USAGE_DAYS,
  dailyUsageSchema,
  type DailyUsage,
  isPlainBatchBody,
  MAX_BATCH_EVENTS,
  parseUsageEvent,
  usageEventAcceptedSchema,
  usageEventBatchBody,
  usageEventBody,
  usageIngestResultSchema,
  type BillableMetric,
  type UsageEventBody,
  type UsageIngestResult,
} from './usage.schemas.js';
export type { Aggregation } from './usage.tables.js';
export { aggregateUsage, aggregateUsageByDimensions, insertEvents, metricsByCodes } from './usage.service.js';
