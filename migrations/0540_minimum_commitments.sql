-- Minimum commitments (DESIGN §24, docs/decisions/0540): a subscription may commit to a minimum
-- per period, over the whole subscription (minimum_price_id NULL) or one of its prices; the
-- invoice that bills the period's usage carries a true-up line for any shortfall. minimum_since is
-- when the commitment took effect (a period it starts inside is prorated by days).
-- Nullable and additive: the previous release keeps working during a rolling upgrade.
ALTER TABLE subscriptions ADD COLUMN minimum_amount bigint CHECK (minimum_amount > 0);
ALTER TABLE subscriptions ADD COLUMN minimum_price_id uuid;
ALTER TABLE subscriptions ADD COLUMN minimum_since timestamptz;
ALTER TABLE subscriptions ADD CONSTRAINT subscriptions_minimum_price_fk
  FOREIGN KEY (tenant_id, minimum_price_id) REFERENCES prices (tenant_id, id);
ALTER TABLE subscriptions ADD CONSTRAINT subscriptions_minimum_complete
  CHECK ((minimum_amount IS NULL) = (minimum_since IS NULL) AND (minimum_price_id IS NULL OR minimum_amount IS NOT NULL));
