-- Counting the sign-in links recently e-mailed to a customer (at most 5 an hour, see
-- portal.service requestLoginLink): by tenant, customer and time.
CREATE INDEX portal_login_tokens_customer ON portal_login_tokens (tenant_id, customer_id, created_at);
