import type { Timestamp, TableAccess } from '../../platform/db/schema.js';

/** A customer advance and its receipt voucher (CGST Rules, rule 50): migrations/0280. */
export interface CustomerAdvancesTable {
  tenant_id: string;
  id: string;
  entity_id: string;
  customer_id: string;
  /** The payment that brought the money; null for the voucher of a paid credit grant's top-up (credit_grant_id). */
  payment_id: string | null;
  /**
   * Set when the advance is the payment for a paid credit grant (decision 0700): the receipt voucher
   * of a top-up. Only that grant's draw-downs adjust it; it is never applied or refunded as a plain advance.
   */
  credit_grant_id: string | null;
  number: string;
  currency: string;
  amount: number;
  subtotal: number;
  cgst_amount: number;
  sgst_amount: number;
  igst_amount: number;
  tax_amount: number;
  rate_bp: number;
  hsn_code: string;
  tax_type: string;
  place_of_supply: string | null;
  utgst: boolean;
  balance: number;
  open_subtotal: number;
  open_cgst: number;
  open_sgst: number;
  open_igst: number;
  /** INR per one unit of `currency` on the date of receipt (CGST Rules, rule 34(2)); null for INR. */
  exchange_rate: string | null;
  inr_amount: number | null;
  inr_subtotal: number | null;
  inr_cgst_amount: number | null;
  inr_sgst_amount: number | null;
  inr_igst_amount: number | null;
  open_inr_subtotal: number | null;
  open_inr_cgst: number | null;
  open_inr_sgst: number | null;
  open_inr_igst: number | null;
  received_at: Timestamp;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** An advance applied to an invoice (GSTR-1 11B) or refunded (a refund voucher, rule 51). */
export interface AdvanceMovementsTable {
  tenant_id: string;
  id: string;
  advance_id: string;
  kind: 'applied' | 'refunded';
  invoice_id: string | null;
  number: string | null;
  amount: number;
  subtotal: number;
  cgst_amount: number;
  sgst_amount: number;
  igst_amount: number;
  inr_amount: number | null;
  inr_subtotal: number | null;
  inr_cgst_amount: number | null;
  inr_sgst_amount: number | null;
  inr_igst_amount: number | null;
  /** How a refund voucher's money left: by hand (refunds payable) or through the payment's gateway (`refund_id`). */
  payout: 'offline' | 'gateway';
  refund_id: string | null;
  reason: string;
  created_at: Timestamp;
}

declare module '../../platform/db/schema.js' {
  interface Tables {
    customer_advances: CustomerAdvancesTable;
    advance_movements: AdvanceMovementsTable;
  }
}

/** Direct use of these tables by other modules (see TableAccess): GSTR-1 tables 11A/11B read them as a report. */
export const advancesTableAccess: TableAccess = {
  customer_advances: { read: ['gst-returns'] },
  advance_movements: { read: ['gst-returns'] },
};
