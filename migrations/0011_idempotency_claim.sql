-- Claiming an Idempotency-Key in one statement nobody waits for (src/platform/idempotency/idempotency.ts):
-- takes the key's transaction lock (SQLSTATE KI409 when another transaction holds it, as
-- kosh_idempotency_lock does, with the same lock key), then raises SQLSTATE KI200 when the key
-- already has a live stored response. A VOLATILE function takes a fresh snapshot for each of its
-- statements, so the lookup sees what the lock's previous holder committed. Raised, not returned:
-- the request's own statements follow the claim in the same round trip, and a replay's error
-- aborts them — the caller then rolls back and answers the stored response.
CREATE FUNCTION kosh_idempotency_claim(claim_tenant uuid, claim_key text, claim_now timestamptz) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF NOT pg_try_advisory_xact_lock(hashtextextended('idem:' || claim_tenant::text || ':' || claim_key, 0)) THEN
    RAISE EXCEPTION 'idempotency key in use' USING ERRCODE = 'KI409';
  END IF;
  IF EXISTS (SELECT 1 FROM idempotency_keys WHERE tenant_id = claim_tenant AND key = claim_key AND expires_at > claim_now) THEN
    RAISE EXCEPTION 'idempotency key has a stored response' USING ERRCODE = 'KI200';
  END IF;
END;
$$;
