import type { Generated } from 'kysely';
import type { Json, Timestamp, TableAccess } from '../../platform/db/schema.js';
import type { CancellationReason } from '../subscriptions/index.js';

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

/** A coupon offered to a customer who starts to cancel for one of `reasons` (decision 0560). */
export interface RetentionOffersTable {
  tenant_id: string;
  id: string;
  coupon_id: string;
  reasons: Json<CancellationReason[]>;
  message: string | null;
  active: boolean;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** An accepted retention offer: the subscription kept with the offer's coupon (once per subscription). */
export interface RetentionOfferAcceptancesTable {
  tenant_id: string;
  id: string;
  offer_id: string;
  subscription_id: string;
  customer_id: string;
  coupon_id: string;
  discount_id: string;
  reason: CancellationReason;
  feedback: string | null;
  accepted_at: Timestamp;
}

declare module '../../platform/db/schema.js' {
  interface Tables {
    coupons: CouponsTable;
    discounts: DiscountsTable;
    invoice_discounts: InvoiceDiscountsTable;
    retention_offers: RetentionOffersTable;
    retention_offer_acceptances: RetentionOfferAcceptancesTable;
  }
}

/** Direct use of these tables by other modules (see TableAccess): MRR is net of a subscription's coupon (analytics' set-based snapshot). */
export const couponsTableAccess: TableAccess = {
  coupons: { read: ['analytics'] },
  discounts: { read: ['analytics'] },
  // The churn-reasons report counts accepted offers per reason beside the cancellations.
  retention_offer_acceptances: { read: ['analytics'] },
};
