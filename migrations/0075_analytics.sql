-- Revenue analytics (DESIGN §14, issue "Revenue analytics and organizations").
--
-- MRR history is kept as immutable facts written by the snapshot job, never recomputed from the
-- subscriptions table (which only knows the present):
--   mrr_current   — each subscription's MRR as of the last snapshot (the job's working state);
--   mrr_movements — one row each time a subscription's MRR changed between two snapshots,
--                   classified new / expansion / contraction / churned / reactivated;
--   mrr_daily     — per day and currency, the tenant's total MRR and counts.
-- A past day's rows are never rewritten; today's are refreshed by each run until the day ends.

CREATE TABLE mrr_current (
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  subscription_id uuid NOT NULL,
  customer_id uuid NOT NULL,
  currency char(3) NOT NULL,
  mrr bigint NOT NULL CHECK (mrr >= 0),
  -- Whether the subscription ever had MRR: a later rise from zero is a reactivation, not new.
  ever_positive boolean NOT NULL,
  -- The snapshot day of mrr/ever_positive, and the state at the end of the day before it: a run
  -- later the same day measures its movement from there, so refreshing "today" never doubles it.
  as_of date NOT NULL,
  prior_mrr bigint NOT NULL CHECK (prior_mrr >= 0),
  prior_ever_positive boolean NOT NULL,
  PRIMARY KEY (tenant_id, subscription_id),
  FOREIGN KEY (tenant_id, subscription_id) REFERENCES subscriptions (tenant_id, id)
);

CREATE TABLE mrr_movements (
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  subscription_id uuid NOT NULL,
  customer_id uuid NOT NULL,
  currency char(3) NOT NULL,
  effective_date date NOT NULL,
  kind text NOT NULL CHECK (kind IN ('new', 'expansion', 'contraction', 'churned', 'reactivated')),
  previous_mrr bigint NOT NULL CHECK (previous_mrr >= 0),
  mrr bigint NOT NULL CHECK (mrr >= 0),
  created_at timestamptz NOT NULL,
  -- One movement per subscription per day: a refreshed "today" replaces, never adds.
  PRIMARY KEY (tenant_id, subscription_id, effective_date),
  FOREIGN KEY (tenant_id, subscription_id) REFERENCES subscriptions (tenant_id, id),
  CHECK (previous_mrr <> mrr)
);
-- Covering: the waterfall sums a range of months from the index alone.
CREATE INDEX mrr_movements_by_date ON mrr_movements (tenant_id, currency, effective_date) INCLUDE (kind, previous_mrr, mrr);

CREATE TABLE mrr_daily (
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  snapshot_date date NOT NULL,
  currency char(3) NOT NULL,
  mrr bigint NOT NULL CHECK (mrr >= 0),
  subscriptions integer NOT NULL,
  customers integer NOT NULL,
  taken_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, currency, snapshot_date)
);

-- Organizations group tenants (SPEC 4.13, 4.16). Global tables, like tenants: small, and on Citus
-- reference tables. A tenant belongs to at most one organization (tenants.organization_id).
CREATE TABLE organizations (
  id uuid PRIMARY KEY,
  name text NOT NULL,
  reporting_currency char(3) NOT NULL,
  -- sha256 of the join code a member hands to another tenant so it can attach itself.
  join_code_hash text NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);

ALTER TABLE tenants ADD CONSTRAINT tenants_organization_fk FOREIGN KEY (organization_id) REFERENCES organizations (id);
CREATE INDEX tenants_organization ON tenants (organization_id, created_at, id) WHERE organization_id IS NOT NULL;

-- Units of the reporting currency per one unit of `currency`, in force from `effective_date`.
-- Kept as an exact decimal; amounts are converted with integer arithmetic (analytics/fx.ts).
CREATE TABLE organization_fx_rates (
  organization_id uuid NOT NULL REFERENCES organizations (id),
  currency char(3) NOT NULL,
  effective_date date NOT NULL,
  rate numeric(24, 12) NOT NULL CHECK (rate > 0),
  created_at timestamptz NOT NULL,
  PRIMARY KEY (organization_id, currency, effective_date)
);
