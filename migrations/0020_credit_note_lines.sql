-- The invoice lines a credit note credits (Rule 53(1A): each credited line carries its own HSN and
-- reverses its own rate). A note without lines in its request is spread over the invoice's lines
-- pro rata and stored the same way, so what each line has left to credit is always known.
CREATE TABLE credit_note_lines (
  tenant_id uuid NOT NULL,
  id uuid NOT NULL,
  credit_note_id uuid NOT NULL,
  invoice_id uuid NOT NULL,
  invoice_line_id uuid NOT NULL,
  position integer NOT NULL,
  hsn_code text NOT NULL,
  rate_bp integer NOT NULL CHECK (rate_bp >= 0),
  amount bigint NOT NULL CHECK (amount > 0),
  subtotal bigint NOT NULL CHECK (subtotal >= 0),
  cgst_amount bigint NOT NULL CHECK (cgst_amount >= 0),
  sgst_amount bigint NOT NULL CHECK (sgst_amount >= 0),
  igst_amount bigint NOT NULL CHECK (igst_amount >= 0),
  tax_amount bigint NOT NULL CHECK (tax_amount = cgst_amount + sgst_amount + igst_amount),
  PRIMARY KEY (tenant_id, id),
  UNIQUE (tenant_id, credit_note_id, position),
  FOREIGN KEY (tenant_id, credit_note_id) REFERENCES credit_notes (tenant_id, id),
  FOREIGN KEY (tenant_id, invoice_id) REFERENCES invoices (tenant_id, id),
  FOREIGN KEY (tenant_id, invoice_line_id) REFERENCES invoice_lines (tenant_id, id),
  CHECK (subtotal + tax_amount = amount)
);
CREATE INDEX credit_note_lines_invoice ON credit_note_lines (tenant_id, invoice_id);
