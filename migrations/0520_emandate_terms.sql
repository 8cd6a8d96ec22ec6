-- E-mandates under RBI's e-mandate framework and NPCI UPI AutoPay (issue #32 item 7,
-- docs/decisions/0520). A mandate's terms on its payment method: the most one debit may take, its
-- validity and its frequency (null on methods saved before: no cap but the authentication limit).
ALTER TABLE payment_methods ADD COLUMN mandate_max_amount bigint;
ALTER TABLE payment_methods ADD COLUMN mandate_valid_from timestamptz;
ALTER TABLE payment_methods ADD COLUMN mandate_valid_until timestamptz;
ALTER TABLE payment_methods ADD COLUMN mandate_frequency text;

-- The pre-debit notice's "skip this debit" link: SHA-256 (hex) of its token, never the token.
ALTER TABLE payment_attempts ADD COLUMN skip_token_hash text;

-- Per entity (the merchant): the category that sets the limit of a debit without the customer's
-- additional factor of authentication (standard ₹15 000; ₹1 lakh for mutual fund subscriptions,
-- insurance premiums and credit card bills), an optional explicit limit in paise overriding it,
-- and the grievance contact the post-debit notice names.
ALTER TABLE legal_entities ADD COLUMN emandate_category text NOT NULL DEFAULT 'standard'
  CHECK (emandate_category IN ('standard', 'mutual_fund_subscription', 'insurance_premium', 'credit_card_bill'));
ALTER TABLE legal_entities ADD COLUMN emandate_afa_limit bigint CHECK (emandate_afa_limit > 0);
ALTER TABLE legal_entities ADD COLUMN grievance_contact text;
