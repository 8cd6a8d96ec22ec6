import type { Timestamp, TableAccess } from '../../platform/db/schema.js';

export type CreditNoteStatus = 'pending_approval' | 'issued' | 'used' | 'void' | 'rejected' | 'expired';

export interface CreditNotesTable {
  tenant_id: string;
  id: string;
  customer_id: string;
  invoice_id: string | null;
  entity_id: string;
  number: string | null;
  reference: string | null;
  type: string;
  status: CreditNoteStatus;
  refund_status: string;
  currency: string;
  amount: number;
  subtotal: number;
  tax_amount: number;
  cgst_amount: number;
  sgst_amount: number;
  igst_amount: number;
  tax_type: string;
  hsn_code: string;
  /** false: a commercial credit — the customer's balance changes, output tax does not (s.34(2)). */
  tax_reversal: boolean;
  /**
   * Functional currency (INR for an Indian entity) per one unit of the note's currency: its
   * invoice's rate, or the entity's of the issue date for a note on no invoice (DESIGN §19).
   */
  exchange_rate: string | null;
  /** The note's INR values (CGST Rules, rule 34), as its invoice has them; null outside India. */
  inr_subtotal: number | null;
  inr_cgst_amount: number | null;
  inr_sgst_amount: number | null;
  inr_igst_amount: number | null;
  inr_tax_amount: number | null;
  inr_total: number | null;
  balance: number;
  reason: string;
  expires_at: Timestamp | null;
  issued_at: Timestamp | null;
  approved_at: Timestamp | null;
  rejected_at: Timestamp | null;
  voided_at: Timestamp | null;
  expired_at: Timestamp | null;
  /** Who asked for the note (migration 0221): its approval needs someone else. Null: the worker. */
  requested_by_type: 'api_key' | 'user' | null;
  requested_by_id: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface CreditNoteApplicationsTable {
  tenant_id: string;
  id: string;
  credit_note_id: string;
  invoice_id: string;
  amount: number;
  created_at: Timestamp;
}

/** One invoice line a note credits: its share of the note, split at that line's own rate. */
export interface CreditNoteLinesTable {
  tenant_id: string;
  id: string;
  credit_note_id: string;
  invoice_id: string;
  invoice_line_id: string;
  position: number;
  hsn_code: string;
  rate_bp: number;
  amount: number;
  subtotal: number;
  cgst_amount: number;
  sgst_amount: number;
  igst_amount: number;
  tax_amount: number;
}

declare module '../../platform/db/schema.js' {
  interface Tables {
    credit_notes: CreditNotesTable;
    credit_note_applications: CreditNoteApplicationsTable;
    credit_note_lines: CreditNoteLinesTable;
  }
}

/** Direct use of these tables by other modules (see TableAccess); everything else goes through this module's operations. */
export const creditNotesTableAccess: TableAccess = {
  credit_notes: { read: ['finance', 'gst-returns'] },
};
