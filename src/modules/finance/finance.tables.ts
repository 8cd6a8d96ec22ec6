import type { Generated } from 'kysely';
import type { Timestamp } from '../../platform/db/schema.js';

export interface ReconciliationRunsTable {
  tenant_id: string;
  id: string;
  entity_id: string | null;
  scope: string;
  status: 'running' | 'completed' | 'failed';
  run_by: string | null;
  started_at: Timestamp;
  completed_at: Timestamp | null;
  invoices_checked: Generated<number>;
  paid_invoices_checked: Generated<number>;
  payments_checked: Generated<number>;
  credit_notes_checked: Generated<number>;
  journal_entries_checked: Generated<number>;
  tb_compared: Generated<boolean>;
  tb_accounts_checked: Generated<number>;
  tb_transfers_checked: Generated<number>;
  total_discrepancies: Generated<number>;
  discrepancies_truncated: Generated<boolean>;
  failure: Generated<string | null>;
  created_at: Timestamp;
}

export interface ReconciliationDiscrepanciesTable {
  tenant_id: string;
  run_id: string;
  position: number;
  type: string;
  invoice_id: string | null;
  transaction_id: string | null;
  reference_id: string | null;
  account_code: number;
  currency: string | null;
  expected_amount: number;
  found_amount: number;
  detail: string;
}

export interface RevenueSchedulesTable {
  tenant_id: string;
  id: string;
  invoice_id: string;
  invoice_line_id: string;
  subscription_id: string | null;
  customer_id: string;
  entity_id: string;
  ledger_id: number;
  currency: string;
  period_start: Timestamp;
  total_days: number;
  amount: number;
  recognized: Generated<number>;
  recognized_days: Generated<number>;
  base_recognized: Generated<number>;
  base_day: Generated<number>;
  status: 'active' | 'completed';
  created_at: Timestamp;
  updated_at: Timestamp;
}

declare module '../../platform/db/schema.js' {
  interface Tables {
    reconciliation_runs: ReconciliationRunsTable;
    reconciliation_discrepancies: ReconciliationDiscrepanciesTable;
    revenue_schedules: RevenueSchedulesTable;
  }
}
