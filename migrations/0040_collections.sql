-- Collections (DESIGN §11): gateway connections, saved payment methods, payment attempts,
-- hosted checkout sessions, inbound gateway events and refunds.

CREATE TABLE gateway_connections (
  tenant_id uuid NOT NULL,
  id uuid NOT NULL,
  provider text NOT NULL CHECK (provider IN ('test', 'razorpay', 'stripe')),
  -- AES-256-GCM under KOSH_SECRET_KEY (platform/secrets), aad tenant:<id>:gateway:<id>.
  credentials_sealed text NOT NULL,
  currencies jsonb NOT NULL DEFAULT '[]',
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id)
);

CREATE TABLE payment_methods (
  tenant_id uuid NOT NULL,
  id uuid NOT NULL,
  customer_id uuid NOT NULL,
  type text NOT NULL CHECK (type IN ('card', 'upi_mandate')),
  brand text,
  last4 text,
  gateway text NOT NULL,
  connection_id uuid,
  reference text NOT NULL,
  gateway_customer_id text,
  requires_pre_debit_notice boolean NOT NULL DEFAULT false,
  is_default boolean NOT NULL DEFAULT false,
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'detached', 'revoked')),
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, customer_id) REFERENCES customers (tenant_id, id)
);
CREATE INDEX payment_methods_customer ON payment_methods (tenant_id, customer_id) WHERE status = 'active';
-- One default per customer, a database fact.
CREATE UNIQUE INDEX payment_methods_one_default ON payment_methods (tenant_id, customer_id) WHERE is_default AND status = 'active';

ALTER TABLE invoices
  ADD COLUMN collection_method text NOT NULL DEFAULT 'send_invoice' CHECK (collection_method IN ('send_invoice', 'charge_automatically')),
  ADD COLUMN last_payment_error jsonb;
ALTER TABLE subscriptions
  ADD COLUMN collection_method text NOT NULL DEFAULT 'send_invoice' CHECK (collection_method IN ('send_invoice', 'charge_automatically'));

ALTER TABLE payments DROP CONSTRAINT payments_payment_type_check;
ALTER TABLE payments ADD CONSTRAINT payments_payment_type_check CHECK (payment_type IN ('bank_transfer', 'cash', 'cheque', 'card', 'upi'));
ALTER TABLE payments
  ADD COLUMN gateway text,
  ADD COLUMN gateway_payment_id text,
  ADD COLUMN attempt_id uuid,
  ADD COLUMN amount_refunded bigint NOT NULL DEFAULT 0,
  ADD COLUMN settled_at timestamptz;
ALTER TABLE payments ADD CONSTRAINT payments_refund_within CHECK (amount_refunded >= 0 AND amount_refunded <= amount);
-- One payment per attempt, however often its outcome is applied.
CREATE UNIQUE INDEX payments_attempt ON payments (tenant_id, attempt_id) WHERE attempt_id IS NOT NULL;
CREATE INDEX payments_unsettled ON payments (tenant_id, created_at) WHERE gateway IS NOT NULL AND settled_at IS NULL;

CREATE TABLE payment_attempts (
  tenant_id uuid NOT NULL,
  id uuid NOT NULL,
  invoice_id uuid NOT NULL,
  customer_id uuid NOT NULL,
  payment_method_id uuid,
  checkout_session_id uuid,
  gateway text NOT NULL,
  connection_id uuid,
  amount bigint NOT NULL CHECK (amount > 0),
  currency char(3) NOT NULL,
  status text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
  -- pending attempts: why they wait (charging, notice: the mandate pre-debit notice, gateway: the
  -- provider has not answered finally, unknown: nobody knows whether money moved).
  pending_reason text,
  charge_after timestamptz,
  gateway_payment_id text,
  failure_code text,
  failure_message text,
  payment_id uuid,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, invoice_id) REFERENCES invoices (tenant_id, id),
  FOREIGN KEY (tenant_id, customer_id) REFERENCES customers (tenant_id, id)
);
-- At most one attempt in flight per invoice: concurrent /pay calls cannot both charge.
CREATE UNIQUE INDEX payment_attempts_one_pending ON payment_attempts (tenant_id, invoice_id) WHERE status = 'pending';
CREATE INDEX payment_attempts_invoice ON payment_attempts (tenant_id, invoice_id, created_at);
CREATE INDEX payment_attempts_gateway_payment ON payment_attempts (tenant_id, gateway_payment_id) WHERE gateway_payment_id IS NOT NULL;

CREATE TABLE checkout_sessions (
  tenant_id uuid NOT NULL,
  id uuid NOT NULL,
  invoice_id uuid NOT NULL,
  token text NOT NULL,
  gateway text NOT NULL,
  connection_id uuid,
  status text NOT NULL CHECK (status IN ('open', 'complete', 'expired')),
  gateway_reference text,
  redirect_url text,
  expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, invoice_id) REFERENCES invoices (tenant_id, id)
);
CREATE UNIQUE INDEX checkout_sessions_token ON checkout_sessions (tenant_id, token);

CREATE TABLE gateway_events (
  tenant_id uuid NOT NULL,
  id uuid NOT NULL,
  connection_id uuid NOT NULL,
  provider text NOT NULL,
  event_id text NOT NULL,
  type text NOT NULL,
  received_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id)
);
CREATE UNIQUE INDEX gateway_events_dedup ON gateway_events (tenant_id, connection_id, event_id);

CREATE TABLE refunds (
  tenant_id uuid NOT NULL,
  id uuid NOT NULL,
  payment_id uuid NOT NULL,
  invoice_id uuid NOT NULL,
  credit_note_id uuid NOT NULL,
  amount bigint NOT NULL CHECK (amount > 0),
  currency char(3) NOT NULL,
  status text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
  reason text NOT NULL,
  gateway text,
  connection_id uuid,
  gateway_refund_id text,
  failure_code text,
  failure_message text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, payment_id) REFERENCES payments (tenant_id, id),
  FOREIGN KEY (tenant_id, credit_note_id) REFERENCES credit_notes (tenant_id, id)
);
CREATE INDEX refunds_payment ON refunds (tenant_id, payment_id);
-- Inbound gateway webhooks name the connection, not the tenant: find it by id.
CREATE INDEX gateway_connections_id ON gateway_connections (id);
