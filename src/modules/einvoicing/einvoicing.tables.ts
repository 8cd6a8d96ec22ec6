import type { Json, NullableJson, Timestamp } from '../../platform/db/schema.js';

export type EinvoiceStatus = 'pending' | 'generated' | 'failed' | 'canceled';
export type EinvoiceDocumentType = 'invoice' | 'credit_note';
export type EinvoiceError = { code: string; message: string; field?: string };

/** One registration of a document with the IRP (DESIGN §15). */
export interface EinvoicesTable {
  tenant_id: string;
  id: string;
  entity_id: string;
  document_type: EinvoiceDocumentType;
  document_id: string;
  status: EinvoiceStatus;
  provider: string;
  irn: string | null;
  ack_no: string | null;
  ack_date: Timestamp | null;
  signed_invoice: string | null;
  signed_qr_code: string | null;
  errors: Json<EinvoiceError[]>;
  /** The IRP JSON as built (kept so a reader sees exactly what was, or would have been, sent). */
  document: NullableJson<Record<string, unknown>>;
  attempts: number;
  generated_at: Timestamp | null;
  canceled_at: Timestamp | null;
  cancel_reason_code: number | null;
  cancel_remarks: string | null;
  /** The IRP's 30-day limit (report-limit.ts): the document is refused from this instant; null when no limit applies. */
  report_deadline: Timestamp | null;
  /** The smallest "days before" alert sent (5, then 1). */
  report_alerted_days: number | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

declare module '../../platform/db/schema.js' {
  interface Tables {
    einvoices: EinvoicesTable;
  }
}
