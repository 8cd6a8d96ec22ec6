import type { Json, Timestamp } from '../../platform/db/schema.js';

export interface WebhookEndpointsTable {
  tenant_id: string;
  id: string;
  url: string;
  description: string | null;
  /** Subscribed event types, or `['*']` for every type. */
  events: Json<string[]>;
  enabled: boolean;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  deleted_at: Timestamp | null;
}

export interface WebhookDeliveriesTable {
  tenant_id: string;
  id: string;
  event_id: string;
  webhook_endpoint_id: string;
  endpoint_url: string;
  object_id: string | null;
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  next_retry_at: Timestamp | null;
  delivered_at: Timestamp | null;
  successor_waiting: boolean;
  created_at: Timestamp;
  updated_at: Timestamp;
}

declare module '../../platform/db/schema.js' {
  interface Tables {
    webhook_endpoints: WebhookEndpointsTable;
    webhook_deliveries: WebhookDeliveriesTable;
  }
}
