import type { Json, Timestamp } from '../../platform/db/schema.js';

export type AccountingProvider = 'quickbooks' | 'xero' | 'zoho_books';
export type ConnectionStatus = 'active' | 'reconnect_required' | 'error';
export type SyncRecordType = 'customer' | 'invoice' | 'payment' | 'payment_tds' | 'credit_note' | 'refund';
export type SyncRecordStatus = 'pending' | 'synced' | 'failed' | 'voided';
export type SyncRunStatus = 'queued' | 'running' | 'rate_limited' | 'succeeded' | 'failed' | 'paused';

/** Tenant-configurable mapping of Kosh's GST classes and accounts to the provider's codes. */
export type TaxMapping = {
  /** `intra_state:18`, `inter_state:18`, `export:0`, … → the provider's tax code (name or id). */
  tax_codes: Record<string, string>;
  /** Provider account codes/names: sales income, bank (deposit-to), TDS receivable. */
  accounts: { income: string; bank: string; tds_receivable: string };
  /** QuickBooks: the service item invoice lines are booked to. */
  item: string;
};

export interface AccountingOAuthStatesTable {
  tenant_id: string;
  id: string;
  provider: AccountingProvider;
  state_hash: string;
  code_verifier_sealed: string;
  redirect_uri: string;
  client_state: string | null;
  /** SHA-256 of the browser binding (the connect cookie); null on states made before it existed. */
  binding_hash: string | null;
  expires_at: Timestamp;
  used_at: Timestamp | null;
  created_at: Timestamp;
}

export interface AccountingConnectionsTable {
  tenant_id: string;
  id: string;
  provider: AccountingProvider;
  status: ConnectionStatus;
  external_tenant_id: string;
  external_tenant_name: string | null;
  tokens_sealed: string;
  access_expires_at: Timestamp;
  token_version: number;
  refresh_lease_until: Timestamp | null;
  sync_lease_until: Timestamp | null;
  tax_mapping: Json<Partial<TaxMapping>>;
  last_error: string | null;
  last_synced_at: Timestamp | null;
  connected_at: Timestamp;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface AccountingSyncRecordsTable {
  tenant_id: string;
  id: string;
  connection_id: string;
  record_type: SyncRecordType;
  record_id: string;
  external_id: string | null;
  external_version: string | null;
  payload_hash: string | null;
  status: SyncRecordStatus;
  last_error: string | null;
  attempts: number;
  /** A create sent to a provider without idempotency keys whose outcome is not recorded yet (decision 0160). */
  create_started_at: Timestamp | null;
  synced_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface AccountingSyncRunsTable {
  tenant_id: string;
  id: string;
  connection_id: string;
  status: SyncRunStatus;
  synced: number;
  failed: number;
  skipped: number;
  last_error: string | null;
  started_at: Timestamp | null;
  finished_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

declare module '../../platform/db/schema.js' {
  interface Tables {
    accounting_oauth_states: AccountingOAuthStatesTable;
    accounting_connections: AccountingConnectionsTable;
    accounting_sync_records: AccountingSyncRecordsTable;
    accounting_sync_runs: AccountingSyncRunsTable;
  }
}
