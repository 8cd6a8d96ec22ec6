-- The customer portal's actions are audited with the customer as the actor (decision 0640):
-- actor_type widens to 'customer'. Every value the previous release writes stays allowed.
-- contract: replaced at once by a wider CHECK; the previous release writes only api_key, user and system
ALTER TABLE audit_log DROP CONSTRAINT IF EXISTS audit_log_actor_type_check;
-- contract: widens the CHECK just dropped (api_key, user, system, and now customer); NOT VALID, so adding it does not scan the log under a lock
ALTER TABLE audit_log ADD CONSTRAINT audit_log_actor_type_check CHECK (actor_type IN ('api_key', 'user', 'system', 'customer')) NOT VALID;
ALTER TABLE audit_log VALIDATE CONSTRAINT audit_log_actor_type_check;
