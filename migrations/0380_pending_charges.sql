-- One-off charges waiting for a customer's (or one subscription's) next invoice (DESIGN §24,
-- docs/decisions/0380). A charge is taken once: status moves pending → invoiced with the invoice's
-- id in the invoice's own transaction; a pending one may be deleted (the row goes).
CREATE TABLE pending_charges (
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  id uuid NOT NULL,
  customer_id uuid NOT NULL,
  subscription_id uuid,
  description text NOT NULL,
  currency text NOT NULL,
  unit_amount bigint NOT NULL CHECK (unit_amount > 0),
  quantity integer NOT NULL CHECK (quantity > 0),
  hsn_code text NOT NULL,
  tax_rate_bp integer CHECK (tax_rate_bp BETWEEN 0 AND 10000),
  status text NOT NULL CHECK (status IN ('pending', 'invoiced')),
  invoice_id uuid,
  created_at timestamptz NOT NULL,
  invoiced_at timestamptz,
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, customer_id) REFERENCES customers (tenant_id, id),
  CHECK ((status = 'invoiced') = (invoice_id IS NOT NULL))
);
CREATE INDEX pending_charges_waiting ON pending_charges (tenant_id, customer_id, currency) WHERE status = 'pending';
