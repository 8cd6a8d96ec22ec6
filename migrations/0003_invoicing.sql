-- Invoicing core: gapless document counters, invoices and their lines, the double-entry ledger,
-- and offline payments.

-- One counter row per (entity, document kind). A number is taken only when a document is
-- finalized, by incrementing this row inside the finalizing transaction: the row lock serializes
-- finalizations, and a rollback returns the number, so the series has no gaps.
CREATE TABLE document_counters (
  tenant_id uuid NOT NULL,
  entity_id uuid NOT NULL,
  kind text NOT NULL CHECK (kind IN ('invoice', 'credit_note', 'quote')),
  last_value bigint NOT NULL CHECK (last_value >= 0),
  PRIMARY KEY (tenant_id, entity_id, kind),
  FOREIGN KEY (tenant_id, entity_id) REFERENCES legal_entities (tenant_id, id)
);

CREATE TABLE invoices (
  tenant_id uuid NOT NULL,
  id uuid NOT NULL,
  entity_id uuid NOT NULL,
  customer_id uuid NOT NULL,
  subscription_id uuid,
  number text,
  status text NOT NULL CHECK (status IN ('draft', 'open', 'paid', 'void', 'uncollectible')),
  billing_reason text NOT NULL DEFAULT 'manual',
  currency char(3) NOT NULL,
  subtotal bigint NOT NULL CHECK (subtotal >= 0),
  tax_amount bigint NOT NULL CHECK (tax_amount >= 0),
  cgst_amount bigint NOT NULL CHECK (cgst_amount >= 0),
  sgst_amount bigint NOT NULL CHECK (sgst_amount >= 0),
  igst_amount bigint NOT NULL CHECK (igst_amount >= 0),
  tax_type text NOT NULL DEFAULT '',
  utgst boolean NOT NULL DEFAULT false,
  place_of_supply text,
  total bigint NOT NULL CHECK (total >= 0),
  amount_paid bigint NOT NULL DEFAULT 0 CHECK (amount_paid >= 0),
  amount_tds bigint NOT NULL DEFAULT 0 CHECK (amount_tds >= 0),
  amount_credited bigint NOT NULL DEFAULT 0 CHECK (amount_credited >= 0),
  amount_due bigint NOT NULL CHECK (amount_due >= 0),
  period_start timestamptz,
  period_end timestamptz,
  issued_at timestamptz,
  due_date timestamptz,
  paid_at timestamptz,
  voided_at timestamptz,
  marked_uncollectible_at timestamptz,
  supplier jsonb,
  customer_details jsonb,
  memo text,
  metadata jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, entity_id) REFERENCES legal_entities (tenant_id, id),
  FOREIGN KEY (tenant_id, customer_id) REFERENCES customers (tenant_id, id),
  CHECK (amount_due = total - amount_paid - amount_credited),
  CHECK (total = subtotal + tax_amount),
  CHECK ((number IS NULL) = (status = 'draft') OR status = 'void')
);
CREATE UNIQUE INDEX invoices_number ON invoices (tenant_id, entity_id, number) WHERE number IS NOT NULL;
CREATE INDEX invoices_tenant_created ON invoices (tenant_id, created_at DESC, id DESC);
CREATE INDEX invoices_customer ON invoices (tenant_id, customer_id, created_at DESC);
CREATE INDEX invoices_open_due ON invoices (tenant_id, due_date) WHERE status = 'open';

CREATE TABLE invoice_lines (
  tenant_id uuid NOT NULL,
  id uuid NOT NULL,
  invoice_id uuid NOT NULL,
  position integer NOT NULL,
  description text NOT NULL,
  quantity bigint NOT NULL CHECK (quantity >= 1),
  unit_amount bigint NOT NULL CHECK (unit_amount >= 0),
  amount bigint NOT NULL CHECK (amount >= 0),
  hsn_code text NOT NULL,
  rate_bp integer NOT NULL CHECK (rate_bp >= 0),
  cgst_amount bigint NOT NULL CHECK (cgst_amount >= 0),
  sgst_amount bigint NOT NULL CHECK (sgst_amount >= 0),
  igst_amount bigint NOT NULL CHECK (igst_amount >= 0),
  tax_amount bigint NOT NULL CHECK (tax_amount >= 0),
  total bigint NOT NULL CHECK (total >= 0),
  plan_id uuid,
  price_id uuid,
  period_start timestamptz,
  period_end timestamptz,
  PRIMARY KEY (tenant_id, id),
  UNIQUE (tenant_id, invoice_id, position),
  FOREIGN KEY (tenant_id, invoice_id) REFERENCES invoices (tenant_id, id)
);

-- The double-entry ledger. Each entry lives in one entity's ledger (tb_ledger_id). The database
-- refuses an unbalanced entry at commit (deferred constraint trigger) and refuses any UPDATE or
-- DELETE: corrections are new entries that reference the old.
CREATE TABLE journal_entries (
  tenant_id uuid NOT NULL,
  id uuid NOT NULL,
  ledger_id integer NOT NULL,
  entity_id uuid NOT NULL,
  kind text NOT NULL,
  reference_type text NOT NULL,
  reference_id uuid NOT NULL,
  currency char(3) NOT NULL,
  description text NOT NULL DEFAULT '',
  posted_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id),
  -- One posting per business event: the same event can never be booked twice.
  UNIQUE (tenant_id, kind, reference_id),
  FOREIGN KEY (tenant_id, entity_id) REFERENCES legal_entities (tenant_id, id)
);
CREATE INDEX journal_entries_reference ON journal_entries (tenant_id, reference_type, reference_id);

CREATE TABLE journal_lines (
  tenant_id uuid NOT NULL,
  id uuid NOT NULL,
  entry_id uuid NOT NULL,
  account_code integer NOT NULL,
  debit bigint NOT NULL DEFAULT 0 CHECK (debit >= 0),
  credit bigint NOT NULL DEFAULT 0 CHECK (credit >= 0),
  customer_id uuid,
  invoice_id uuid,
  credit_note_id uuid,
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, entry_id) REFERENCES journal_entries (tenant_id, id),
  CHECK ((debit = 0) <> (credit = 0))
);
CREATE INDEX journal_lines_entry ON journal_lines (tenant_id, entry_id);
CREATE INDEX journal_lines_invoice ON journal_lines (tenant_id, invoice_id, account_code) WHERE invoice_id IS NOT NULL;
CREATE INDEX journal_lines_credit_note ON journal_lines (tenant_id, credit_note_id) WHERE credit_note_id IS NOT NULL;

CREATE FUNCTION kosh_check_entry_balanced() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  difference numeric;
  line_count integer;
BEGIN
  SELECT coalesce(sum(debit), 0) - coalesce(sum(credit), 0), count(*)
    INTO difference, line_count
    FROM journal_lines WHERE tenant_id = NEW.tenant_id AND entry_id = NEW.entry_id;
  IF difference <> 0 THEN
    RAISE EXCEPTION 'journal entry % is unbalanced by %', NEW.entry_id, difference USING ERRCODE = '23514';
  END IF;
  IF line_count < 2 THEN
    RAISE EXCEPTION 'journal entry % has fewer than two lines', NEW.entry_id USING ERRCODE = '23514';
  END IF;
  RETURN NULL;
END $$;

CREATE CONSTRAINT TRIGGER journal_lines_balanced
  AFTER INSERT ON journal_lines
  DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW EXECUTE FUNCTION kosh_check_entry_balanced();

-- An entry with no lines at all is caught here (the line trigger never fires for it).
CREATE FUNCTION kosh_check_entry_has_lines() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM journal_lines WHERE tenant_id = NEW.tenant_id AND entry_id = NEW.id) THEN
    RAISE EXCEPTION 'journal entry % has no lines', NEW.id USING ERRCODE = '23514';
  END IF;
  RETURN NULL;
END $$;

CREATE CONSTRAINT TRIGGER journal_entries_have_lines
  AFTER INSERT ON journal_entries
  DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW EXECUTE FUNCTION kosh_check_entry_has_lines();

CREATE FUNCTION kosh_refuse_ledger_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'the ledger is append-only: % on % refused', TG_OP, TG_TABLE_NAME USING ERRCODE = '42501';
END $$;

CREATE TRIGGER journal_entries_append_only BEFORE UPDATE OR DELETE ON journal_entries
  FOR EACH ROW EXECUTE FUNCTION kosh_refuse_ledger_change();
CREATE TRIGGER journal_lines_append_only BEFORE UPDATE OR DELETE ON journal_lines
  FOR EACH ROW EXECUTE FUNCTION kosh_refuse_ledger_change();

CREATE TABLE payments (
  tenant_id uuid NOT NULL,
  id uuid NOT NULL,
  customer_id uuid NOT NULL,
  invoice_id uuid,
  payment_type text NOT NULL CHECK (payment_type IN ('bank_transfer', 'cash', 'cheque')),
  channel text NOT NULL DEFAULT 'offline',
  status text NOT NULL DEFAULT 'succeeded',
  amount bigint NOT NULL CHECK (amount > 0),
  tds_amount bigint NOT NULL DEFAULT 0 CHECK (tds_amount >= 0),
  currency char(3) NOT NULL,
  reference_number text NOT NULL DEFAULT '',
  notes text NOT NULL DEFAULT '',
  recorded_by text NOT NULL DEFAULT '',
  recorded_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, customer_id) REFERENCES customers (tenant_id, id),
  FOREIGN KEY (tenant_id, invoice_id) REFERENCES invoices (tenant_id, id)
);
CREATE INDEX payments_tenant_created ON payments (tenant_id, created_at DESC, id DESC);
CREATE INDEX payments_invoice ON payments (tenant_id, invoice_id) WHERE invoice_id IS NOT NULL;

-- Credit notes and quotes have their own gapless series per entity, with their own prefixes.
ALTER TABLE legal_entities
  ADD COLUMN credit_note_prefix text NOT NULL DEFAULT 'CN-' CHECK (credit_note_prefix ~ '^[A-Z0-9/-]{1,9}$'),
  ADD COLUMN quote_prefix text NOT NULL DEFAULT 'QT-' CHECK (quote_prefix ~ '^[A-Z0-9/-]{1,9}$');
