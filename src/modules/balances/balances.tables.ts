import type { Timestamp } from '../../platform/db/schema.js';

/** The view `customer_balance_transactions` (migrations/0281): one row per movement of a customer's balance. */
export interface CustomerBalanceTransactionsView {
  tenant_id: string;
  id: string;
  customer_id: string;
  currency: string;
  source: string;
  source_id: string;
  type: string;
  amount: number;
  document_type: string;
  document_id: string;
  document_number: string | null;
  created_at: Timestamp;
}

declare module '../../platform/db/schema.js' {
  interface Tables {
    customer_balance_transactions: CustomerBalanceTransactionsView;
  }
}
