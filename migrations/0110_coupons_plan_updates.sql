-- Coupons and discounts (DESIGN §13), immutable prices (archived, not edited) and the price a
-- subscription was created with.

CREATE TABLE coupons (
  tenant_id uuid NOT NULL,
  id uuid NOT NULL,
  code text NOT NULL,
  name text NOT NULL,
  -- Hundredths of a percent (1 = 0.01 %); exactly one of percent_off_bp and amount_off is set.
  percent_off_bp integer CHECK (percent_off_bp > 0 AND percent_off_bp <= 10000),
  amount_off bigint CHECK (amount_off > 0),
  currency char(3),
  duration text NOT NULL CHECK (duration IN ('once', 'repeating', 'forever')),
  duration_in_months integer CHECK (duration_in_months >= 1),
  max_redemptions integer CHECK (max_redemptions >= 1),
  -- Counted in the same statement that checks it (UPDATE ... WHERE times_redeemed < max_redemptions).
  times_redeemed integer NOT NULL DEFAULT 0 CHECK (times_redeemed >= 0 AND (max_redemptions IS NULL OR times_redeemed <= max_redemptions)),
  redeem_by timestamptz,
  plan_ids jsonb NOT NULL DEFAULT '[]',
  active boolean NOT NULL DEFAULT true,
  metadata jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id),
  UNIQUE (tenant_id, code),
  CHECK ((percent_off_bp IS NULL) <> (amount_off IS NULL)),
  CHECK ((amount_off IS NULL) = (currency IS NULL)),
  CHECK ((duration = 'repeating') = (duration_in_months IS NOT NULL))
);
CREATE INDEX coupons_tenant_created ON coupons (tenant_id, created_at DESC, id DESC);

-- One redemption of a coupon: on a subscription (its renewals, within the coupon's duration) or
-- on one invoice. A subscription has at most one discount in force (a new one ends the old).
CREATE TABLE discounts (
  tenant_id uuid NOT NULL,
  id uuid NOT NULL,
  coupon_id uuid NOT NULL,
  customer_id uuid NOT NULL,
  subscription_id uuid,
  invoice_id uuid,
  starts_at timestamptz NOT NULL,
  -- repeating: starts_at + duration_in_months; once/forever: null.
  ends_at timestamptz,
  -- Invoices it has discounted (a `once` discount ends after the first).
  invoices_discounted integer NOT NULL DEFAULT 0,
  ended_at timestamptz,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, coupon_id) REFERENCES coupons (tenant_id, id),
  FOREIGN KEY (tenant_id, customer_id) REFERENCES customers (tenant_id, id),
  FOREIGN KEY (tenant_id, subscription_id) REFERENCES subscriptions (tenant_id, id)
);
CREATE UNIQUE INDEX discounts_one_per_subscription ON discounts (tenant_id, subscription_id) WHERE subscription_id IS NOT NULL AND ended_at IS NULL;
CREATE INDEX discounts_coupon ON discounts (tenant_id, coupon_id);

-- What each discount took off an invoice (the invoice lines carry the per-line allocation).
CREATE TABLE invoice_discounts (
  tenant_id uuid NOT NULL,
  id uuid NOT NULL,
  invoice_id uuid NOT NULL,
  discount_id uuid NOT NULL,
  coupon_id uuid NOT NULL,
  amount bigint NOT NULL CHECK (amount >= 0),
  PRIMARY KEY (tenant_id, id),
  UNIQUE (tenant_id, invoice_id, discount_id),
  FOREIGN KEY (tenant_id, invoice_id) REFERENCES invoices (tenant_id, id),
  FOREIGN KEY (tenant_id, discount_id) REFERENCES discounts (tenant_id, id),
  FOREIGN KEY (tenant_id, coupon_id) REFERENCES coupons (tenant_id, id)
);

-- A line's discount: `amount` (the taxable value) = quantity × unit_amount − discount_amount.
ALTER TABLE invoice_lines ADD COLUMN discount_amount bigint NOT NULL DEFAULT 0 CHECK (discount_amount >= 0);
ALTER TABLE invoices ADD COLUMN discount_amount bigint NOT NULL DEFAULT 0 CHECK (discount_amount >= 0);

-- Prices are immutable: a change is a new price; the old one is archived. One active fixed price
-- per plan and currency, and one active metered price per plan, currency and metric (0100).
ALTER TABLE prices ADD COLUMN active boolean NOT NULL DEFAULT true;
ALTER TABLE prices ADD COLUMN archived_at timestamptz;
ALTER TABLE prices DROP CONSTRAINT IF EXISTS prices_tenant_id_plan_id_currency_key;
CREATE UNIQUE INDEX prices_one_active_per_currency ON prices (tenant_id, plan_id, currency) WHERE active AND metric_code IS NULL;
CREATE UNIQUE INDEX prices_one_active_per_metric ON prices (tenant_id, plan_id, currency, metric_code) WHERE active AND metric_code IS NOT NULL;

-- The price a subscription bills (the one it was created with, until changed).
ALTER TABLE subscriptions ADD COLUMN price_id uuid;
UPDATE subscriptions s SET price_id = p.id FROM prices p WHERE p.tenant_id = s.tenant_id AND p.plan_id = s.plan_id AND p.currency = s.currency AND p.metric_code IS NULL;
ALTER TABLE subscriptions ADD CONSTRAINT subscriptions_price_fk FOREIGN KEY (tenant_id, price_id) REFERENCES prices (tenant_id, id);
