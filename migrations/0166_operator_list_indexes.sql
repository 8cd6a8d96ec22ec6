-- Indexes behind the operator lists that read through paginate (decision 0035): the tenant's
-- operators (GET /v1/users, oldest first) and its invitations (GET /v1/users/invitations, newest
-- first), id breaking ties. The invitations index replaces the one without id.
CREATE INDEX users_tenant_created ON users (tenant_id, created_at, id);
CREATE INDEX user_invitations_recent ON user_invitations (tenant_id, created_at DESC, id DESC);
DROP INDEX user_invitations_created;
