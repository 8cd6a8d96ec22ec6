import type { Timestamp } from '../../platform/db/schema.js';

export type PaymentType = 'bank_transfer' | 'cash' | 'cheque';

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
  created_at: Timestamp;
  updated_at: Timestamp;
}

declare module '../../platform/db/schema.js' {
  interface Tables {
    payments: PaymentsTable;
  }
}
