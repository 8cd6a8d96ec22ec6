-- Credit notes: spendable customer credit, with their own gapless series per entity. A note tied
-- to an invoice reverses that invoice's tax pro rata; a standalone goodwill credit carries none.
CREATE TABLE credit_notes (
  tenant_id uuid NOT NULL,
  id uuid NOT NULL,
  customer_id uuid NOT NULL,
  invoice_id uuid,
  entity_id uuid NOT NULL,
  number text,
  reference text,
  type text NOT NULL DEFAULT 'adjustment',
  status text NOT NULL CHECK (status IN ('pending_approval', 'issued', 'used', 'void', 'rejected', 'expired')),
  refund_status text NOT NULL DEFAULT 'none',
  currency char(3) NOT NULL,
  amount bigint NOT NULL CHECK (amount > 0),
  subtotal bigint NOT NULL CHECK (subtotal >= 0),
  tax_amount bigint NOT NULL CHECK (tax_amount >= 0),
  cgst_amount bigint NOT NULL CHECK (cgst_amount >= 0),
  sgst_amount bigint NOT NULL CHECK (sgst_amount >= 0),
  igst_amount bigint NOT NULL CHECK (igst_amount >= 0),
  tax_type text NOT NULL DEFAULT '',
  hsn_code text NOT NULL DEFAULT '',
  balance bigint NOT NULL CHECK (balance >= 0 AND balance <= amount),
  reason text NOT NULL DEFAULT '',
  expires_at timestamptz,
  issued_at timestamptz,
  approved_at timestamptz,
  rejected_at timestamptz,
  voided_at timestamptz,
  expired_at timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, customer_id) REFERENCES customers (tenant_id, id),
  FOREIGN KEY (tenant_id, invoice_id) REFERENCES invoices (tenant_id, id),
  FOREIGN KEY (tenant_id, entity_id) REFERENCES legal_entities (tenant_id, id),
  CHECK (subtotal = 0 AND tax_amount = 0 OR subtotal + tax_amount = amount),
  CHECK (tax_amount = cgst_amount + sgst_amount + igst_amount),
  CHECK (status <> 'used' OR balance = 0)
);
CREATE UNIQUE INDEX credit_notes_number ON credit_notes (tenant_id, entity_id, number) WHERE number IS NOT NULL;
CREATE INDEX credit_notes_tenant_created ON credit_notes (tenant_id, created_at DESC, id DESC);
CREATE INDEX credit_notes_spendable ON credit_notes (tenant_id, customer_id, currency) WHERE status = 'issued';
CREATE INDEX credit_notes_expiring ON credit_notes (expires_at) WHERE status = 'issued' AND expires_at IS NOT NULL;

CREATE TABLE credit_note_applications (
  tenant_id uuid NOT NULL,
  id uuid NOT NULL,
  credit_note_id uuid NOT NULL,
  invoice_id uuid NOT NULL,
  amount bigint NOT NULL CHECK (amount > 0),
  created_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, credit_note_id) REFERENCES credit_notes (tenant_id, id),
  FOREIGN KEY (tenant_id, invoice_id) REFERENCES invoices (tenant_id, id)
);
CREATE INDEX credit_note_applications_note ON credit_note_applications (tenant_id, credit_note_id);
