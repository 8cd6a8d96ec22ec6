-- Auto top-up of prepaid credit (DESIGN §23, docs/decisions/0340): one setting per customer; while
-- a top-up invoice is open (in_flight_invoice_id) no other is created for the customer.
CREATE TABLE auto_top_ups (
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  customer_id uuid NOT NULL,
  enabled boolean NOT NULL,
  currency text NOT NULL,
  threshold bigint NOT NULL CHECK (threshold > 0),
  amount bigint NOT NULL CHECK (amount > 0),
  payment_method_id uuid,
  in_flight_invoice_id uuid,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, customer_id),
  FOREIGN KEY (tenant_id, customer_id) REFERENCES customers (tenant_id, id)
);
