-- What a customer may do in the self-service portal (docs/decisions/0500). Per tenant, in its
-- settings. Additive: new columns with defaults, so existing tenants get the defaults.
--   portal_cancellation: 'disabled' (no cancel button), 'at_period_end' (the default: the
--     subscription runs to the end of the paid period) or 'immediately' (ends now, the unused
--     time of the paid period credited, as the API's cancel with prorate: true).
--   portal_plan_change, portal_quantity_change: off by default; prorated as the API prorates.
--   portal_billing_details: GSTIN, billing address and billing e-mail; on by default.
ALTER TABLE tenant_settings
  ADD COLUMN portal_cancellation text NOT NULL DEFAULT 'at_period_end'
    CHECK (portal_cancellation IN ('disabled', 'at_period_end', 'immediately')),
  ADD COLUMN portal_plan_change boolean NOT NULL DEFAULT false,
  ADD COLUMN portal_quantity_change boolean NOT NULL DEFAULT false,
  ADD COLUMN portal_billing_details boolean NOT NULL DEFAULT true;
