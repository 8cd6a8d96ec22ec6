import type { Timestamp, TableAccess } from '../../platform/db/schema.js';

export type PaymentType = 'bank_transfer' | 'cash' | 'cheque' | 'card' | 'upi';

export interface PaymentsTable {
  tenant_id: string;
  id: string;
  customer_id: string;
  invoice_id: string | null;
  payment_type: PaymentType;
  channel: string;
  status: string;
  amount: number;
  tds_amount: number;
  currency: string;
  reference_number: string;
  notes: string;
  recorded_by: string;
  recorded_at: Timestamp;
  /** Gateway payments (DESIGN §11): the provider, its payment id and the attempt that made it. */
  gateway: string | null;
  gateway_payment_id: string | null;
  attempt_id: string | null;
  /** Refunded so far (refunds module); never above `amount`. */
  amount_refunded: number;
  /** When the gateway settled it (clearing → cash); null for offline payments and until then. */
  settled_at: Timestamp | null;
  /** Functional currency per one unit of `currency` on the payment's date, where it came from, and the amount in it (DESIGN §19). */
  exchange_rate: string | null;
  exchange_rate_source: 'functional_currency' | 'request' | 'entity_rate_table' | 'invoice' | null;
  functional_amount: number | null;
  /**
   * The certificate for `tds_amount` (decision 0770): its number, the section or payment code it was
   * deducted under, the form (Form 16A; Form 131 from 1 April 2026), the day the customer deducted
   * (YYYY-MM-DD in India) and when it was recorded; all null until then.
   */
  tds_certificate_number: string | null;
  tds_section: string | null;
  tds_payment_code: string | null;
  tds_certificate_form: 'Form 16A' | 'Form 131' | null;
  tds_deducted_on: string | null;
  tds_certified_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

declare module '../../platform/db/schema.js' {
  interface Tables {
    payments: PaymentsTable;
  }
}

/** Direct use of these tables by other modules (see TableAccess); everything else goes through this module's operations. */
export const paymentsTableAccess: TableAccess = {
  payments: { read: ['finance'] },
};
