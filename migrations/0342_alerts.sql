-- Usage and spend alerts and caps (DESIGN §23, docs/decisions/0341). A trigger row per alert,
-- customer and period makes `alert.triggered` once per period a database fact.
CREATE TABLE alerts (
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  id uuid NOT NULL,
  customer_id uuid NOT NULL,
  subscription_id uuid,
  type text NOT NULL CHECK (type IN ('usage_threshold', 'spend_threshold', 'credit_balance_below')),
  metric_code text,
  currency text,
  threshold bigint NOT NULL CHECK (threshold > 0),
  action text NOT NULL CHECK (action IN ('notify', 'block')),
  recurring boolean NOT NULL DEFAULT true,
  status text NOT NULL CHECK (status IN ('active', 'archived')),
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, customer_id) REFERENCES customers (tenant_id, id),
  CHECK (type <> 'usage_threshold' OR metric_code IS NOT NULL)
);
CREATE INDEX alerts_customer ON alerts (tenant_id, customer_id) WHERE status = 'active';

CREATE TABLE alert_triggers (
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  alert_id uuid NOT NULL,
  period_start timestamptz NOT NULL,
  value bigint NOT NULL,
  triggered_at timestamptz NOT NULL,
  cleared_at timestamptz,
  PRIMARY KEY (tenant_id, alert_id, period_start),
  FOREIGN KEY (tenant_id, alert_id) REFERENCES alerts (tenant_id, id)
);
