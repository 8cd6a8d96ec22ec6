-- Foundation: tenants, API keys, settings, legal entities, plans, prices, customers,
-- idempotency records, the jobs queue and the event outbox.
--
-- Citus rules (DESIGN §2), from the first table: every tenant-owned table has tenant_id NOT NULL,
-- its primary key is (tenant_id, id), and every unique constraint and foreign key includes
-- tenant_id. Global tables (tenants, api_keys, jobs) are small lookup/system tables that may
-- become reference or coordinator-local tables. test/platform/citus-rules.test.ts enforces this.

CREATE TABLE tenants (
  id uuid PRIMARY KEY,
  name text NOT NULL,
  email text NOT NULL,
  data_region text NOT NULL DEFAULT 'in',
  base_currency char(3) NOT NULL DEFAULT 'INR',
  country_code char(2) NOT NULL DEFAULT 'IN',
  organization_id uuid,
  mode text NOT NULL CHECK (mode IN ('test', 'live')),
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);

CREATE TABLE api_keys (
  id uuid PRIMARY KEY,
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  name text NOT NULL DEFAULT '',
  mode text NOT NULL CHECK (mode IN ('test', 'live')),
  prefix text NOT NULL,
  key_hash text NOT NULL UNIQUE,
  created_at timestamptz NOT NULL,
  last_used_at timestamptz,
  revoked_at timestamptz
);
CREATE INDEX api_keys_tenant ON api_keys (tenant_id, created_at);

CREATE TABLE tenant_settings (
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  sac_code text,
  credit_note_approval_required boolean NOT NULL DEFAULT false,
  referral_window_days integer NOT NULL DEFAULT 30 CHECK (referral_window_days BETWEEN 1 AND 3650),
  referral_reward_amount bigint NOT NULL DEFAULT 0 CHECK (referral_reward_amount >= 0),
  invoice_due_days integer NOT NULL DEFAULT 30 CHECK (invoice_due_days BETWEEN 0 AND 365),
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id)
);

CREATE TABLE legal_entities (
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  id uuid NOT NULL,
  name text NOT NULL,
  legal_name text NOT NULL,
  is_primary boolean NOT NULL DEFAULT false,
  tb_ledger_id integer NOT NULL CHECK (tb_ledger_id >= 1),
  invoice_prefix text NOT NULL,
  country_code char(2) NOT NULL DEFAULT 'IN',
  state_code text,
  gstin text,
  address jsonb,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id),
  UNIQUE (tenant_id, tb_ledger_id),
  UNIQUE (tenant_id, invoice_prefix)
);
-- Exactly one primary entity per tenant.
CREATE UNIQUE INDEX legal_entities_one_primary ON legal_entities (tenant_id) WHERE is_primary;

CREATE TABLE plans (
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  id uuid NOT NULL,
  name text NOT NULL,
  code text NOT NULL,
  description text,
  interval_unit text NOT NULL CHECK (interval_unit IN ('day', 'week', 'month', 'year')),
  interval_count integer NOT NULL CHECK (interval_count >= 1),
  trial_days integer NOT NULL DEFAULT 0 CHECK (trial_days >= 0),
  active boolean NOT NULL DEFAULT true,
  hsn_code text NOT NULL DEFAULT '',
  features jsonb NOT NULL DEFAULT '[]',
  metadata jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id),
  UNIQUE (tenant_id, code)
);
CREATE INDEX plans_tenant_created ON plans (tenant_id, created_at DESC, id DESC);

CREATE TABLE prices (
  tenant_id uuid NOT NULL,
  id uuid NOT NULL,
  plan_id uuid NOT NULL,
  currency char(3) NOT NULL,
  amount bigint NOT NULL CHECK (amount > 0),
  type text NOT NULL DEFAULT 'recurring',
  billing_scheme text NOT NULL DEFAULT 'per_unit' CHECK (billing_scheme IN ('per_unit', 'tiered', 'metered')),
  created_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id),
  UNIQUE (tenant_id, plan_id, currency),
  FOREIGN KEY (tenant_id, plan_id) REFERENCES plans (tenant_id, id)
);

CREATE TABLE customers (
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  id uuid NOT NULL,
  email text NOT NULL,
  name text,
  external_id text,
  phone text,
  gstin text,
  billing_address jsonb,
  metadata jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id)
);
-- E-mail is unique per tenant, case-insensitively.
CREATE UNIQUE INDEX customers_tenant_email ON customers (tenant_id, lower(email));
CREATE INDEX customers_tenant_created ON customers (tenant_id, created_at DESC, id DESC);

CREATE TABLE idempotency_keys (
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  key text NOT NULL,
  fingerprint text NOT NULL,
  status_code integer NOT NULL,
  response jsonb NOT NULL,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, key)
);
CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);

-- The outbox of business events: written in the same transaction as the change it describes.
CREATE TABLE events (
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  id uuid NOT NULL,
  type text NOT NULL,
  object_type text NOT NULL,
  object_id uuid,
  payload jsonb NOT NULL,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id)
);
CREATE INDEX events_tenant_created ON events (tenant_id, created_at DESC, id DESC);
CREATE INDEX events_tenant_type ON events (tenant_id, type, created_at DESC);

-- Background work. Enqueued inside business transactions; claimed with FOR UPDATE SKIP LOCKED.
CREATE TABLE jobs (
  id uuid PRIMARY KEY,
  tenant_id uuid,
  kind text NOT NULL,
  payload jsonb NOT NULL DEFAULT '{}',
  state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'running', 'done', 'dead')),
  attempts integer NOT NULL DEFAULT 0,
  max_attempts integer NOT NULL DEFAULT 8 CHECK (max_attempts >= 1),
  run_at timestamptz NOT NULL,
  locked_until timestamptz,
  last_error text,
  unique_key text UNIQUE,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX jobs_due ON jobs (run_at) WHERE state = 'pending';
CREATE INDEX jobs_running ON jobs (locked_until) WHERE state = 'running';
