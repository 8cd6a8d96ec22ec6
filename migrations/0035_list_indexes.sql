-- Lists read their page in index order (test/platform/lists.test.ts EXPLAINs every list). Legal
-- entities are listed by ledger id with the id breaking ties, like every other list's order.
CREATE INDEX legal_entities_tenant_ledger ON legal_entities (tenant_id, tb_ledger_id, id);
