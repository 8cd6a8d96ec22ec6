-- Accounting integrations (DESIGN §16): OAuth connections to QuickBooks Online, Xero and Zoho
-- Books, the single-use authorization states of the connect flow, the map of Kosh records to the
-- provider's ids, and sync runs. Tokens are stored sealed (AES-256-GCM, platform/secrets).

-- One row per started connect flow. The browser's callback carries `<tenant id>.<random>` as the
-- OAuth state; only the SHA-256 of the random part is stored, and the row is consumed once.
CREATE TABLE accounting_oauth_states (
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  id uuid NOT NULL,
  provider text NOT NULL CHECK (provider IN ('quickbooks', 'xero', 'zoho_books')),
  state_hash text NOT NULL,
  code_verifier_sealed text NOT NULL,
  redirect_uri text NOT NULL,
  client_state text,
  expires_at timestamptz NOT NULL,
  used_at timestamptz,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id),
  UNIQUE (tenant_id, state_hash)
);
CREATE INDEX accounting_oauth_states_expiry ON accounting_oauth_states (expires_at);

CREATE TABLE accounting_connections (
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  id uuid NOT NULL,
  provider text NOT NULL CHECK (provider IN ('quickbooks', 'xero', 'zoho_books')),
  status text NOT NULL CHECK (status IN ('active', 'reconnect_required', 'error')),
  -- The provider's company: QuickBooks realmId, Xero tenantId, Zoho Books organization_id.
  external_tenant_id text NOT NULL,
  external_tenant_name text,
  tokens_sealed text NOT NULL,
  access_expires_at timestamptz NOT NULL,
  -- Bumped by every refresh: a worker refreshes only the version it read.
  token_version integer NOT NULL DEFAULT 0,
  -- The refresh lease: one worker at a time calls the token endpoint (decision 0065).
  refresh_lease_until timestamptz,
  -- The sync lease: one sync run at a time per connection, so two never create the same record.
  sync_lease_until timestamptz,
  tax_mapping jsonb NOT NULL DEFAULT '{}',
  last_error text,
  last_synced_at timestamptz,
  connected_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id)
);
CREATE INDEX accounting_connections_tenant ON accounting_connections (tenant_id, created_at DESC, id DESC);

-- The external-id map and per-record sync status: one row per (connection, record).
CREATE TABLE accounting_sync_records (
  tenant_id uuid NOT NULL,
  id uuid NOT NULL,
  connection_id uuid NOT NULL,
  record_type text NOT NULL CHECK (record_type IN ('customer', 'invoice', 'payment', 'payment_tds', 'credit_note')),
  record_id uuid NOT NULL,
  external_id text,
  -- QuickBooks SyncToken; other providers' version marks when they have one.
  external_version text,
  payload_hash text,
  status text NOT NULL CHECK (status IN ('pending', 'synced', 'failed')),
  last_error text,
  attempts integer NOT NULL DEFAULT 0,
  synced_at timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id),
  UNIQUE (tenant_id, connection_id, record_type, record_id),
  FOREIGN KEY (tenant_id, connection_id) REFERENCES accounting_connections (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX accounting_sync_records_status ON accounting_sync_records (tenant_id, connection_id, status, updated_at DESC);

CREATE TABLE accounting_sync_runs (
  tenant_id uuid NOT NULL,
  id uuid NOT NULL,
  connection_id uuid NOT NULL,
  status text NOT NULL CHECK (status IN ('queued', 'running', 'rate_limited', 'succeeded', 'failed', 'paused')),
  synced integer NOT NULL DEFAULT 0,
  failed integer NOT NULL DEFAULT 0,
  skipped integer NOT NULL DEFAULT 0,
  last_error text,
  started_at timestamptz,
  finished_at timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, connection_id) REFERENCES accounting_connections (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX accounting_sync_runs_connection ON accounting_sync_runs (tenant_id, connection_id, created_at DESC);
