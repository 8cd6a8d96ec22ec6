-- Usage-based prices (DESIGN §13): billable metrics, usage events, tiered / metered / package prices.
--
-- usage_events is the one large table. Its primary key (tenant_id, transaction_id) is the
-- deduplication (a repeat is skipped by ON CONFLICT DO NOTHING) and its distribution column is
-- tenant_id, so it can become a Citus distributed table colocated with customers and
-- subscriptions (decision 0100). It carries no foreign keys: ingestion resolves the customer and
-- the metric in the same batch first, and a per-row FK check would double the cost of the insert.

CREATE TABLE billable_metrics (
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  id uuid NOT NULL,
  code text NOT NULL,
  name text NOT NULL,
  aggregation text NOT NULL CHECK (aggregation IN ('count', 'sum', 'max', 'unique_count', 'latest')),
  field text,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id),
  UNIQUE (tenant_id, code),
  CHECK (aggregation = 'count' OR field IS NOT NULL)
);

CREATE INDEX billable_metrics_tenant_created ON billable_metrics (tenant_id, created_at DESC, id DESC);

CREATE TABLE usage_events (
  tenant_id uuid NOT NULL,
  transaction_id text NOT NULL,
  customer_id uuid NOT NULL,
  metric_id uuid NOT NULL,
  ts timestamptz NOT NULL,
  -- properties.<field> as a number (sum, max, latest) or as text (unique_count), read at ingestion
  value numeric,
  value_key text,
  properties jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, transaction_id)
);

-- The period aggregation: one customer's events of one metric in [start, end).
CREATE INDEX usage_events_aggregation ON usage_events (tenant_id, customer_id, metric_id, ts) INCLUDE (value);

-- external_customer_id on an event is looked up here.
CREATE INDEX customers_external_id ON customers (tenant_id, external_id) WHERE external_id IS NOT NULL;

-- Prices: a plan may now carry, per currency, one fixed price (per_unit or tiered) and metered
-- prices (one per metric). Tiered prices have no single unit amount (stored 0).
ALTER TABLE prices DROP CONSTRAINT IF EXISTS prices_tenant_id_plan_id_currency_key;
ALTER TABLE prices DROP CONSTRAINT IF EXISTS prices_amount_check;
ALTER TABLE prices ADD COLUMN tiers_mode text CHECK (tiers_mode IN ('graduated', 'volume'));
ALTER TABLE prices ADD COLUMN tiers jsonb;
ALTER TABLE prices ADD COLUMN package_size bigint CHECK (package_size >= 1);
ALTER TABLE prices ADD COLUMN metric_code text;
-- A price's own HSN/SAC code for its invoice lines (a usage line may be another service than the plan's fee); null: the plan's.
ALTER TABLE prices ADD COLUMN hsn_code text;
ALTER TABLE prices ADD CONSTRAINT prices_amount_check CHECK (amount > 0 OR (tiers IS NOT NULL AND amount = 0));
ALTER TABLE prices ADD CONSTRAINT prices_metric_fkey FOREIGN KEY (tenant_id, metric_code) REFERENCES billable_metrics (tenant_id, code);
ALTER TABLE prices ADD CONSTRAINT prices_metered_check CHECK ((billing_scheme = 'metered') = (metric_code IS NOT NULL));
CREATE INDEX prices_plan ON prices (tenant_id, plan_id);
