import type { Timestamp } from '../../platform/db/schema.js';

export interface JournalEntriesTable {
  tenant_id: string;
  id: string;
  ledger_id: number;
  entity_id: string;
  kind: string;
  reference_type: string;
  reference_id: string;
  currency: string;
  description: string;
  posted_at: Timestamp;
}

export interface JournalLinesTable {
  tenant_id: string;
  id: string;
  entry_id: string;
  account_code: number;
  debit: number;
  credit: number;
  customer_id: string | null;
  invoice_id: string | null;
  credit_note_id: string | null;
}

declare module '../../platform/db/schema.js' {
  interface Tables {
    journal_entries: JournalEntriesTable;
    journal_lines: JournalLinesTable;
  }
}
