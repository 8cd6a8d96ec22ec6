-- The payment method an auto top-up names (DESIGN §23, decision 0410): kept on the paid grant it
-- sells, so the charge of its top-up invoice (and any retry) uses that method and no other.
ALTER TABLE credit_grants ADD COLUMN payment_method_id uuid;
