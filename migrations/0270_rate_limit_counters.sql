-- Rate-limit budgets shared by every API process (DESIGN §22 "Processes", docs/decisions/0270): one
-- row per budget, key (an API key id, a client address, an e-mail and address…) and fixed window,
-- counted with INSERT … ON CONFLICT DO UPDATE. A platform table: no tenant data, never distributed.
CREATE TABLE rate_limit_counters (
  budget text NOT NULL,
  key text NOT NULL,
  window_start timestamptz NOT NULL,
  hits integer NOT NULL CHECK (hits >= 0),
  PRIMARY KEY (budget, key, window_start)
);
-- Old windows are purged by window_start alone.
CREATE INDEX rate_limit_counters_window_start ON rate_limit_counters (window_start);
