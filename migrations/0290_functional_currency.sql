-- Functional-currency books (DESIGN §19, docs/decisions/0290): every journal line carries its
-- value in the entity's functional currency (INR for an Indian entity) beside the transaction
-- currency's amount, and each entry balances in both. Foreign documents keep the rate they were
-- booked at: credit notes get the INR amounts invoices already have (CGST Rules, rule 34), and
-- payments and refunds the rate of their date.

-- The entity's functional currency: INR for an Indian entity, else the tenant's base currency.
ALTER TABLE legal_entities ADD COLUMN functional_currency char(3);
UPDATE legal_entities e SET functional_currency = CASE WHEN e.country_code = 'IN' THEN 'INR' ELSE t.base_currency END
  FROM tenants t WHERE t.id = e.tenant_id;
UPDATE legal_entities SET functional_currency = 'INR' WHERE functional_currency IS NULL;
ALTER TABLE legal_entities ALTER COLUMN functional_currency SET NOT NULL;

-- exchange_rate: functional currency per one unit of the entry's currency for the lines valued at
-- the transaction's rate (null when the entry is in the functional currency).
ALTER TABLE journal_entries
  ADD COLUMN functional_currency char(3),
  ADD COLUMN exchange_rate text CHECK (exchange_rate ~ '^[0-9]{1,9}(\.[0-9]{1,6})?$');

ALTER TABLE journal_lines
  ADD COLUMN functional_debit bigint CHECK (functional_debit >= 0),
  ADD COLUMN functional_credit bigint CHECK (functional_credit >= 0);

-- Entries booked before: those in the entity's functional currency have the same functional
-- amounts. Entries of a foreign currency booked before keep null functional amounts (the rate
-- they would need was never recorded on them); docs/decisions/0290 says how to restate them.
ALTER TABLE journal_entries DISABLE TRIGGER journal_entries_append_only;
ALTER TABLE journal_lines DISABLE TRIGGER journal_lines_append_only;
UPDATE journal_entries je SET functional_currency = e.functional_currency
  FROM legal_entities e WHERE e.tenant_id = je.tenant_id AND e.id = je.entity_id;
UPDATE journal_lines jl SET functional_debit = jl.debit, functional_credit = jl.credit
  FROM journal_entries je
  WHERE je.tenant_id = jl.tenant_id AND je.id = jl.entry_id AND je.currency = je.functional_currency;
ALTER TABLE journal_entries ENABLE TRIGGER journal_entries_append_only;
ALTER TABLE journal_lines ENABLE TRIGGER journal_lines_append_only;

-- Balanced in the transaction currency and, when its lines carry them, in functional amounts.
CREATE OR REPLACE FUNCTION kosh_check_entry_balanced() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  difference numeric;
  functional_difference numeric;
  unvalued integer;
  line_count integer;
BEGIN
  SELECT coalesce(sum(debit), 0) - coalesce(sum(credit), 0),
         coalesce(sum(functional_debit), 0) - coalesce(sum(functional_credit), 0),
         count(*) FILTER (WHERE functional_debit IS NULL OR functional_credit IS NULL),
         count(*)
    INTO difference, functional_difference, unvalued, line_count
    FROM journal_lines WHERE tenant_id = NEW.tenant_id AND entry_id = NEW.entry_id;
  IF difference <> 0 THEN
    RAISE EXCEPTION 'journal entry % is unbalanced by %', NEW.entry_id, difference USING ERRCODE = '23514';
  END IF;
  IF unvalued = 0 AND functional_difference <> 0 THEN
    RAISE EXCEPTION 'journal entry % is unbalanced by % in the functional currency', NEW.entry_id, functional_difference USING ERRCODE = '23514';
  END IF;
  IF line_count < 2 THEN
    RAISE EXCEPTION 'journal entry % has fewer than two lines', NEW.entry_id USING ERRCODE = '23514';
  END IF;
  RETURN NULL;
END $$;

-- The INR value of a foreign-currency credit note (rule 34: the rate of its invoice's time of
-- supply; a standalone note the entity's rate of its issue date).
ALTER TABLE credit_notes
  ADD COLUMN exchange_rate text CHECK (exchange_rate ~ '^[0-9]{1,9}(\.[0-9]{1,6})?$'),
  ADD COLUMN inr_subtotal bigint CHECK (inr_subtotal >= 0),
  ADD COLUMN inr_cgst_amount bigint CHECK (inr_cgst_amount >= 0),
  ADD COLUMN inr_sgst_amount bigint CHECK (inr_sgst_amount >= 0),
  ADD COLUMN inr_igst_amount bigint CHECK (inr_igst_amount >= 0),
  ADD COLUMN inr_tax_amount bigint CHECK (inr_tax_amount >= 0),
  ADD COLUMN inr_total bigint CHECK (inr_total >= 0),
  ADD CONSTRAINT credit_notes_inr_tax CHECK (inr_tax_amount = inr_cgst_amount + inr_sgst_amount + inr_igst_amount);

-- Money received at the rate of its own date (Ind AS 21.21). A refund's rate is on its journal entry.
ALTER TABLE payments
  ADD COLUMN exchange_rate text CHECK (exchange_rate ~ '^[0-9]{1,9}(\.[0-9]{1,6})?$'),
  ADD COLUMN exchange_rate_source text CHECK (exchange_rate_source IN ('functional_currency', 'request', 'entity_rate_table', 'invoice')),
  ADD COLUMN functional_amount bigint CHECK (functional_amount >= 0);

-- A line is one-sided in the transaction currency, or — an exchange difference, which has no
-- transaction-currency amount — one-sided in the functional currency only.
ALTER TABLE journal_lines DROP CONSTRAINT IF EXISTS journal_lines_check;
ALTER TABLE journal_lines ADD CONSTRAINT journal_lines_one_sided CHECK (
  ((debit = 0) <> (credit = 0))
  OR (debit = 0 AND credit = 0 AND (coalesce(functional_debit, 0) = 0) <> (coalesce(functional_credit, 0) = 0))
);
