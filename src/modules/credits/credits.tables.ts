import type { ColumnType, Generated } from 'kysely';
import type { Timestamp } from '../../platform/db/schema.js';

export type CreditGrantCategory = 'paid' | 'promotional';
export type CreditGrantStatus = 'pending' | 'active' | 'depleted' | 'expired' | 'voided';
export type CreditMovementKind = 'granted' | 'drawn' | 'expired' | 'voided';

/** What a grant may be spent on: lines of these plans and/or of these price types. */
export type AppliesTo = { plan_ids?: string[]; price_types?: ('fixed' | 'usage' | 'one_off')[] };

export interface CreditGrantsTable {
  tenant_id: string;
  id: string;
  customer_id: string;
  entity_id: string;
  category: CreditGrantCategory;
  status: CreditGrantStatus;
  name: string | null;
  currency: string;
  amount: number;
  remaining: number;
  /** The GST charged on a paid grant's top-up invoice (0 for promotional grants). */
  cgst_amount: Generated<number>;
  sgst_amount: Generated<number>;
  igst_amount: Generated<number>;
  priority: number;
  expires_at: Timestamp | null;
  applies_to: ColumnType<AppliesTo | null, string | null, string | null>;
  invoice_id: string | null;
  /** An auto top-up's grant: the payment method its setting named; its top-up is charged to that method only. */
  payment_method_id: Generated<string | null>;
  voided_at: Timestamp | null;
  expired_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface CreditGrantMovementsTable {
  tenant_id: string;
  id: string;
  grant_id: string;
  customer_id: string;
  kind: CreditMovementKind;
  amount: number;
  /** A draw-down of a paid grant: the share of the top-up's GST adjusted against the invoice. */
  tax_amount: number;
  invoice_id: string | null;
  created_at: Timestamp;
}

export interface AutoTopUpsTable {
  tenant_id: string;
  customer_id: string;
  enabled: boolean;
  currency: string;
  threshold: number;
  amount: number;
  payment_method_id: string | null;
  /** The open top-up invoice an auto top-up created: none other is created while it is set. */
  in_flight_invoice_id: string | null;
  updated_at: Timestamp;
}

declare module '../../platform/db/schema.js' {
  interface Tables {
    auto_top_ups: AutoTopUpsTable;
    credit_grants: CreditGrantsTable;
    credit_grant_movements: CreditGrantMovementsTable;
  }
}
