-- E-invoicing (DESIGN §15): per-entity IRP settings, and one e-invoice record per registered
-- document (invoice or credit note). Credentials are sealed by the application (platform/secrets).
ALTER TABLE legal_entities
  ADD COLUMN einvoicing_enabled boolean NOT NULL DEFAULT false,
  ADD COLUMN einvoicing_provider text CHECK (einvoicing_provider IN ('sandbox', 'nic', 'gsp')),
  ADD COLUMN einvoicing_credentials text,
  ADD COLUMN time_zone text NOT NULL DEFAULT 'Asia/Kolkata';

CREATE TABLE einvoices (
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  id uuid NOT NULL,
  entity_id uuid NOT NULL,
  document_type text NOT NULL CHECK (document_type IN ('invoice', 'credit_note')),
  document_id uuid NOT NULL,
  status text NOT NULL CHECK (status IN ('pending', 'generated', 'failed', 'canceled')),
  provider text NOT NULL,
  irn text,
  ack_no text,
  ack_date timestamptz,
  signed_invoice text,
  signed_qr_code text,
  errors jsonb NOT NULL DEFAULT '[]',
  document jsonb,
  attempts integer NOT NULL DEFAULT 0,
  generated_at timestamptz,
  canceled_at timestamptz,
  cancel_reason_code integer CHECK (cancel_reason_code BETWEEN 1 AND 4),
  cancel_remarks text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id),
  UNIQUE (tenant_id, document_type, document_id),
  FOREIGN KEY (tenant_id, entity_id) REFERENCES legal_entities (tenant_id, id)
);

-- GST returns read one entity's documents of one month in issue order.
CREATE INDEX invoices_entity_issued ON invoices (tenant_id, entity_id, issued_at, id) WHERE issued_at IS NOT NULL;
CREATE INDEX credit_notes_entity_issued ON credit_notes (tenant_id, entity_id, issued_at, id) WHERE issued_at IS NOT NULL;
