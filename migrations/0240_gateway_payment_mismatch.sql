-- A signed gateway webhook is believed about what happened, not about how much (DESIGN §20,
-- docs/decisions/0242): a payment is applied only when its amount and currency are what Kosh
-- asked for. A checkout session remembers what it asked the provider for; a payment event that
-- does not match is kept for review (`review`: what was expected and what arrived) and nothing
-- is applied. Sessions made before this have no amount (null): the invoice's amount due stands in.
ALTER TABLE checkout_sessions ADD COLUMN amount bigint;
ALTER TABLE checkout_sessions ADD COLUMN currency text;
ALTER TABLE gateway_events ADD COLUMN review jsonb;
CREATE INDEX gateway_events_review ON gateway_events (tenant_id, received_at) WHERE review IS NOT NULL;
