import type { Json, Timestamp } from '../db/schema.js';

export type AuditChanges = Record<string, { from: unknown; to: unknown }>;

export interface AuditLogTable {
  tenant_id: string;
  id: string;
  actor_type: 'api_key' | 'user' | 'system' | 'customer';
  actor_id: string | null;
  actor_label: string | null;
  action: string;
  object_type: string | null;
  object_id: string | null;
  changes: Json<AuditChanges>;
  ip: string | null;
  request_id: string | null;
  created_at: Timestamp;
}

declare module '../db/schema.js' {
  interface Tables {
    audit_log: AuditLogTable;
  }
}
