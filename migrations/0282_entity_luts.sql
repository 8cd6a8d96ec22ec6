-- A Letter of Undertaking is furnished per financial year (CGST Rules rule 96A, FORM GST RFD-11;
-- valid for the financial year it is tendered in): docs/decisions/0282. Each row is one year's LUT
-- with its ARN. An entity that records none keeps the single `lut` flag's meaning (in force, year
-- unstated); once it records one, an export dated in a year without one follows `lut_missing`:
-- charge IGST (export with payment of tax, IGST Act s.16(3)(b)) or refuse the invoice.
CREATE TABLE entity_luts (
  tenant_id uuid NOT NULL,
  entity_id uuid NOT NULL,
  financial_year text NOT NULL CHECK (financial_year ~ '^[0-9]{4}-[0-9]{2}$'),
  arn text NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, entity_id, financial_year)
);
ALTER TABLE legal_entities ADD COLUMN lut_missing text NOT NULL DEFAULT 'charge_igst' CHECK (lut_missing IN ('charge_igst', 'refuse'));
