-- Decision 0900: ingestion queues what each batch stored for the usage alerts, and the worker folds
-- the queue into their running totals (usage_alert_totals) about once a second. One row per batch
-- (while its tenant has an active usage alert), aligned per (customer, metric id) pair: the values
-- of the pair's events (a numeric[] literal each, NULL for events without one), its earliest
-- event, and whether every event of the batch was new (`exact`: its events are the deltas). A row
-- is visible exactly when its batch's events are; the fold deletes the rows it counts.
CREATE TABLE usage_alert_pending (
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  id bigint GENERATED ALWAYS AS IDENTITY,
  customers uuid[] NOT NULL,
  metrics uuid[] NOT NULL,
  vals text[] NOT NULL,
  earliest timestamptz[] NOT NULL,
  exact boolean NOT NULL,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id)
);
