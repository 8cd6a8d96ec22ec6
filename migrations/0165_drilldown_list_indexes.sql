-- Indexes behind the drill-down lists that read through paginate (decision 0035).
--
-- The collections queue (GET /v1/collections) and the invoice-aging bucket list
-- (GET /v1/analytics/invoice-aging?bucket=) read open invoices oldest due first, id breaking ties;
-- an aging bucket is a due_date range.
CREATE INDEX invoices_open_due_id ON invoices (tenant_id, due_date, id) WHERE status = 'open';
-- It serves every use of the (tenant_id, due_date) index it replaces.
DROP INDEX invoices_open_due;

-- The MRR waterfall bucket list (GET /v1/analytics/mrr/waterfall?bucket=&month=) pages movements of
-- one currency and kind by date. A movement gets an id, so a page can name its cursor.
ALTER TABLE mrr_movements ADD COLUMN id uuid NOT NULL DEFAULT gen_random_uuid();
CREATE UNIQUE INDEX mrr_movements_id ON mrr_movements (tenant_id, id);
CREATE INDEX mrr_movements_bucket ON mrr_movements (tenant_id, currency, kind, effective_date, id);
