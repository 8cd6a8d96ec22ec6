-- Usage events partitioned by month of `ts` (DESIGN §22 "Data growth", docs/decisions/0322).
--
-- The partition key must be part of every unique index, so the table's key becomes
-- (tenant_id, transaction_id, ts). Deduplication by (tenant_id, transaction_id) whatever the
-- timestamp — an event sent again without a timestamp is stamped with a new instant — moves to a
-- narrow table of keys, written by the same statement as the events. Months are made ahead by
-- the worker (`usage.maintain_partitions`); anything outside them lands in the DEFAULT partition
-- and is moved out when its month is made. Old months are dropped whole under
-- KOSH_USAGE_RETENTION_MONTHS, with their keys.
--
-- The existing rows are copied once (this migration's run time grows with the table); the
-- previous release's insert (ON CONFLICT DO NOTHING) still works on the new table.

-- contract: the table is renamed only to be copied into a new usage_events with the same columns;
-- the previous release reads and writes the name usage_events, which exists again below.
ALTER TABLE usage_events RENAME TO usage_events_before_partitioning;
ALTER INDEX usage_events_aggregation RENAME TO usage_events_before_partitioning_aggregation;
ALTER TABLE usage_events_before_partitioning RENAME CONSTRAINT usage_events_pkey TO usage_events_before_partitioning_pkey;

CREATE TABLE usage_events (
  tenant_id uuid NOT NULL,
  transaction_id text NOT NULL,
  customer_id uuid NOT NULL,
  metric_id uuid NOT NULL,
  ts timestamptz NOT NULL,
  value numeric,
  value_key text,
  properties jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, transaction_id, ts)
) PARTITION BY RANGE (ts);
CREATE INDEX usage_events_aggregation ON usage_events (tenant_id, customer_id, metric_id, ts) INCLUDE (value);
CREATE TABLE usage_events_default PARTITION OF usage_events DEFAULT;

CREATE TABLE usage_event_keys (
  tenant_id uuid NOT NULL,
  transaction_id text NOT NULL,
  ts timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, transaction_id)
);
-- Retention deletes keys by age.
CREATE INDEX usage_event_keys_ts ON usage_event_keys (ts);

-- One partition per month that has events, and this month and the next two (UTC months).
DO $$
DECLARE
  month timestamp; -- a UTC month start, without time zone so month arithmetic ignores the session's zone
BEGIN
  FOR month IN
    SELECT DISTINCT date_trunc('month', ts AT TIME ZONE 'UTC') FROM usage_events_before_partitioning
    UNION
    SELECT date_trunc('month', now() AT TIME ZONE 'UTC') + make_interval(months => n) FROM generate_series(0, 2) AS n
  LOOP
    EXECUTE format('CREATE TABLE %I PARTITION OF usage_events FOR VALUES FROM (%L) TO (%L)',
      'usage_events_p' || to_char(month, 'YYYYMM'), month AT TIME ZONE 'UTC', (month + interval '1 month') AT TIME ZONE 'UTC');
  END LOOP;
END $$;

INSERT INTO usage_events SELECT tenant_id, transaction_id, customer_id, metric_id, ts, value, value_key, properties, created_at FROM usage_events_before_partitioning;
INSERT INTO usage_event_keys SELECT tenant_id, transaction_id, ts FROM usage_events_before_partitioning;
-- contract: the copy made above; no release has ever used this name.
DROP TABLE usage_events_before_partitioning;
