-- Finance back office: the secondary ledger (TigerBeetle's data model), its feed, reconciliation
-- runs and revenue-recognition schedules. docs/decisions/0080-secondary-ledger.md has the mapping.

-- Journal entries committed but not yet written to the secondary ledger. postEntries inserts one
-- row per entry in the posting transaction; the feed job deletes the rows it has written.
CREATE TABLE tb_outbox (
  tenant_id uuid NOT NULL,
  entry_id uuid NOT NULL,
  PRIMARY KEY (tenant_id, entry_id)
);
-- Entries posted before the secondary ledger existed are fed like new ones.
INSERT INTO tb_outbox (tenant_id, entry_id) SELECT tenant_id, id FROM journal_entries;

-- Accounts as TigerBeetle keeps them: one per (ledger, code); ledger encodes entity × currency.
CREATE TABLE tb_accounts (
  tenant_id uuid NOT NULL,
  id uuid NOT NULL,
  ledger bigint NOT NULL CHECK (ledger > 0 AND ledger < 4294967296),
  code integer NOT NULL CHECK (code > 0 AND code < 65536),
  flags integer NOT NULL DEFAULT 0,
  debits_posted bigint NOT NULL DEFAULT 0 CHECK (debits_posted >= 0),
  credits_posted bigint NOT NULL DEFAULT 0 CHECK (credits_posted >= 0),
  user_data_128 uuid,
  user_data_64 bigint NOT NULL DEFAULT 0,
  user_data_32 bigint NOT NULL DEFAULT 0,
  entity_id uuid NOT NULL,
  currency char(3) NOT NULL,
  timestamp timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id),
  UNIQUE (tenant_id, ledger, code)
);

-- Immutable transfers. id is the journal line's id (u128); user_data_128 the journal entry's id.
CREATE TABLE tb_transfers (
  tenant_id uuid NOT NULL,
  id uuid NOT NULL,
  debit_account_id uuid NOT NULL,
  credit_account_id uuid NOT NULL,
  amount bigint NOT NULL CHECK (amount > 0),
  ledger bigint NOT NULL,
  code integer NOT NULL CHECK (code > 0 AND code < 65536),
  flags integer NOT NULL DEFAULT 0,
  user_data_128 uuid NOT NULL,
  user_data_64 bigint NOT NULL DEFAULT 0,
  user_data_32 bigint NOT NULL DEFAULT 0,
  timestamp timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id)
);
CREATE INDEX tb_transfers_entry ON tb_transfers (tenant_id, user_data_128);

CREATE FUNCTION kosh_refuse_transfer_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'secondary-ledger transfers are immutable: % refused', TG_OP USING ERRCODE = '42501';
END $$;
CREATE TRIGGER tb_transfers_immutable BEFORE UPDATE OR DELETE ON tb_transfers
  FOR EACH ROW EXECUTE FUNCTION kosh_refuse_transfer_change();

CREATE TABLE reconciliation_runs (
  tenant_id uuid NOT NULL,
  id uuid NOT NULL,
  entity_id uuid,
  -- entity_id, or the nil uuid for a run over every entity: at most one running run per scope.
  scope uuid NOT NULL,
  status text NOT NULL CHECK (status IN ('running', 'completed', 'failed')),
  run_by uuid,
  started_at timestamptz NOT NULL,
  completed_at timestamptz,
  invoices_checked bigint NOT NULL DEFAULT 0,
  paid_invoices_checked bigint NOT NULL DEFAULT 0,
  payments_checked bigint NOT NULL DEFAULT 0,
  credit_notes_checked bigint NOT NULL DEFAULT 0,
  journal_entries_checked bigint NOT NULL DEFAULT 0,
  tb_compared boolean NOT NULL DEFAULT false,
  tb_accounts_checked bigint NOT NULL DEFAULT 0,
  tb_transfers_checked bigint NOT NULL DEFAULT 0,
  total_discrepancies bigint NOT NULL DEFAULT 0,
  discrepancies_truncated boolean NOT NULL DEFAULT false,
  failure text,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, entity_id) REFERENCES legal_entities (tenant_id, id)
);
CREATE UNIQUE INDEX reconciliation_runs_one_running ON reconciliation_runs (tenant_id, scope) WHERE status = 'running';
CREATE INDEX reconciliation_runs_recent ON reconciliation_runs (tenant_id, started_at DESC, id DESC);

CREATE TABLE reconciliation_discrepancies (
  tenant_id uuid NOT NULL,
  run_id uuid NOT NULL,
  position integer NOT NULL,
  type text NOT NULL,
  invoice_id uuid,
  transaction_id uuid,
  reference_id uuid,
  account_code integer NOT NULL DEFAULT 0,
  currency char(3),
  expected_amount bigint NOT NULL DEFAULT 0,
  found_amount bigint NOT NULL DEFAULT 0,
  detail text NOT NULL DEFAULT '',
  PRIMARY KEY (tenant_id, run_id, position),
  FOREIGN KEY (tenant_id, run_id) REFERENCES reconciliation_runs (tenant_id, id)
);

-- Revenue recognition: one schedule per invoice line with a service period.
CREATE TABLE revenue_schedules (
  tenant_id uuid NOT NULL,
  id uuid NOT NULL,
  invoice_id uuid NOT NULL,
  invoice_line_id uuid NOT NULL,
  subscription_id uuid,
  customer_id uuid NOT NULL,
  entity_id uuid NOT NULL,
  ledger_id integer NOT NULL,
  currency char(3) NOT NULL,
  period_start timestamptz NOT NULL,
  total_days integer NOT NULL CHECK (total_days >= 1),
  -- What is to be recognized in all (deferred at finalization, less adjustments).
  amount bigint NOT NULL CHECK (amount >= 0),
  recognized bigint NOT NULL DEFAULT 0 CHECK (recognized >= 0),
  recognized_days integer NOT NULL DEFAULT 0,
  -- After an adjustment the rest is spread from base_day over the remaining days.
  base_recognized bigint NOT NULL DEFAULT 0,
  base_day integer NOT NULL DEFAULT 0,
  status text NOT NULL CHECK (status IN ('active', 'completed')),
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id),
  UNIQUE (tenant_id, invoice_line_id),
  FOREIGN KEY (tenant_id, invoice_id) REFERENCES invoices (tenant_id, id),
  CHECK (recognized <= amount)
);
CREATE INDEX revenue_schedules_active ON revenue_schedules (tenant_id, id) WHERE status = 'active';
CREATE INDEX revenue_schedules_invoice ON revenue_schedules (tenant_id, invoice_id);
CREATE INDEX revenue_schedules_subscription ON revenue_schedules (tenant_id, subscription_id) WHERE subscription_id IS NOT NULL;

-- Reports read the journal by date.
CREATE INDEX journal_entries_posted ON journal_entries (tenant_id, posted_at, id);
