-- Subscriptions (DESIGN §10, SPEC §2 "Subscription", SPEC §3 states) and the billing run's
-- exactly-once key. docs/subscriptions.md explains the columns and the period rule.

CREATE TABLE subscriptions (
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  id uuid NOT NULL,
  customer_id uuid NOT NULL,
  plan_id uuid NOT NULL,
  currency char(3) NOT NULL,
  quantity integer NOT NULL DEFAULT 1 CHECK (quantity BETWEEN 1 AND 1000000),
  status text NOT NULL CHECK (status IN ('active', 'trialing', 'paused', 'canceled', 'past_due', 'unpaid')),
  -- The plan's interval, kept with the schedule it generates (a plan change may reset both).
  interval_unit text NOT NULL CHECK (interval_unit IN ('day', 'week', 'month', 'year')),
  interval_count integer NOT NULL CHECK (interval_count >= 1),
  -- Period n is [boundary(n), boundary(n + 1)) with boundary(n) = billing_anchor + n × interval,
  -- always computed from the anchor so month-end clamps never drift. Index -1 is a period that
  -- ends at the anchor and whose bounds are stored as given: a trial, an imported or gifted period.
  billing_anchor timestamptz NOT NULL,
  period_index integer NOT NULL CHECK (period_index >= -1),
  current_period_start timestamptz NOT NULL,
  current_period_end timestamptz NOT NULL,
  cancel_at_period_end boolean NOT NULL DEFAULT false,
  trial_start timestamptz,
  trial_end timestamptz,
  canceled_at timestamptz,
  paused_at timestamptz,
  ended_at timestamptz,
  gift_code text,
  gifted_by uuid,
  external_id text,
  latest_invoice_id uuid,
  metadata jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, customer_id) REFERENCES customers (tenant_id, id),
  FOREIGN KEY (tenant_id, plan_id) REFERENCES plans (tenant_id, id),
  FOREIGN KEY (tenant_id, gifted_by) REFERENCES customers (tenant_id, id),
  FOREIGN KEY (tenant_id, latest_invoice_id) REFERENCES invoices (tenant_id, id),
  CHECK (current_period_end > current_period_start),
  CHECK (period_index >= 0 OR billing_anchor = current_period_end),
  CHECK (status <> 'canceled' OR ended_at IS NOT NULL)
);
CREATE INDEX subscriptions_tenant_created ON subscriptions (tenant_id, created_at DESC, id DESC);
CREATE INDEX subscriptions_customer ON subscriptions (tenant_id, customer_id);
-- What the billing run claims: renewable subscriptions by the end of their period.
CREATE INDEX subscriptions_due ON subscriptions (tenant_id, current_period_end)
  WHERE status IN ('active', 'trialing', 'past_due', 'unpaid');
-- Which tenants have something due (the run's only cross-tenant read).
CREATE INDEX subscriptions_due_any ON subscriptions (current_period_end)
  WHERE status IN ('active', 'trialing', 'past_due', 'unpaid');
CREATE INDEX subscriptions_delinquent ON subscriptions (tenant_id) WHERE status IN ('past_due', 'unpaid');
-- The importer matches by the source system's id; a gift code makes one subscription.
CREATE UNIQUE INDEX subscriptions_external_id ON subscriptions (tenant_id, external_id) WHERE external_id IS NOT NULL;
CREATE UNIQUE INDEX subscriptions_gift_code ON subscriptions (tenant_id, gift_code) WHERE gift_code IS NOT NULL;

-- Invoices name their subscription for real.
ALTER TABLE invoices
  ADD CONSTRAINT invoices_subscription_fk FOREIGN KEY (tenant_id, subscription_id) REFERENCES subscriptions (tenant_id, id);

-- Exactly once per (subscription, period): a second invoice for the same period start is refused
-- by the database, whatever the code does (two workers, a crash and a retry, a replayed job).
-- Plan-change invoices (subscription_update) cover part of a period and are outside this rule.
CREATE UNIQUE INDEX invoices_subscription_period ON invoices (tenant_id, subscription_id, period_start)
  WHERE subscription_id IS NOT NULL AND period_start IS NOT NULL
    AND billing_reason IN ('subscription_create', 'subscription_cycle');
-- The run's delinquency check: a subscription's unsettled invoices.
CREATE INDEX invoices_subscription_unsettled ON invoices (tenant_id, subscription_id)
  WHERE subscription_id IS NOT NULL AND status IN ('open', 'uncollectible');
