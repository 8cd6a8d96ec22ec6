-- A failed speculation (platform/db/speculation.ts) is a named error raised by the server, not a
-- deliberate division by zero: kosh_speculation_check(violated, what) raises SQLSTATE KS001 when
-- `violated` is true, so the deferred check fails the transaction before COMMIT. Decision 0590.
CREATE OR REPLACE FUNCTION kosh_speculation_check(violated boolean, what text) RETURNS integer LANGUAGE plpgsql AS $$
BEGIN
  IF violated THEN
    RAISE EXCEPTION 'speculation failed: %', what USING ERRCODE = 'KS001';
  END IF;
  RETURN 1;
END;
$$;
