-- Decision 0800: the running quantity of each open recurring usage alert in its current period,
-- kept by the ingestion batches that move it, so evaluating an alert no longer re-aggregates the
-- period's events. One row per alert: a new period (or subscription period) reseeds it.
-- `total` is the period's count, sum or max of the alert's metric over [period_start, ∞) as
-- usage_events holds it (NULL: a max over no events). `unsettled` lists the transactions that
-- were in progress when the row was seeded; until none of them is, the total is measured again
-- (a batch in flight before the alert was visible adds no delta). Rows are updated by most batches:
-- half-empty pages keep those updates on the same page (HOT, no index entry).
CREATE TABLE usage_alert_totals (
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  alert_id uuid NOT NULL,
  period_start timestamptz NOT NULL,
  total numeric,
  unsettled xid8[] NOT NULL DEFAULT '{}',
  PRIMARY KEY (tenant_id, alert_id),
  FOREIGN KEY (tenant_id, alert_id) REFERENCES alerts (tenant_id, id)
) WITH (fillfactor = 50);
