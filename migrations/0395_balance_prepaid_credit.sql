-- The customer balance statement gains prepaid credit grants (DESIGN §23, decision 0340): every
-- movement of a grant (granted when spendable, drawn by an invoice, expired, voided) is one row, in
-- source `prepaid_credit` (paid grants, sold through a top-up invoice) or `promotional_credit`
-- (a discount before GST). The earlier branches are unchanged (migrations/0281).
CREATE OR REPLACE VIEW customer_balance_transactions AS
SELECT a.tenant_id, a.id, a.customer_id, a.currency, 'advances'::text AS source, a.id AS source_id,
       'advance_received'::text AS type, a.amount::bigint AS amount,
       'receipt_voucher'::text AS document_type, a.id AS document_id, a.number AS document_number,
       a.received_at AS created_at
FROM customer_advances a
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
