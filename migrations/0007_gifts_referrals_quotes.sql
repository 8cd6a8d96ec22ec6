-- Gifts, referrals and quotes. Citus rules as everywhere: tenant_id NOT NULL, primary key
-- (tenant_id, id), every unique constraint and foreign key includes tenant_id.

-- A gift subscription bought by one customer for someone else. The status flip
-- (purchased → redeemed | canceled) is a guarded UPDATE, so it happens exactly once.
CREATE TABLE gifts (
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  id uuid NOT NULL,
  code text NOT NULL CHECK (length(code) BETWEEN 4 AND 64),
  plan_id uuid NOT NULL,
  buyer_customer_id uuid NOT NULL,
  recipient_email text NOT NULL,
  status text NOT NULL CHECK (status IN ('purchased', 'redeemed', 'canceled')),
  duration_months integer NOT NULL CHECK (duration_months BETWEEN 1 AND 36),
  currency char(3) NOT NULL,
  amount bigint NOT NULL CHECK (amount > 0),
  -- Nullable: SPEC allows gifts bought before invoice linking existed (imported ones).
  invoice_id uuid,
  redeemed_by_customer_id uuid,
  redeemed_at timestamptz,
  -- The subscription made at redemption. No foreign key: subscriptions are another module's
  -- table and their migration may land after this one.
  subscription_id uuid,
  canceled_at timestamptz,
  expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id),
  UNIQUE (tenant_id, code),
  FOREIGN KEY (tenant_id, plan_id) REFERENCES plans (tenant_id, id),
  FOREIGN KEY (tenant_id, buyer_customer_id) REFERENCES customers (tenant_id, id),
  FOREIGN KEY (tenant_id, redeemed_by_customer_id) REFERENCES customers (tenant_id, id),
  FOREIGN KEY (tenant_id, invoice_id) REFERENCES invoices (tenant_id, id),
  CHECK ((status = 'redeemed') = (redeemed_by_customer_id IS NOT NULL AND redeemed_at IS NOT NULL)),
  CHECK ((status = 'canceled') = (canceled_at IS NOT NULL))
);
CREATE INDEX gifts_tenant_created ON gifts (tenant_id, created_at DESC, id DESC);
CREATE INDEX gifts_buyer ON gifts (tenant_id, buyer_customer_id);
CREATE UNIQUE INDEX gifts_invoice ON gifts (tenant_id, invoice_id) WHERE invoice_id IS NOT NULL;

-- A referral: the referred customer's first paid invoice inside the window completes it and
-- credits the referrer. One live referral per referred customer (the partial unique index), and
-- completion is a guarded UPDATE, so the reward is credited exactly once.
CREATE TABLE referrals (
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  id uuid NOT NULL,
  code text NOT NULL,
  referrer_id uuid NOT NULL,
  referred_id uuid NOT NULL,
  status text NOT NULL CHECK (status IN ('pending', 'completed', 'expired', 'canceled')),
  reward_amount bigint NOT NULL CHECK (reward_amount >= 0),
  currency char(3) NOT NULL,
  reward_credited boolean NOT NULL DEFAULT false,
  credit_note_id uuid,
  qualifying_invoice_id uuid,
  expires_at timestamptz NOT NULL,
  qualified_at timestamptz,
  completed_at timestamptz,
  expired_at timestamptz,
  canceled_at timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id),
  UNIQUE (tenant_id, code),
  UNIQUE (tenant_id, credit_note_id),
  FOREIGN KEY (tenant_id, referrer_id) REFERENCES customers (tenant_id, id),
  FOREIGN KEY (tenant_id, referred_id) REFERENCES customers (tenant_id, id),
  FOREIGN KEY (tenant_id, credit_note_id) REFERENCES credit_notes (tenant_id, id),
  FOREIGN KEY (tenant_id, qualifying_invoice_id) REFERENCES invoices (tenant_id, id),
  CHECK (referrer_id <> referred_id),
  CHECK ((status = 'completed') = (completed_at IS NOT NULL)),
  CHECK (NOT reward_credited OR credit_note_id IS NOT NULL)
);
CREATE UNIQUE INDEX referrals_one_live_per_referred ON referrals (tenant_id, referred_id) WHERE status IN ('pending', 'completed');
CREATE INDEX referrals_tenant_created ON referrals (tenant_id, created_at DESC, id DESC);
CREATE INDEX referrals_pending_expiry ON referrals (expires_at) WHERE status = 'pending';

-- A quote: a priced offer that becomes an invoice when accepted. Its number comes from the
-- entity's quote series at creation (a quote is not a tax document, so gaps would be harmless;
-- the series is still gapless because the counter is taken in the creating transaction).
CREATE TABLE quotes (
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  id uuid NOT NULL,
  customer_id uuid NOT NULL,
  entity_id uuid NOT NULL,
  quote_number text NOT NULL,
  status text NOT NULL CHECK (status IN ('draft', 'accepted', 'declined', 'expired')),
  currency char(3) NOT NULL,
  line_items jsonb NOT NULL,
  subtotal bigint NOT NULL CHECK (subtotal >= 0),
  discount_amount bigint NOT NULL CHECK (discount_amount >= 0 AND discount_amount <= subtotal),
  tax_amount bigint NOT NULL CHECK (tax_amount >= 0),
  tax_computed boolean NOT NULL,
  total bigint NOT NULL CHECK (total >= 0),
  valid_until timestamptz,
  notes text NOT NULL DEFAULT '',
  terms text NOT NULL DEFAULT '',
  invoice_id uuid,
  accepted_at timestamptz,
  declined_at timestamptz,
  expired_at timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id),
  UNIQUE (tenant_id, entity_id, quote_number),
  UNIQUE (tenant_id, invoice_id),
  FOREIGN KEY (tenant_id, customer_id) REFERENCES customers (tenant_id, id),
  FOREIGN KEY (tenant_id, entity_id) REFERENCES legal_entities (tenant_id, id),
  FOREIGN KEY (tenant_id, invoice_id) REFERENCES invoices (tenant_id, id),
  CHECK (total = subtotal - discount_amount + tax_amount),
  CHECK ((status = 'accepted') = (invoice_id IS NOT NULL AND accepted_at IS NOT NULL))
);
CREATE INDEX quotes_tenant_created ON quotes (tenant_id, created_at DESC, id DESC);
CREATE INDEX quotes_open_expiry ON quotes (valid_until) WHERE status = 'draft' AND valid_until IS NOT NULL;
