import type { Generated } from 'kysely';
import type { Timestamp } from '../../platform/db/schema.js';

export type AlertType = 'usage_threshold' | 'spend_threshold' | 'credit_balance_below';

export interface AlertsTable {
  tenant_id: string;
  id: string;
  customer_id: string;
  subscription_id: string | null;
  type: AlertType;
  metric_code: string | null;
  currency: string | null;
  threshold: number;
  action: 'notify' | 'block';
  recurring: boolean;
  status: 'active' | 'archived';
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface AlertTriggersTable {
  tenant_id: string;
  alert_id: string;
  period_start: Timestamp;
  value: number;
  triggered_at: Timestamp;
  cleared_at: Timestamp | null;
}

/**
 * The running quantity of an open recurring usage alert over its current period (decision 0800),
 * kept by the ingestion batches that move it. Written only by the usage-alert evaluation.
 */
export interface UsageAlertTotalsTable {
  tenant_id: string;
  alert_id: string;
  period_start: Timestamp;
  /** Decimal text: the count, sum or max of the period so far (null: a max over no events). */
  total: string | null;
  /** The transactions in progress when the total was seeded (xid8 text); empty once settled. */
  unsettled: string[];
}

/**
 * What an ingestion batch stored, queued for the usage alerts (decision 0900): the worker's fold
 * deletes the rows it counts. Columns aligned per (customer, metric id) pair.
 */
export interface UsageAlertPendingTable {
  tenant_id: string;
  id: Generated<string>;
  customers: string[];
  metrics: string[];
  /** Per pair, the values of its events as a numeric[] literal. */
  vals: string[];
  earliest: Timestamp[];
  /** Every event of the batch was new: its events are the deltas. */
  exact: boolean;
  created_at: Timestamp;
}

declare module '../../platform/db/schema.js' {
  interface Tables {
    alerts: AlertsTable;
    alert_triggers: AlertTriggersTable;
    usage_alert_totals: UsageAlertTotalsTable;
    usage_alert_pending: UsageAlertPendingTable;
  }
}
