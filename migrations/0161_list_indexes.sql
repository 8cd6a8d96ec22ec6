-- Indexes behind lists that read through paginate (decision 0035): newest first by their order
-- column with id breaking ties, so a page and a cursor page read an index in list order.
CREATE INDEX accounting_sync_records_recent ON accounting_sync_records (tenant_id, updated_at DESC, id DESC);
CREATE INDEX dunning_executions_recent ON dunning_executions (tenant_id, started_at DESC, id DESC);
