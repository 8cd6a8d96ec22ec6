import type { Timestamp } from '../../platform/db/schema.js';

export interface TenantSettingsTable {
  tenant_id: string;
  sac_code: string | null;
  credit_note_approval_required: boolean;
  referral_window_days: number;
  referral_reward_amount: number;
  invoice_due_days: number;
  created_at: Timestamp;
  updated_at: Timestamp;
}

declare module '../../platform/db/schema.js' {
  interface Tables {
    tenant_settings: TenantSettingsTable;
  }
}
