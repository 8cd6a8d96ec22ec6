-- Refunds never reverse tax twice (DESIGN §20, docs/decisions/0250): a refund pays out the balance
-- of one or more credit notes — the note it issued itself, or notes issued before (a line note's
-- unspent credit, POST /v1/credit-notes/{id}/refunds) — so which notes, and how much of each, is a
-- table of its own. A refund of a note's balance may name no payment (an offline refund of goodwill
-- credit), and then no invoice.
ALTER TABLE refunds ALTER COLUMN payment_id DROP NOT NULL;
ALTER TABLE refunds ALTER COLUMN invoice_id DROP NOT NULL;
ALTER TABLE refunds ADD COLUMN customer_id uuid;
UPDATE refunds r SET customer_id = p.customer_id FROM payments p WHERE p.tenant_id = r.tenant_id AND p.id = r.payment_id;
ALTER TABLE refunds ALTER COLUMN customer_id SET NOT NULL;
-- true: the refund issued its own credit note (`credit_note_id`); false: it paid out notes issued before.
ALTER TABLE refunds ADD COLUMN issued_credit_note boolean NOT NULL DEFAULT true;

CREATE TABLE refund_credit_notes (
  tenant_id uuid NOT NULL,
  refund_id uuid NOT NULL,
  credit_note_id uuid NOT NULL,
  amount bigint NOT NULL CHECK (amount > 0),
  PRIMARY KEY (tenant_id, refund_id, credit_note_id),
  FOREIGN KEY (tenant_id, refund_id) REFERENCES refunds (tenant_id, id),
  FOREIGN KEY (tenant_id, credit_note_id) REFERENCES credit_notes (tenant_id, id)
);
INSERT INTO refund_credit_notes (tenant_id, refund_id, credit_note_id, amount) SELECT tenant_id, id, credit_note_id, amount FROM refunds;

-- GET /v1/refunds (newest first, cursor paged) and GET /v1/payments/{id}/refunds.
CREATE INDEX refunds_list ON refunds (tenant_id, created_at, id);
CREATE INDEX refunds_payment_list ON refunds (tenant_id, payment_id, created_at, id);
DROP INDEX refunds_payment;
