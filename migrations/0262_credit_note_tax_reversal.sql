-- A commercial credit (tax_reversal false, docs/decisions/0262): the customer's balance changes,
-- output tax does not; GSTR-1 and the IRP never see the note.
ALTER TABLE credit_notes ADD COLUMN tax_reversal boolean NOT NULL DEFAULT true;
