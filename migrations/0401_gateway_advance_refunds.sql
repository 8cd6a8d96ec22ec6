-- Advances refunded through the gateway that brought them (docs/decisions/0401). The refund
-- voucher (rule 51) is issued as for any advance refund; the money goes back through the payment's
-- gateway as a refund row that pays out an advance instead of credit notes' balances.
ALTER TABLE refunds ALTER COLUMN credit_note_id DROP NOT NULL;
ALTER TABLE refunds ADD COLUMN advance_id uuid;
ALTER TABLE refunds ADD CONSTRAINT refunds_pays_out_something CHECK (credit_note_id IS NOT NULL OR advance_id IS NOT NULL);

-- How a refund voucher's money left: 'offline' (refunds payable, paid by hand) or 'gateway' (the refund row).
ALTER TABLE advance_movements ADD COLUMN payout text NOT NULL DEFAULT 'offline' CHECK (payout IN ('offline', 'gateway'));
ALTER TABLE advance_movements ADD COLUMN refund_id uuid;
