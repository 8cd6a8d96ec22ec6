-- Jobs carry the mode of their tenant (decision 0030): a test-mode and a live-mode deployment may
-- share a database, and each worker runs only its own mode's jobs. A job without a tenant
-- (platform maintenance) has no mode and may run in either.
ALTER TABLE jobs ADD COLUMN mode text CHECK (mode IN ('test', 'live'));
UPDATE jobs SET mode = tenants.mode FROM tenants WHERE jobs.tenant_id = tenants.id;
