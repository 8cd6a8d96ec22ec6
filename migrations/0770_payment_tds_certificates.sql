-- Decision 0770: the certificate (Form 16A; Form 131 from 1 April 2026) for TDS the customer withheld
-- with a payment. Nullable columns, so rows the previous release inserts read as "not yet certified".
ALTER TABLE payments
  ADD COLUMN tds_certificate_number text,
  ADD COLUMN tds_section text,
  ADD COLUMN tds_payment_code text,
  ADD COLUMN tds_certificate_form text CHECK (tds_certificate_form IN ('Form 16A', 'Form 131')),
  ADD COLUMN tds_deducted_on text CHECK (tds_deducted_on ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}$'),
  ADD COLUMN tds_certified_at timestamptz;
