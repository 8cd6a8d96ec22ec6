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

declare module '../../platform/db/schema.js' {
  interface Tables {
    alerts: AlertsTable;
    alert_triggers: AlertTriggersTable;
  }
}
