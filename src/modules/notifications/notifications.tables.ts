import type { Timestamp } from '../../platform/db/schema.js';

export interface EmailTemplatesTable {
  tenant_id: string;
  name: string;
  subject: string;
  html: string;
  text: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface NotificationSettingsTable {
  tenant_id: string;
  notification: string;
  enabled: boolean;
  updated_at: Timestamp;
}

export interface NotificationsTable {
  tenant_id: string;
  id: string;
  notification: string;
  dedupe_key: string;
  customer_id: string | null;
  channel: 'email' | 'sms';
  status: 'queued' | 'skipped';
  recipient: string | null;
  detail: string;
  created_at: Timestamp;
}

export interface SmsConnectionsTable {
  tenant_id: string;
  id: string;
  provider: 'twilio' | 'msg91';
  sender: string;
  credentials_sealed: string;
  created_at: Timestamp;
}

declare module '../../platform/db/schema.js' {
  interface Tables {
    email_templates: EmailTemplatesTable;
    notification_settings: NotificationSettingsTable;
    notifications: NotificationsTable;
    sms_connections: SmsConnectionsTable;
  }
}
