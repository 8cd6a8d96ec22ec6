-- Reporting periods of an entity (DESIGN §18, docs/decisions/0260): one row per calendar month in
-- the entity's time zone that has been closed, reopened or filed; a month without a row is open.
CREATE TABLE entity_periods (
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  id uuid NOT NULL,
  entity_id uuid NOT NULL,
  period text NOT NULL CHECK (period ~ '^[0-9]{4}-(0[1-9]|1[0-2])$'),
  status text NOT NULL CHECK (status IN ('open', 'closed')),
  closed_at timestamptz,
  closed_by text,
  reopened_at timestamptz,
  reopened_by text,
  reopen_reason text,
  -- A filed return: when, its ARN, and the figures as filed (answered instead of recomputing).
  gstr1_filed_at timestamptz,
  gstr1_arn text,
  gstr1_return jsonb,
  gstr3b_filed_at timestamptz,
  gstr3b_arn text,
  gstr3b_return jsonb,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id),
  UNIQUE (tenant_id, entity_id, period),
  FOREIGN KEY (tenant_id, entity_id) REFERENCES legal_entities (tenant_id, id)
);
