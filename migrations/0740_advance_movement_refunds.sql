-- Decision 0740: every refund voucher of an advance now names the refund row that pays it out
-- (through the gateway, or by hand: POST /v1/refunds/{id}/mark_paid), and mark_paid finds the
-- voucher by that refund to take refunds payable out at the value the voucher booked.
CREATE INDEX advance_movements_refund ON advance_movements (tenant_id, refund_id) WHERE refund_id IS NOT NULL;

-- An advance's gateway refund the gateway refused leaves its refund voucher standing and the money
-- owed by hand: an offline refund replacing it carries that money (mark_paid), and names it.
ALTER TABLE refunds ADD COLUMN replaces_refund_id uuid;
