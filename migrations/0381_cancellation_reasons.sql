-- Why a subscription was canceled (DESIGN §24, docs/decisions/0381): a reason from a closed list
-- and the customer's own words, recorded with the cancellation and cleared by a reactivation.
-- Nullable and additive: the previous release keeps working during a rolling upgrade.
ALTER TABLE subscriptions ADD COLUMN cancellation_reason text
  CHECK (cancellation_reason IN ('too_expensive', 'missing_features', 'switched_service', 'unused', 'customer_service', 'too_complex', 'low_quality', 'other'));
ALTER TABLE subscriptions ADD COLUMN cancellation_feedback text;
CREATE INDEX subscriptions_canceled_at ON subscriptions (tenant_id, canceled_at) WHERE canceled_at IS NOT NULL;
