-- Entitlements (DESIGN §23, docs/decisions/0341): features, what each plan grants, per-subscription
-- overrides, and an append-only change log whose newest id per tenant is the version an
-- in-memory cache checks (works on PostgreSQL and PGlite, across processes).
CREATE TABLE features (
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  id uuid NOT NULL,
  key text NOT NULL,
  name text NOT NULL,
  type text NOT NULL CHECK (type IN ('boolean', 'quantity', 'enum')),
  "values" jsonb,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id),
  UNIQUE (tenant_id, key)
);

CREATE TABLE plan_entitlements (
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  plan_id uuid NOT NULL,
  feature_id uuid NOT NULL,
  value jsonb NOT NULL,
  PRIMARY KEY (tenant_id, plan_id, feature_id),
  FOREIGN KEY (tenant_id, plan_id) REFERENCES plans (tenant_id, id),
  FOREIGN KEY (tenant_id, feature_id) REFERENCES features (tenant_id, id)
);

CREATE TABLE subscription_entitlements (
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  subscription_id uuid NOT NULL,
  feature_id uuid NOT NULL,
  value jsonb NOT NULL,
  PRIMARY KEY (tenant_id, subscription_id, feature_id),
  FOREIGN KEY (tenant_id, feature_id) REFERENCES features (tenant_id, id)
);

CREATE TABLE entitlement_changes (
  tenant_id uuid NOT NULL,
  id bigserial NOT NULL,
  changed_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id)
);
