-- API keys carry a role (DESIGN §21 "Roles reach keys", docs/decisions/0220): the same role table
-- that governs operators governs keys. New keys default to admin; a key or operator grants at most
-- its own role. Keys that exist today keep working: each tenant's first key (the one registration
-- answered, the tenant's founding credential) becomes owner, every later key admin.
ALTER TABLE api_keys ADD COLUMN role text NOT NULL DEFAULT 'admin' CHECK (role IN ('owner', 'admin', 'finance', 'support', 'viewer'));
UPDATE api_keys SET role = 'owner'
WHERE id IN (SELECT DISTINCT ON (tenant_id) id FROM api_keys ORDER BY tenant_id, created_at, id);
