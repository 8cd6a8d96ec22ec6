-- The customer balance statement (DESIGN §20, docs/decisions/0281): every movement of what a
-- customer can spend, one row each, from the records that already hold them — advances (receipt,
-- application, refund voucher) and credit notes (issue, application, refund paid out or failed,
-- expiry or void of what was left). A view, not a table: the records stay the one truth, and a
-- customer's balance per source is the sum of its rows. Another source (prepaid credit grants,
-- DESIGN §23) is one more UNION ALL branch with its own `source`.
-- amount: positive adds to the balance, negative takes from it. Ids of derived rows are stable
-- UUIDs made from the records they come from (for cursor paging).
CREATE VIEW customer_balance_transactions AS
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
WHERE c.status IN ('expired', 'void') AND c.issued_at IS NOT NULL;
