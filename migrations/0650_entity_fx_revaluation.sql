-- Decision 0650: how often an entity revalues its open foreign-currency receivables at the closing
-- rate. 'monthly' (every month end, the behaviour before this column) is the default, so rows the
-- previous release inserts keep today's behaviour.
ALTER TABLE legal_entities ADD COLUMN fx_revaluation text NOT NULL DEFAULT 'monthly'
  CHECK (fx_revaluation IN ('monthly', 'year_end', 'off'));
