-- Prepaid credit grants (DESIGN §23, docs/decisions/0340). A paid grant is sold through a tax
-- invoice (invoice_id) and becomes spendable when that invoice is paid; its tax columns hold the
-- GST charged on the top-up, adjusted share by share as it is drawn so the output tax is never
-- charged again. A promotional grant is a discount taken off invoice lines before GST.
CREATE TABLE credit_grants (
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  id uuid NOT NULL,
  customer_id uuid NOT NULL,
  entity_id uuid NOT NULL,
  category text NOT NULL CHECK (category IN ('paid', 'promotional')),
  status text NOT NULL CHECK (status IN ('pending', 'active', 'depleted', 'expired', 'voided')),
  name text,
  currency text NOT NULL,
  amount bigint NOT NULL CHECK (amount > 0),
  remaining bigint NOT NULL CHECK (remaining >= 0 AND remaining <= amount),
  cgst_amount bigint NOT NULL DEFAULT 0,
  sgst_amount bigint NOT NULL DEFAULT 0,
  igst_amount bigint NOT NULL DEFAULT 0,
  priority integer NOT NULL DEFAULT 50,
  expires_at timestamptz,
  applies_to jsonb,
  invoice_id uuid,
  voided_at timestamptz,
  expired_at timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, customer_id) REFERENCES customers (tenant_id, id),
  FOREIGN KEY (tenant_id, invoice_id) REFERENCES invoices (tenant_id, id),
  CHECK (category = 'paid' OR (invoice_id IS NULL AND cgst_amount = 0 AND sgst_amount = 0 AND igst_amount = 0))
);
CREATE INDEX credit_grants_customer ON credit_grants (tenant_id, customer_id, currency) WHERE status IN ('pending', 'active');
CREATE INDEX credit_grants_expiry ON credit_grants (expires_at) WHERE status = 'active' AND expires_at IS NOT NULL;
CREATE UNIQUE INDEX credit_grants_invoice ON credit_grants (tenant_id, invoice_id) WHERE invoice_id IS NOT NULL;

-- Every change of a grant's balance: granted (spendable), drawn (an invoice), expired, voided.
CREATE TABLE credit_grant_movements (
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  id uuid NOT NULL,
  grant_id uuid NOT NULL,
  customer_id uuid NOT NULL,
  kind text NOT NULL CHECK (kind IN ('granted', 'drawn', 'expired', 'voided')),
  amount bigint NOT NULL CHECK (amount > 0),
  tax_amount bigint NOT NULL DEFAULT 0,
  invoice_id uuid,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, grant_id) REFERENCES credit_grants (tenant_id, id)
);
CREATE INDEX credit_grant_movements_customer ON credit_grant_movements (tenant_id, customer_id, created_at);
