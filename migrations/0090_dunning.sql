-- Dunning (SPEC 2 "Dunning campaign and step", 4.6, 4.14; DESIGN §12; docs/decisions/0090).

CREATE TABLE dunning_campaigns (
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  id uuid NOT NULL,
  name text NOT NULL,
  description text NOT NULL DEFAULT '',
  is_active boolean NOT NULL DEFAULT true,
  trigger_event text NOT NULL DEFAULT 'payment_failed' CHECK (trigger_event IN ('payment_failed', 'invoice_overdue')),
  is_default boolean NOT NULL DEFAULT false,
  payment_wall_enabled boolean NOT NULL DEFAULT false,
  payment_wall_grace_days integer NOT NULL DEFAULT 3 CHECK (payment_wall_grace_days BETWEEN 0 AND 365),
  -- What happens to the invoice's subscription when the last step ran and the invoice is still unpaid.
  exhausted_action text NOT NULL DEFAULT 'mark_unpaid' CHECK (exhausted_action IN ('cancel', 'mark_unpaid', 'nothing')),
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id)
);
-- One default campaign per tenant.
CREATE UNIQUE INDEX dunning_campaigns_one_default ON dunning_campaigns (tenant_id) WHERE is_default;

CREATE TABLE dunning_steps (
  tenant_id uuid NOT NULL,
  id uuid NOT NULL,
  campaign_id uuid NOT NULL,
  step_order integer NOT NULL CHECK (step_order >= 1),
  delay_hours integer NOT NULL CHECK (delay_hours BETWEEN 0 AND 2160),
  channel text NOT NULL CHECK (channel IN ('email', 'sms', 'in_app', 'retry_payment')),
  template_name text NOT NULL DEFAULT '',
  subject text NOT NULL DEFAULT '',
  body text NOT NULL DEFAULT '',
  is_payment_wall boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, campaign_id) REFERENCES dunning_campaigns (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX dunning_steps_campaign ON dunning_steps (tenant_id, campaign_id, step_order);

CREATE TABLE dunning_executions (
  tenant_id uuid NOT NULL,
  id uuid NOT NULL,
  campaign_id uuid NOT NULL,
  invoice_id uuid NOT NULL,
  customer_id uuid NOT NULL,
  trigger_event text NOT NULL CHECK (trigger_event IN ('payment_failed', 'invoice_overdue')),
  status text NOT NULL CHECK (status IN ('active', 'recovered', 'exhausted', 'canceled')),
  -- How many of the campaign's steps (in step_order) have run; the next is the one after.
  steps_done integer NOT NULL DEFAULT 0,
  next_step_at timestamptz,
  -- When the grace period of a payment-wall campaign ends (null: no grace wall).
  wall_at timestamptz,
  payment_wall_active boolean NOT NULL DEFAULT false,
  payment_wall_since timestamptz,
  started_at timestamptz NOT NULL,
  ended_at timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, campaign_id) REFERENCES dunning_campaigns (tenant_id, id),
  FOREIGN KEY (tenant_id, invoice_id) REFERENCES invoices (tenant_id, id),
  CHECK ((status = 'active') = (ended_at IS NULL))
);
-- One execution per unpaid invoice at a time.
CREATE UNIQUE INDEX dunning_executions_one_active ON dunning_executions (tenant_id, invoice_id) WHERE status = 'active';
CREATE INDEX dunning_executions_invoice ON dunning_executions (tenant_id, invoice_id);
CREATE INDEX dunning_executions_customer ON dunning_executions (tenant_id, customer_id) WHERE status = 'active';
-- What the step runner claims.
CREATE INDEX dunning_executions_due ON dunning_executions (next_step_at) WHERE status = 'active';
CREATE INDEX dunning_executions_wall_due ON dunning_executions (wall_at) WHERE status = 'active' AND NOT payment_wall_active;

CREATE TABLE dunning_actions (
  tenant_id uuid NOT NULL,
  id uuid NOT NULL,
  execution_id uuid NOT NULL,
  step_id uuid,
  channel text NOT NULL,
  executed_at timestamptz NOT NULL,
  outcome text NOT NULL CHECK (outcome IN ('succeeded', 'failed', 'skipped')),
  detail text NOT NULL DEFAULT '',
  -- The last action before the execution recovered: what the overview counts as a success.
  led_to_recovery boolean NOT NULL DEFAULT false,
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, execution_id) REFERENCES dunning_executions (tenant_id, id)
);
CREATE INDEX dunning_actions_execution ON dunning_actions (tenant_id, execution_id, executed_at);
CREATE INDEX dunning_actions_executed ON dunning_actions (tenant_id, executed_at);
