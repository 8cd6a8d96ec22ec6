-- GSTR-1 amendments of B2C and export supplies (docs/decisions/0610): an export invoice records
-- its shipping bill (port code, number, date) when it is known, often after the month's GSTR-1
-- was filed; the return lists it in `exp`, or in `expa` when that month is closed. Null until
-- recorded; the previous release neither reads nor writes it.
ALTER TABLE invoices ADD COLUMN shipping_bill jsonb;
