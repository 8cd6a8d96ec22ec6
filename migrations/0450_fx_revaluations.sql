-- Month-end revaluation of open foreign-currency receivables (DESIGN §19, docs/decisions/0450):
-- one row per entity × month × currency revalued. Its two journal entries (`fx.revaluation` at the
-- month's last instant, `fx.revaluation_reversed` at the next month's first) refer to it, so a
-- month is revalued once whether the month-end job or the close gets there first.
CREATE TABLE fx_revaluations (
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  id uuid NOT NULL,
  entity_id uuid NOT NULL,
  period text NOT NULL CHECK (period ~ '^[0-9]{4}-(0[1-9]|1[0-2])$'),
  currency char(3) NOT NULL,
  -- The closing rate: functional currency per one unit of `currency` at the month's end.
  rate text NOT NULL CHECK (rate ~ '^[0-9]{1,9}(\.[0-9]{1,6})?$'),
  -- Σ (open receivable at the closing rate − its carried functional value); + a gain, − a loss.
  difference bigint NOT NULL,
  invoice_count integer NOT NULL CHECK (invoice_count >= 0),
  revalued_at timestamptz NOT NULL,
  reversed_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id),
  UNIQUE (tenant_id, entity_id, period, currency),
  FOREIGN KEY (tenant_id, entity_id) REFERENCES legal_entities (tenant_id, id)
);
