-- Customer advances (DESIGN §20, docs/decisions/0280): money received before any invoice. For
-- services the time of supply is the receipt of payment (CGST Act s.13(2)), so GST is paid on the
-- advance under a receipt voucher (CGST Rules, rule 50), adjusted when an invoice takes the advance
-- (GSTR-1 table 11B) and reversed by a refund voucher (rule 51) when it is paid back.
ALTER TABLE document_counters DROP CONSTRAINT document_counters_kind_check;
ALTER TABLE document_counters ADD CONSTRAINT document_counters_kind_check
  CHECK (kind IN ('invoice', 'credit_note', 'quote', 'receipt_voucher', 'refund_voucher'));

CREATE TABLE customer_advances (
  tenant_id uuid NOT NULL,
  id uuid NOT NULL,
  entity_id uuid NOT NULL,
  customer_id uuid NOT NULL,
  -- The payment that brought the money (offline without an invoice, or a gateway overpayment).
  payment_id uuid NOT NULL,
  -- The receipt voucher's number (the entity's receipt-voucher series).
  number text NOT NULL,
  currency text NOT NULL,
  amount bigint NOT NULL CHECK (amount > 0),
  -- The advance is tax-inclusive: amount = subtotal + cgst + sgst + igst.
  subtotal bigint NOT NULL CHECK (subtotal >= 0),
  cgst_amount bigint NOT NULL CHECK (cgst_amount >= 0),
  sgst_amount bigint NOT NULL CHECK (sgst_amount >= 0),
  igst_amount bigint NOT NULL CHECK (igst_amount >= 0),
  tax_amount bigint NOT NULL CHECK (tax_amount >= 0),
  rate_bp integer NOT NULL,
  hsn_code text NOT NULL,
  tax_type text NOT NULL,
  place_of_supply text,
  utgst boolean NOT NULL DEFAULT false,
  -- What is still unapplied and unrefunded, and the part of the voucher's value and tax it carries.
  balance bigint NOT NULL CHECK (balance >= 0 AND balance <= amount),
  open_subtotal bigint NOT NULL CHECK (open_subtotal >= 0),
  open_cgst bigint NOT NULL CHECK (open_cgst >= 0),
  open_sgst bigint NOT NULL CHECK (open_sgst >= 0),
  open_igst bigint NOT NULL CHECK (open_igst >= 0),
  received_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id),
  CHECK (subtotal + cgst_amount + sgst_amount + igst_amount = amount),
  CHECK (open_subtotal + open_cgst + open_sgst + open_igst = balance)
);
CREATE INDEX customer_advances_list ON customer_advances (tenant_id, created_at, id);
CREATE INDEX customer_advances_customer ON customer_advances (tenant_id, customer_id, currency, received_at);

-- Every use of an advance: applied to an invoice (GSTR-1 11B), or refunded (a refund voucher).
CREATE TABLE advance_movements (
  tenant_id uuid NOT NULL,
  id uuid NOT NULL,
  advance_id uuid NOT NULL,
  kind text NOT NULL CHECK (kind IN ('applied', 'refunded')),
  invoice_id uuid,
  -- The refund voucher's number (refunds only).
  number text,
  amount bigint NOT NULL CHECK (amount > 0),
  subtotal bigint NOT NULL CHECK (subtotal >= 0),
  cgst_amount bigint NOT NULL CHECK (cgst_amount >= 0),
  sgst_amount bigint NOT NULL CHECK (sgst_amount >= 0),
  igst_amount bigint NOT NULL CHECK (igst_amount >= 0),
  reason text NOT NULL DEFAULT '',
  created_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, advance_id) REFERENCES customer_advances (tenant_id, id),
  CHECK ((kind = 'applied') = (invoice_id IS NOT NULL)),
  CHECK ((kind = 'refunded') = (number IS NOT NULL))
);
CREATE INDEX advance_movements_advance ON advance_movements (tenant_id, advance_id, created_at);
CREATE INDEX advance_movements_list ON advance_movements (tenant_id, created_at, id);
