import type { Json, Timestamp } from '../../platform/db/schema.js';

export type QuoteStatus = 'draft' | 'accepted' | 'declined' | 'expired';

/** A quoted line as stored: the server-computed amount and the share of the quote discount. */
export type QuoteLine = {
  description: string;
  quantity: number;
  unit_amount: number;
  amount: number;
  discount_amount: number;
  hsn_code: string | null;
};

export interface QuotesTable {
  tenant_id: string;
  id: string;
  customer_id: string;
  entity_id: string;
  quote_number: string;
  status: QuoteStatus;
  currency: string;
  line_items: Json<QuoteLine[]>;
  subtotal: number;
  discount_amount: number;
  tax_amount: number;
  tax_computed: boolean;
  total: number;
  valid_until: Timestamp | null;
  notes: string;
  terms: string;
  invoice_id: string | null;
  accepted_at: Timestamp | null;
  declined_at: Timestamp | null;
  expired_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

declare module '../../platform/db/schema.js' {
  interface Tables {
    quotes: QuotesTable;
  }
}
