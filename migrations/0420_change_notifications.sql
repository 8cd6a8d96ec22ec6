-- Every process caches API keys and customers' entitlements in memory (docs/decisions/0420). These
-- triggers tell all of them what changed, whoever changed it: `pg_notify` in the changing
-- transaction, delivered to every listening session only if and when it commits (PostgreSQL drops
-- repeated identical payloads of one transaction).
CREATE FUNCTION kosh_notify_entitlements() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('kosh_changes', 'entitlements:' || NEW.tenant_id::text);
  RETURN NULL;
END
$$;

CREATE TRIGGER entitlement_changes_notify AFTER INSERT ON entitlement_changes
  FOR EACH ROW EXECUTE FUNCTION kosh_notify_entitlements();

-- A key revoked, renamed, re-roled, moved or deleted: every process forgets it. Marking it used
-- (last_used_at, at most hourly from the request path) changes nothing a cache holds.
CREATE FUNCTION kosh_notify_api_key() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' OR (to_jsonb(OLD) - 'last_used_at') IS DISTINCT FROM (to_jsonb(NEW) - 'last_used_at') THEN
    PERFORM pg_notify('kosh_changes', 'api_key:' || OLD.id::text);
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER api_keys_notify AFTER UPDATE OR DELETE ON api_keys
  FOR EACH ROW EXECUTE FUNCTION kosh_notify_api_key();

-- A tenant's mode decides whether its keys are accepted (key_mode_mismatch).
CREATE FUNCTION kosh_notify_tenant() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('kosh_changes', 'tenant:' || OLD.id::text);
  RETURN NULL;
END
$$;

CREATE TRIGGER tenants_notify AFTER UPDATE OF mode OR DELETE ON tenants
  FOR EACH ROW EXECUTE FUNCTION kosh_notify_tenant();
