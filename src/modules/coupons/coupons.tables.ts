import type { Generated } from 'kysely';
import type { Json, Timestamp, TableAccess } from '../../platform/db/schema.js';

export type CouponDuration = 'once' | 'repeating' | 'forever';

export interface CouponsTable {
  tenant_id: string;
  id: string;
  code: string;
  name: string;
  /** Hundredths of a percent (2500 = 25 %); null for an amount-off coupon. */
  percent_off_bp: number | null;
  amount_off: number | null;
  currency: string | null;
  duration: CouponDuration;
  duration_in_months: number | null;
  max_redemptions: number | null;
  times_redeemed: Generated<number>;
  redeem_by: Timestamp | null;
  plan_ids: Json<string[]>;
  active: boolean;
  metadata: Json<Record<string, unknown>>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** One redemption of a coupon, on a subscription (its invoices within the duration) or one invoice. */
export interface DiscountsTable {
  tenant_id: string;
  id: string;
  coupon_id: string;
  customer_id: string;
  subscription_id: string | null;
  invoice_id: string | null;
  starts_at: Timestamp;
  ends_at: Timestamp | null;
  invoices_discounted: Generated<number>;
  ended_at: Timestamp | null;
  created_at: Timestamp;
}

export interface InvoiceDiscountsTable {
  tenant_id: string;
  id: string;
  invoice_id: string;
  discount_id: string;
  coupon_id: string;
  amount: number;
}

declare module '../../platform/db/schema.js' {
  interface Tables {
    coupons: CouponsTable;
    discounts: DiscountsTable;
    invoice_discounts: InvoiceDiscountsTable;
  }
}

/** Direct use of these tables by other modules (see TableAccess): MRR is net of a subscription's coupon (analytics' set-based snapshot). */
export const couponsTableAccess: TableAccess = {
  coupons: { read: ['analytics'] },
  discounts: { read: ['analytics'] },
};
