-- INR values of foreign-currency advances (docs/decisions/0400). GST is determined and reported
-- in rupees at the rate of the time of supply (CGST Rules, rule 34(2): for services, the rate under
-- generally accepted accounting principles on the date of the time of supply; for an advance that
-- is the date the payment is received, CGST Act s.13(2)). The receipt voucher keeps that rate and
-- its rupee values; every application and refund voucher takes its rupee share at the same rate.
-- NULL: an INR advance (its amounts are rupees) or no rate known (no GST on it).
ALTER TABLE customer_advances
  ADD COLUMN exchange_rate text,
  ADD COLUMN inr_amount bigint,
  ADD COLUMN inr_subtotal bigint,
  ADD COLUMN inr_cgst_amount bigint,
  ADD COLUMN inr_sgst_amount bigint,
  ADD COLUMN inr_igst_amount bigint,
  -- The rupee values of what is still open (as open_subtotal … for the advance's currency).
  ADD COLUMN open_inr_subtotal bigint,
  ADD COLUMN open_inr_cgst bigint,
  ADD COLUMN open_inr_sgst bigint,
  ADD COLUMN open_inr_igst bigint;

ALTER TABLE advance_movements
  ADD COLUMN inr_amount bigint,
  ADD COLUMN inr_subtotal bigint,
  ADD COLUMN inr_cgst_amount bigint,
  ADD COLUMN inr_sgst_amount bigint,
  ADD COLUMN inr_igst_amount bigint;
