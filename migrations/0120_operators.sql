-- Operators (DESIGN §17): the people of a tenant, their sessions, invitations, password resets,
-- TOTP recovery codes; and the append-only audit log of every mutation.

CREATE TABLE users (
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  id uuid NOT NULL,
  email text NOT NULL,
  name text NOT NULL,
  role text NOT NULL CHECK (role IN ('owner', 'admin', 'finance', 'support', 'viewer')),
  password_hash text NOT NULL,
  -- Sealed with the deployment's secret box (platform/secrets); pending until confirmed by a code.
  totp_secret text,
  totp_pending_secret text,
  totp_enabled_at timestamptz,
  last_sign_in_at timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id),
  UNIQUE (tenant_id, email)
);
-- Sign-in knows only the e-mail: find its tenants.
CREATE INDEX users_email ON users (email);

CREATE TABLE user_sessions (
  tenant_id uuid NOT NULL,
  id uuid NOT NULL,
  user_id uuid NOT NULL,
  token_hash text NOT NULL,
  created_at timestamptz NOT NULL,
  last_seen_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  revoked_at timestamptz,
  ip text,
  user_agent text,
  PRIMARY KEY (tenant_id, id),
  UNIQUE (tenant_id, token_hash),
  FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX user_sessions_user ON user_sessions (tenant_id, user_id);

CREATE TABLE user_invitations (
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  id uuid NOT NULL,
  email text NOT NULL,
  role text NOT NULL CHECK (role IN ('owner', 'admin', 'finance', 'support', 'viewer')),
  token_hash text NOT NULL,
  invited_by_type text NOT NULL,
  invited_by_id text,
  expires_at timestamptz NOT NULL,
  accepted_at timestamptz,
  revoked_at timestamptz,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id),
  UNIQUE (tenant_id, token_hash)
);
CREATE INDEX user_invitations_created ON user_invitations (tenant_id, created_at);

CREATE TABLE user_password_resets (
  tenant_id uuid NOT NULL,
  id uuid NOT NULL,
  user_id uuid NOT NULL,
  token_hash text NOT NULL,
  expires_at timestamptz NOT NULL,
  used_at timestamptz,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id),
  UNIQUE (tenant_id, token_hash),
  FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE
);

CREATE TABLE user_recovery_codes (
  tenant_id uuid NOT NULL,
  id uuid NOT NULL,
  user_id uuid NOT NULL,
  code_hash text NOT NULL,
  used_at timestamptz,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX user_recovery_codes_user ON user_recovery_codes (tenant_id, user_id);

CREATE TABLE audit_log (
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  id uuid NOT NULL,
  actor_type text NOT NULL CHECK (actor_type IN ('api_key', 'user', 'system')),
  actor_id text,
  actor_label text,
  action text NOT NULL,
  object_type text,
  object_id text,
  changes jsonb NOT NULL DEFAULT '{}',
  ip text,
  request_id text,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id)
);
CREATE INDEX audit_log_created ON audit_log (tenant_id, created_at, id);
CREATE INDEX audit_log_object ON audit_log (tenant_id, object_type, object_id);
CREATE INDEX audit_log_actor ON audit_log (tenant_id, actor_id);

-- Append-only: the database itself refuses to change or remove a record.
CREATE FUNCTION kosh_audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'audit_log is append-only (% refused)', TG_OP USING ERRCODE = 'KA403';
END;
$$;
CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON audit_log FOR EACH ROW EXECUTE FUNCTION kosh_audit_log_append_only();
CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log FOR EACH STATEMENT EXECUTE FUNCTION kosh_audit_log_append_only();
