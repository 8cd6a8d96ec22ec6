import type { Timestamp } from '../../platform/db/schema.js';

export type GiftStatus = 'purchased' | 'redeemed' | 'canceled';

export interface GiftsTable {
  tenant_id: string;
  id: string;
  code: string;
  plan_id: string;
  buyer_customer_id: string;
  recipient_email: string;
  status: GiftStatus;
  duration_months: number;
  currency: string;
  amount: number;
  invoice_id: string | null;
  redeemed_by_customer_id: string | null;
  redeemed_at: Timestamp | null;
  subscription_id: string | null;
  canceled_at: Timestamp | null;
  expires_at: Timestamp;
  created_at: Timestamp;
  updated_at: Timestamp;
}

declare module '../../platform/db/schema.js' {
  interface Tables {
    gifts: GiftsTable;
  }
}
