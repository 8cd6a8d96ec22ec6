-- GST and money rules (docs/decisions/0025-gst-money.md): SEZ customers and LUT entities,
-- explicit line and plan rates, the exchange rate and INR amounts of foreign-currency invoices
-- (CGST Rules, rule 34), entity exchange-rate tables, and TDS certified after the payment.

-- A customer that is a unit or developer in a Special Economic Zone: its supplies are zero-rated.
ALTER TABLE customers ADD COLUMN sez boolean NOT NULL DEFAULT false;

-- The entity has a Letter of Undertaking: exports and SEZ supplies go without payment of IGST.
ALTER TABLE legal_entities ADD COLUMN lut boolean NOT NULL DEFAULT true;

-- A rate given with the plan, for codes whose rate the code alone does not decide.
ALTER TABLE plans ADD COLUMN tax_rate_bp integer CHECK (tax_rate_bp BETWEEN 0 AND 10000);

-- lut: zero-rated supply (export or SEZ) made under LUT without payment of IGST.
-- exchange_rate: INR per one unit of the invoice currency, a decimal string (at most 6 decimals).
-- inr_*: the taxable value and taxes in paise as GST determines them (null when not determined).
ALTER TABLE invoices
  ADD COLUMN lut boolean NOT NULL DEFAULT false,
  ADD COLUMN exchange_rate text CHECK (exchange_rate ~ '^[0-9]{1,9}(\.[0-9]{1,6})?$'),
  ADD COLUMN exchange_rate_source text CHECK (exchange_rate_source IN ('invoice_currency', 'request', 'entity_rate_table')),
  ADD COLUMN inr_subtotal bigint CHECK (inr_subtotal >= 0),
  ADD COLUMN inr_cgst_amount bigint CHECK (inr_cgst_amount >= 0),
  ADD COLUMN inr_sgst_amount bigint CHECK (inr_sgst_amount >= 0),
  ADD COLUMN inr_igst_amount bigint CHECK (inr_igst_amount >= 0),
  ADD COLUMN inr_tax_amount bigint CHECK (inr_tax_amount >= 0),
  ADD COLUMN inr_total bigint CHECK (inr_total >= 0),
  ADD CONSTRAINT invoices_inr_total CHECK (inr_total = inr_subtotal + inr_tax_amount),
  ADD CONSTRAINT invoices_inr_tax CHECK (inr_tax_amount = inr_cgst_amount + inr_sgst_amount + inr_igst_amount);

ALTER TABLE invoice_lines
  ADD COLUMN explicit_rate_bp integer CHECK (explicit_rate_bp BETWEEN 0 AND 10000),
  ADD COLUMN inr_amount bigint CHECK (inr_amount >= 0),
  ADD COLUMN inr_cgst_amount bigint CHECK (inr_cgst_amount >= 0),
  ADD COLUMN inr_sgst_amount bigint CHECK (inr_sgst_amount >= 0),
  ADD COLUMN inr_igst_amount bigint CHECK (inr_igst_amount >= 0);

-- An entity's exchange rates: INR per one unit of `currency`, effective from a moment on.
CREATE TABLE entity_exchange_rates (
  tenant_id uuid NOT NULL,
  id uuid NOT NULL,
  entity_id uuid NOT NULL,
  currency char(3) NOT NULL,
  rate text NOT NULL CHECK (rate ~ '^[0-9]{1,9}(\.[0-9]{1,6})?$'),
  effective_from timestamptz NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id),
  UNIQUE (tenant_id, entity_id, currency, effective_from),
  FOREIGN KEY (tenant_id, entity_id) REFERENCES legal_entities (tenant_id, id)
);

-- TDS the customer certified (Form 16A) after paying the rest: it settles its part of the invoice.
CREATE TABLE invoice_tds_certificates (
  tenant_id uuid NOT NULL,
  id uuid NOT NULL,
  invoice_id uuid NOT NULL,
  customer_id uuid NOT NULL,
  tds_amount bigint NOT NULL CHECK (tds_amount > 0),
  certificate_number text,
  section text,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, invoice_id) REFERENCES invoices (tenant_id, id)
);
CREATE INDEX invoice_tds_certificates_invoice ON invoice_tds_certificates (tenant_id, invoice_id);
