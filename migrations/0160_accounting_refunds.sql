-- Accounting sync of refunds, and idempotent creates at providers without an idempotency key
-- (decision 0160).

-- A refund of a gateway payment is its own sync record (QuickBooks RefundReceipt, a Xero payment
-- on the refund's credit note, a Zoho Books credit-note refund).
ALTER TABLE accounting_sync_records DROP CONSTRAINT accounting_sync_records_record_type_check;
ALTER TABLE accounting_sync_records
  ADD CONSTRAINT accounting_sync_records_record_type_check
  CHECK (record_type IN ('customer', 'invoice', 'payment', 'payment_tds', 'credit_note', 'refund'));

-- Set (and committed) before a create is sent to a provider that has no idempotency key; cleared
-- when the outcome is recorded. Found set on the next attempt, it means an earlier create may have
-- reached the provider without Kosh recording its id: the sync looks the record up first.
ALTER TABLE accounting_sync_records ADD COLUMN create_started_at timestamptz;

-- The sync reads a tenant's succeeded refunds page by page.
CREATE INDEX refunds_succeeded ON refunds (tenant_id, created_at, id) WHERE status = 'succeeded';
