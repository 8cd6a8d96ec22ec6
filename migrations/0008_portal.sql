-- The customer portal's credentials: one-time sign-in links (15 minutes) and sessions (7 days).
-- Only SHA-256 hashes of the secrets are stored; the secret travels in the link or the cookie
-- as `<tenant_id>.<secret>`, so every lookup is by (tenant_id, token_hash) — Citus-friendly.
CREATE TABLE portal_login_tokens (
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  id uuid NOT NULL,
  customer_id uuid NOT NULL,
  token_hash text NOT NULL,
  -- How the link was made: by the tenant's API ('api') or requested by e-mail ('email').
  source text NOT NULL CHECK (source IN ('api', 'email')),
  expires_at timestamptz NOT NULL,
  used_at timestamptz,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id),
  UNIQUE (tenant_id, token_hash),
  FOREIGN KEY (tenant_id, customer_id) REFERENCES customers (tenant_id, id)
);
CREATE INDEX portal_login_tokens_expiry ON portal_login_tokens (expires_at);

CREATE TABLE portal_sessions (
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  id uuid NOT NULL,
  customer_id uuid NOT NULL,
  token_hash text NOT NULL,
  expires_at timestamptz NOT NULL,
  revoked_at timestamptz,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id),
  UNIQUE (tenant_id, token_hash),
  FOREIGN KEY (tenant_id, customer_id) REFERENCES customers (tenant_id, id)
);
CREATE INDEX portal_sessions_expiry ON portal_sessions (expires_at);
