-- The month-end revaluation job (docs/decisions/0450) finds the entities that ever invoiced in a
-- currency other than their functional one; a partial index keeps that sweep small.
CREATE INDEX journal_entries_foreign_invoices ON journal_entries (tenant_id, entity_id, currency)
  WHERE kind = 'invoice.finalized' AND currency <> functional_currency;
