-- Migration 0290 made legal_entities.functional_currency NOT NULL without a default, so a process
-- of the previous release creating a legal entity during a rolling upgrade would fail. Both
-- migrations apply in the same `kosh migrate`, before any old process sees the new schema: this
-- trigger fills the column on such inserts by 0290's backfill rule (INR for an Indian entity, else
-- the tenant's base currency). BEFORE triggers run before the NOT NULL check.
CREATE FUNCTION legal_entities_functional_currency() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.functional_currency IS NULL THEN
    NEW.functional_currency := CASE WHEN NEW.country_code = 'IN' THEN 'INR'
      ELSE coalesce((SELECT base_currency FROM tenants WHERE id = NEW.tenant_id), 'INR') END;
  END IF;
  RETURN NEW;
END $$;

CREATE TRIGGER legal_entities_functional_currency BEFORE INSERT ON legal_entities
  FOR EACH ROW EXECUTE FUNCTION legal_entities_functional_currency();
