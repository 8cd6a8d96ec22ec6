-- Offline refunds paid out by hand (docs/decisions/0570): a refund that no gateway carries stays
-- `pending` in refunds payable (2320) until an operator records that the money left (bank
-- transfer, cash, cheque) with its date and reference, or that it will not be paid.
ALTER TABLE refunds ADD COLUMN paid_at timestamptz;
ALTER TABLE refunds ADD COLUMN reference text;
