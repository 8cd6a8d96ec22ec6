-- Subscription items (DESIGN §24, docs/decisions/0470): add-on prices beside a subscription's plan,
-- each with its quantity. The plan's own price stays on the subscription row; an item is any other
-- fixed price in the subscription's currency and interval, at most once per subscription.
-- Removing an item deletes its row: the invoices that billed it keep its price and plan on their lines.
CREATE TABLE subscription_items (
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  id uuid NOT NULL,
  subscription_id uuid NOT NULL,
  plan_id uuid NOT NULL,
  price_id uuid NOT NULL,
  quantity integer NOT NULL CHECK (quantity BETWEEN 1 AND 1000000),
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id),
  UNIQUE (tenant_id, subscription_id, price_id),
  FOREIGN KEY (tenant_id, subscription_id) REFERENCES subscriptions (tenant_id, id),
  FOREIGN KEY (tenant_id, price_id) REFERENCES prices (tenant_id, id)
);
