import type { TableAccess, Json, Timestamp } from '../../platform/db/schema.js';

export type Aggregation = 'count' | 'sum' | 'max' | 'unique_count' | 'latest';

export interface BillableMetricsTable {
  tenant_id: string;
  id: string;
  code: string;
  name: string;
  aggregation: Aggregation;
  /** The event property aggregated (sum, max, unique_count, latest); null for count. */
  field: string | null;
  /** DESIGN §24: the event properties its usage is broken down by (e.g. model, direction); [] for none. */
  dimensions: Json<string[]>;
  created_at: Timestamp;
}

/** Written only by the set-based batch insert (usage.repository); read by the period aggregation. */
export interface UsageEventsTable {
  tenant_id: string;
  transaction_id: string;
  customer_id: string;
  metric_id: string;
  ts: Timestamp;
  value: string | null;
  value_key: string | null;
  properties: unknown;
  created_at: Timestamp;
}

declare module '../../platform/db/schema.js' {
  interface Tables {
    billable_metrics: BillableMetricsTable;
    usage_events: UsageEventsTable;
  }
}

/**
 * Direct use of these tables by other modules (see TableAccess). Usage alerts measure each watched
 * (customer, metric) pair of a batch in one set-based statement over the period's events (decision 0690).
 */
export const usageTableAccess: TableAccess = {
  billable_metrics: { read: ['alerts'] },
  usage_events: { read: ['alerts'] },
};
