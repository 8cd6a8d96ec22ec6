import type { Timestamp } from '../../platform/db/schema.js';

export type ReferralStatus = 'pending' | 'completed' | 'expired' | 'canceled';

export interface ReferralsTable {
  tenant_id: string;
  id: string;
  code: string;
  referrer_id: string;
  referred_id: string;
  status: ReferralStatus;
  reward_amount: number;
  currency: string;
  reward_credited: boolean;
  credit_note_id: string | null;
  qualifying_invoice_id: string | null;
  expires_at: Timestamp;
  qualified_at: Timestamp | null;
  completed_at: Timestamp | null;
  expired_at: Timestamp | null;
  canceled_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

declare module '../../platform/db/schema.js' {
  interface Tables {
    referrals: ReferralsTable;
  }
}
