import type { Json, NullableJson, Timestamp } from '../../platform/db/schema.js';

export type InvoiceStatus = 'draft' | 'open' | 'paid' | 'void' | 'uncollectible';

/** Who issued and who received the invoice, frozen at finalization (a GST invoice never changes). */
export type PartySnapshot = {
  name: string;
  legal_name?: string | null;
  email?: string | null;
  gstin: string | null;
  state_code: string | null;
  country_code: string | null;
  address: Record<string, string | null | undefined> | null;
};

export interface InvoicesTable {
  tenant_id: string;
  id: string;
  entity_id: string;
  customer_id: string;
  subscription_id: string | null;
  number: string | null;
  status: InvoiceStatus;
  billing_reason: string;
  currency: string;
  subtotal: number;
  tax_amount: number;
  cgst_amount: number;
  sgst_amount: number;
  igst_amount: number;
  tax_type: string;
  utgst: boolean;
  place_of_supply: string | null;
  total: number;
  amount_paid: number;
  amount_tds: number;
  amount_credited: number;
  amount_due: number;
  period_start: Timestamp | null;
  period_end: Timestamp | null;
  issued_at: Timestamp | null;
  due_date: Timestamp | null;
  paid_at: Timestamp | null;
  voided_at: Timestamp | null;
  marked_uncollectible_at: Timestamp | null;
  supplier: NullableJson<PartySnapshot>;
  customer_details: NullableJson<PartySnapshot>;
  memo: string | null;
  metadata: Json<Record<string, unknown>>;
  /** DESIGN §11: `send_invoice` (the customer pays) or `charge_automatically` (the default payment method is charged). */
  collection_method: 'send_invoice' | 'charge_automatically';
  /** The last failed collection attempt's `{ code, message }`; null otherwise. */
  last_payment_error: NullableJson<{ code: string; message: string }>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface InvoiceLinesTable {
  tenant_id: string;
  id: string;
  invoice_id: string;
  position: number;
  description: string;
  quantity: number;
  unit_amount: number;
  amount: number;
  hsn_code: string;
  rate_bp: number;
  cgst_amount: number;
  sgst_amount: number;
  igst_amount: number;
  tax_amount: number;
  total: number;
  plan_id: string | null;
  price_id: string | null;
  period_start: Timestamp | null;
  period_end: Timestamp | null;
}

declare module '../../platform/db/schema.js' {
  interface Tables {
    invoices: InvoicesTable;
    invoice_lines: InvoiceLinesTable;
  }
}
