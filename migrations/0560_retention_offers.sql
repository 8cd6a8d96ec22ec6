-- Retention offers (DESIGN §24, docs/decisions/0560): a coupon the portal offers a customer who
-- starts to cancel for one of the offer's reasons. A reason belongs to at most one active offer
-- (the service checks it under a per-tenant lock). New tables only: nothing the previous release reads.
CREATE TABLE retention_offers (
  tenant_id uuid NOT NULL,
  id uuid NOT NULL,
  coupon_id uuid NOT NULL,
  -- Cancellation reasons (decision 0381's list) this offer answers.
  reasons jsonb NOT NULL,
  -- What the portal says above the coupon's terms; a default sentence when null.
  message text,
  active boolean NOT NULL DEFAULT true,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, coupon_id) REFERENCES coupons (tenant_id, id)
);
CREATE INDEX retention_offers_tenant_created ON retention_offers (tenant_id, created_at DESC, id DESC);

-- An offer a customer accepted: the subscription kept, with the offer's coupon as its discount.
-- Once per subscription (the unique key), so cancelling again cannot stack offers.
CREATE TABLE retention_offer_acceptances (
  tenant_id uuid NOT NULL,
  id uuid NOT NULL,
  offer_id uuid NOT NULL,
  subscription_id uuid NOT NULL,
  customer_id uuid NOT NULL,
  coupon_id uuid NOT NULL,
  discount_id uuid NOT NULL,
  reason text NOT NULL
    CHECK (reason IN ('too_expensive', 'missing_features', 'switched_service', 'unused', 'customer_service', 'too_complex', 'low_quality', 'other')),
  feedback text,
  accepted_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id),
  UNIQUE (tenant_id, subscription_id),
  FOREIGN KEY (tenant_id, offer_id) REFERENCES retention_offers (tenant_id, id),
  FOREIGN KEY (tenant_id, subscription_id) REFERENCES subscriptions (tenant_id, id),
  FOREIGN KEY (tenant_id, discount_id) REFERENCES discounts (tenant_id, id)
);
CREATE INDEX retention_offer_acceptances_accepted ON retention_offer_acceptances (tenant_id, accepted_at);
