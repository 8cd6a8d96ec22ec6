-- Test clocks (DESIGN §24, docs/decisions/0440): a simulated "now" for the customers created on
-- it, in test mode. Advancing a clock runs the worker's own sweeps and jobs at the clock's
-- instants, scoped to its customers; the real worker leaves those customers and their jobs alone.
-- Additive: new table, nullable columns, partial indexes on rows that only test clocks create.
CREATE TABLE test_clocks (
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  id uuid NOT NULL,
  name text,
  frozen_time timestamptz NOT NULL,
  status text NOT NULL CHECK (status IN ('ready', 'advancing', 'internal_failure')),
  -- Where the advance in progress is going (null when ready).
  advancing_to timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id)
);
CREATE INDEX test_clocks_created ON test_clocks (tenant_id, created_at DESC, id DESC);

ALTER TABLE customers ADD COLUMN test_clock_id uuid;
CREATE INDEX customers_on_test_clock ON customers (tenant_id, test_clock_id, id) WHERE test_clock_id IS NOT NULL;
-- The sweeps leave the customers of every clock out: a probe by (tenant, customer) on this index.
CREATE INDEX customers_with_test_clock ON customers (tenant_id, id) WHERE test_clock_id IS NOT NULL;

ALTER TABLE jobs ADD COLUMN test_clock_id uuid;
CREATE INDEX jobs_due_on_test_clock ON jobs (test_clock_id, priority, run_at) WHERE state = 'pending' AND test_clock_id IS NOT NULL;
