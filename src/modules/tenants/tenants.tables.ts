import type { Generated } from 'kysely';
import type { Timestamp } from '../../platform/db/schema.js';

/** How a customer may cancel in the portal: not at all, at the end of the paid period, or now with the unused time credited. */
export const PORTAL_CANCELLATION = ['disabled', 'at_period_end', 'immediately'] as const;
export type PortalCancellation = (typeof PORTAL_CANCELLATION)[number];

export interface TenantSettingsTable {
  tenant_id: string;
  sac_code: string | null;
  credit_note_approval_required: boolean;
  referral_window_days: number;
  referral_reward_amount: number;
  invoice_due_days: number;
  /** What a customer may do in the portal (decision 0500). */
  portal_cancellation: Generated<PortalCancellation>;
  portal_plan_change: Generated<boolean>;
  portal_quantity_change: Generated<boolean>;
  portal_billing_details: Generated<boolean>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

declare module '../../platform/db/schema.js' {
  interface Tables {
    tenant_settings: TenantSettingsTable;
  }
}
