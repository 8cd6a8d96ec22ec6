-- Taking an Idempotency-Key's lock without waiting for the answer (src/platform/db/pipeline.ts):
-- instead of returning false when another transaction holds the key, this raises SQLSTATE KI409,
-- so the lock can travel in the same round trip as BEGIN and the read of the stored response.
-- The read is a separate statement, so its snapshot is taken after the lock is held.
CREATE FUNCTION kosh_idempotency_lock(lock_key text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF NOT pg_try_advisory_xact_lock(hashtextextended(lock_key, 0)) THEN
    RAISE EXCEPTION 'idempotency key in use' USING ERRCODE = 'KI409';
  END IF;
END;
$$;
