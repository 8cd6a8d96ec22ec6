-- Decision 0700: a paid top-up of prepaid credit is an advance for GST. Its GST is due when the
-- payment is received (CGST Act s.13(2)), under a receipt voucher (CGST Rules, rule 50; GSTR-1
-- table 11A), and each draw-down adjusts the tax paid on the part drawn (table 11B). The voucher
-- is a customer advance that belongs to the credit grant: no payment row of its own (the top-up
-- invoice was paid), so payment_id may be empty when credit_grant_id is set. Such an advance is
-- spent only by its grant's draw-downs, never applied or refunded as a plain advance.
ALTER TABLE customer_advances ADD COLUMN credit_grant_id uuid;
ALTER TABLE customer_advances ALTER COLUMN payment_id DROP NOT NULL;
-- contract: rows of the previous release always carry a payment_id, so they all satisfy it.
ALTER TABLE customer_advances ADD CONSTRAINT customer_advances_source_check
  CHECK (payment_id IS NOT NULL OR credit_grant_id IS NOT NULL);
CREATE UNIQUE INDEX customer_advances_credit_grant ON customer_advances (tenant_id, credit_grant_id) WHERE credit_grant_id IS NOT NULL;

-- The customer balance statement: a top-up's voucher is the money behind a paid credit grant,
-- which the statement already shows in source `prepaid_credit` (migrations/0395); it is not a
-- spendable advance of its own, so the advance branches leave it out. The rest is unchanged.
CREATE OR REPLACE VIEW customer_balance_transactions AS
SELECT a.tenant_id, a.id, a.customer_id, a.currency, 'advances'::text AS source, a.id AS source_id,
       'advance_received'::text AS type, a.amount::bigint AS amount,
       'receipt_voucher'::text AS document_type, a.id AS document_id, a.number AS document_number,
       a.received_at AS created_at
FROM customer_advances a
WHERE a.credit_grant_id IS NULL
UNION ALL
SELECT m.tenant_id, m.id, a.customer_id, a.currency, 'advances', a.id,
       CASE m.kind WHEN 'applied' THEN 'advance_applied' ELSE 'advance_refunded' END,
       -m.amount::bigint,
       CASE m.kind WHEN 'applied' THEN 'invoice' ELSE 'refund_voucher' END,
       CASE m.kind WHEN 'applied' THEN m.invoice_id ELSE m.id END,
       CASE m.kind WHEN 'applied' THEN i.number ELSE m.number END,
       m.created_at
FROM advance_movements m
JOIN customer_advances a ON a.tenant_id = m.tenant_id AND a.id = m.advance_id
LEFT JOIN invoices i ON i.tenant_id = m.tenant_id AND i.id = m.invoice_id
WHERE a.credit_grant_id IS NULL
UNION ALL
SELECT c.tenant_id, c.id, c.customer_id, c.currency, 'credit_notes', c.id, 'credit_note_issued', c.amount::bigint,
       'credit_note', c.id, c.number, c.issued_at
FROM credit_notes c
WHERE c.issued_at IS NOT NULL AND c.status NOT IN ('pending_approval', 'rejected')
UNION ALL
SELECT ap.tenant_id, ap.id, c.customer_id, c.currency, 'credit_notes', c.id, 'credit_note_applied', -ap.amount::bigint,
       'invoice', ap.invoice_id, i.number, ap.created_at
FROM credit_note_applications ap
JOIN credit_notes c ON c.tenant_id = ap.tenant_id AND c.id = ap.credit_note_id
LEFT JOIN invoices i ON i.tenant_id = ap.tenant_id AND i.id = ap.invoice_id
UNION ALL
SELECT rc.tenant_id, md5(rc.refund_id::text || rc.credit_note_id::text)::uuid, c.customer_id, c.currency, 'credit_notes', c.id,
       'credit_note_refunded', -rc.amount::bigint, 'refund', r.id, NULL, r.created_at
FROM refund_credit_notes rc
JOIN refunds r ON r.tenant_id = rc.tenant_id AND r.id = rc.refund_id
JOIN credit_notes c ON c.tenant_id = rc.tenant_id AND c.id = rc.credit_note_id
WHERE c.status NOT IN ('pending_approval', 'rejected')
UNION ALL
SELECT rc.tenant_id, md5(rc.refund_id::text || rc.credit_note_id::text || ':failed')::uuid, c.customer_id, c.currency, 'credit_notes', c.id,
       'credit_note_refund_failed', rc.amount::bigint, 'refund', r.id, NULL, r.updated_at
FROM refund_credit_notes rc
JOIN refunds r ON r.tenant_id = rc.tenant_id AND r.id = rc.refund_id
JOIN credit_notes c ON c.tenant_id = rc.tenant_id AND c.id = rc.credit_note_id
WHERE r.status = 'failed' AND c.status NOT IN ('pending_approval', 'rejected')
UNION ALL
SELECT c.tenant_id, md5(c.id::text || ':' || c.status)::uuid, c.customer_id, c.currency, 'credit_notes', c.id,
       'credit_note_' || CASE c.status WHEN 'void' THEN 'voided' ELSE 'expired' END,
       -(c.amount
         - coalesce((SELECT sum(ap.amount) FROM credit_note_applications ap WHERE ap.tenant_id = c.tenant_id AND ap.credit_note_id = c.id), 0)
         - coalesce((SELECT sum(rc.amount) FROM refund_credit_notes rc JOIN refunds r ON r.tenant_id = rc.tenant_id AND r.id = rc.refund_id
                     WHERE rc.tenant_id = c.tenant_id AND rc.credit_note_id = c.id AND r.status <> 'failed'), 0))::bigint,
       'credit_note', c.id, c.number, coalesce(c.expired_at, c.voided_at, c.updated_at)
FROM credit_notes c
WHERE c.status IN ('expired', 'void') AND c.issued_at IS NOT NULL
UNION ALL
SELECT m.tenant_id, m.id, m.customer_id, g.currency,
       CASE g.category WHEN 'paid' THEN 'prepaid_credit' ELSE 'promotional_credit' END, g.id,
       'credit_' || m.kind,
       CASE m.kind WHEN 'granted' THEN m.amount ELSE -m.amount END::bigint,
       CASE WHEN m.kind = 'drawn' OR (m.kind = 'granted' AND g.invoice_id IS NOT NULL) THEN 'invoice' ELSE 'credit_grant' END,
       CASE WHEN m.kind = 'drawn' THEN m.invoice_id WHEN m.kind = 'granted' AND g.invoice_id IS NOT NULL THEN g.invoice_id ELSE g.id END,
       i.number,
       m.created_at
FROM credit_grant_movements m
JOIN credit_grants g ON g.tenant_id = m.tenant_id AND g.id = m.grant_id
LEFT JOIN invoices i ON i.tenant_id = m.tenant_id
  AND i.id = CASE WHEN m.kind = 'drawn' THEN m.invoice_id WHEN m.kind = 'granted' THEN g.invoice_id END
-- A pending grant voided with its unpaid top-up was never spendable: its void is no movement here.
WHERE m.kind <> 'voided'
   OR EXISTS (SELECT 1 FROM credit_grant_movements x WHERE x.tenant_id = m.tenant_id AND x.grant_id = m.grant_id AND x.kind = 'granted');
