-- Decision 0840: each payment received against a top-up of prepaid credit is an advance of its
-- own date (CGST Act s.13(2), Explanation (i)), so a top-up paid in parts has one receipt voucher
-- per part: a grant may have several vouchers. The unique index becomes a plain one (the grant's
-- draw-downs read its vouchers by credit_grant_id).
CREATE INDEX customer_advances_credit_grant_vouchers ON customer_advances (tenant_id, credit_grant_id, received_at) WHERE credit_grant_id IS NOT NULL;
DROP INDEX customer_advances_credit_grant;

-- A top-up requests an advance; it is not a tax invoice, so it is numbered in a series of its own
-- (`TU-`), leaving the tax-invoice series (rule 46(b)) without its numbers.
-- contract: the previous release writes only kinds the new list still holds; the list only grows.
ALTER TABLE document_counters DROP CONSTRAINT document_counters_kind_check;
ALTER TABLE document_counters ADD CONSTRAINT document_counters_kind_check
  CHECK (kind IN ('invoice', 'credit_note', 'quote', 'receipt_voucher', 'refund_voucher', 'top_up'));
