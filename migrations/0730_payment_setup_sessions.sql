-- Saving a payment method on the provider's hosted page (docs/decisions/0730): a Stripe Checkout
-- Session in setup mode, or a Razorpay registration link for a UPI AutoPay / card e-mandate. The
-- row is made before the customer leaves for the provider and completed once, by whichever of the
-- return page (confirmed with the provider server-to-server) and the signed webhook comes first;
-- `payment_method_id` is what the completion saved. The mandate's terms and the customer's consent
-- are kept as they were shown. A new table only: nothing the previous release reads.
CREATE TABLE payment_setup_sessions (
  tenant_id uuid NOT NULL,
  id uuid NOT NULL,
  customer_id uuid NOT NULL,
  gateway text NOT NULL,
  connection_id uuid NOT NULL,
  method text NOT NULL CHECK (method IN ('card', 'upi_mandate')),
  status text NOT NULL CHECK (status IN ('open', 'complete')),
  gateway_reference text NOT NULL,
  redirect_url text NOT NULL,
  mandate_max_amount bigint,
  mandate_valid_until timestamptz,
  mandate_frequency text,
  consent_text text,
  consented_at timestamptz,
  payment_method_id uuid,
  expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, customer_id) REFERENCES customers (tenant_id, id),
  FOREIGN KEY (tenant_id, payment_method_id) REFERENCES payment_methods (tenant_id, id)
);
CREATE INDEX payment_setup_sessions_customer ON payment_setup_sessions (tenant_id, customer_id, created_at);
