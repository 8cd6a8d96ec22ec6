-- A filed return is kept as the text it was filed with (DESIGN §18: a filed return regenerated is
-- byte-identical). jsonb reorders an object's keys (shorter keys first), so a return read back
-- from jsonb listed GSTR-3B's table 3.1 rows in another order than when it was filed; json keeps
-- the text as written. Returns filed before this keep jsonb's order (their text is lost).
-- contract: the previous release writes JSON.stringify text and reads a parsed object, which json gives as jsonb did
ALTER TABLE entity_periods ALTER COLUMN gstr1_return TYPE json USING gstr1_return::json;
-- contract: the previous release writes JSON.stringify text and reads a parsed object, which json gives as jsonb did
ALTER TABLE entity_periods ALTER COLUMN gstr3b_return TYPE json USING gstr3b_return::json;
