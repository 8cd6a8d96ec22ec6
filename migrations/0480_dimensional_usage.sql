-- Dimensional usage prices (DESIGN §24, decision 0480): a billable metric names the event
-- properties it is broken down by, and a metered price carries a price per dimension combination.
-- Nothing changes on the ingest path: the dimensions stay in usage_events.properties and are
-- grouped when a period is read or billed.

ALTER TABLE billable_metrics ADD COLUMN dimensions jsonb NOT NULL DEFAULT '[]';

-- [{ match: { <dimension>: <value>, … }, unit_amount, package_size, tiers_mode, tiers }]; null: none.
ALTER TABLE prices ADD COLUMN dimension_prices jsonb;

-- A metered price with dimension prices may have no default (amount 0, no tiers): usage that
-- matches none of them is then counted as unpriced instead of billed.
-- contract: the check is loosened, not tightened; the previous release never writes such a price
-- and prices one it reads (amount 0, no tiers) at 0, which is what unpriced usage costs.
ALTER TABLE prices DROP CONSTRAINT prices_amount_check;
ALTER TABLE prices ADD CONSTRAINT prices_amount_check CHECK (amount > 0 OR (tiers IS NOT NULL AND amount = 0) OR (dimension_prices IS NOT NULL AND amount = 0));
