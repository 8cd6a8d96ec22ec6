-- Customer notifications: e-mail template overrides, per-tenant switches, a log that makes each
-- notification once, SMS provider connections; and why a dunning retry runs when it does
-- (docs/decisions/0130-notifications.md, 0131-smart-retry-timing.md).

-- A tenant's own version of a template shipped in templates/email/ (absent: the default).
CREATE TABLE email_templates (
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  name text NOT NULL,
  subject text NOT NULL,
  html text NOT NULL,
  -- Null: the text part is made from the HTML.
  text text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, name)
);

-- Which customer notifications a tenant sends (absent: off).
CREATE TABLE notification_settings (
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  notification text NOT NULL,
  enabled boolean NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, notification)
);

-- One row per notification made (or deliberately not made): the unique key is what makes a
-- rerun of the job a no-op.
CREATE TABLE notifications (
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  id uuid NOT NULL,
  notification text NOT NULL,
  -- The event id, or for scheduled notices what they are about (trial_ending:<subscription>:<trial end>).
  dedupe_key text NOT NULL,
  customer_id uuid,
  channel text NOT NULL CHECK (channel IN ('email', 'sms')),
  status text NOT NULL CHECK (status IN ('queued', 'skipped')),
  recipient text,
  detail text NOT NULL DEFAULT '',
  created_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id),
  UNIQUE (tenant_id, notification, dedupe_key)
);
CREATE INDEX notifications_created ON notifications (tenant_id, created_at);

-- A tenant's SMS provider (one at a time); the credentials are sealed with the secret box.
CREATE TABLE sms_connections (
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  id uuid NOT NULL,
  provider text NOT NULL CHECK (provider IN ('twilio')),
  sender text NOT NULL,
  credentials_sealed text NOT NULL,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id)
);
CREATE UNIQUE INDEX sms_connections_one_per_tenant ON sms_connections (tenant_id);

-- Why the execution's next step runs at next_step_at (smart retry timing records its reason).
ALTER TABLE dunning_executions ADD COLUMN next_step_reason text NOT NULL DEFAULT '';
