-- TDS under the Income-tax Act 2025 (docs/decisions/0510): a certificate records the day the
-- customer deducted (credited or paid, in India), the new Act's payment code (the section itself
-- from 1 April 2026, the mapped code before; null when no corroborated mapping exists) and the
-- certificate's form (Form 16A before 1 April 2026, Form 131 from then). Rows recorded before this
-- migration take the day they were recorded in India and the form of that day.
ALTER TABLE invoice_tds_certificates
  ADD COLUMN deducted_on text CHECK (deducted_on ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}$'),
  ADD COLUMN payment_code text,
  ADD COLUMN certificate_form text CHECK (certificate_form IN ('Form 16A', 'Form 131'));

UPDATE invoice_tds_certificates
   SET deducted_on = to_char(created_at AT TIME ZONE 'Asia/Kolkata', 'YYYY-MM-DD');
UPDATE invoice_tds_certificates
   SET certificate_form = CASE WHEN deducted_on >= '2026-04-01' THEN 'Form 131' ELSE 'Form 16A' END;

-- The previous release records certificates without these columns during a rolling upgrade: a
-- BEFORE INSERT trigger fills them as the backfill above does (the day it is recorded in India).
CREATE FUNCTION kosh_fill_tds_certificate_dates() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.deducted_on IS NULL THEN
    NEW.deducted_on := to_char(COALESCE(NEW.created_at, now()) AT TIME ZONE 'Asia/Kolkata', 'YYYY-MM-DD');
  END IF;
  IF NEW.certificate_form IS NULL THEN
    NEW.certificate_form := CASE WHEN NEW.deducted_on >= '2026-04-01' THEN 'Form 131' ELSE 'Form 16A' END;
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER invoice_tds_certificates_fill BEFORE INSERT ON invoice_tds_certificates
  FOR EACH ROW EXECUTE FUNCTION kosh_fill_tds_certificate_dates();

-- contract: safe during a rolling upgrade: the trigger above fills both for the previous release's inserts
ALTER TABLE invoice_tds_certificates
  ALTER COLUMN deducted_on SET NOT NULL,
  ALTER COLUMN certificate_form SET NOT NULL;

-- The quarterly TDS report reads certificates by customer and day.
CREATE INDEX invoice_tds_certificates_deducted ON invoice_tds_certificates (tenant_id, deducted_on);
