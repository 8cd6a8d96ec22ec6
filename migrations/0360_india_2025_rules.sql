-- India's 2025–26 rules (DESIGN §25; decisions 0360–0364).
-- The entity's aggregate annual turnover band: 6-digit HSN in GSTR-1 above ₹5 crore, the IRP's
-- 30-day reporting limit from ₹10 crore. And whether its series restart every financial year.
ALTER TABLE legal_entities ADD COLUMN aato_band text NOT NULL DEFAULT 'up_to_5_crore'
  CHECK (aato_band IN ('up_to_5_crore', 'above_5_crore', '10_crore_or_more'));
ALTER TABLE legal_entities ADD COLUMN number_series_reset text NOT NULL DEFAULT 'never'
  CHECK (number_series_reset IN ('never', 'financial_year'));

-- A counter per series: '' for a series that never restarts, the financial year ('2026-27') for
-- one that restarts every year. Still one locked row per number taken: gapless per series.
ALTER TABLE document_counters ADD COLUMN series text NOT NULL DEFAULT '';
ALTER TABLE document_counters DROP CONSTRAINT document_counters_pkey;
ALTER TABLE document_counters ADD PRIMARY KEY (tenant_id, entity_id, kind, series);

-- Document numbers are case-insensitive (GSTR-1, and the IRP from 1 June 2025): two documents of
-- one entity whose numbers differ only in case are refused by the database too.
DROP INDEX invoices_number;
CREATE UNIQUE INDEX invoices_number ON invoices (tenant_id, entity_id, upper(number)) WHERE number IS NOT NULL;
DROP INDEX credit_notes_number;
CREATE UNIQUE INDEX credit_notes_number ON credit_notes (tenant_id, entity_id, upper(number)) WHERE number IS NOT NULL;

-- The IRP's 30-day reporting limit (decision 0363): the instant after which the IRP refuses the
-- document (00:00 of the 31st day in the entity's zone), and the smallest number of days before
-- it for which the alert has been sent (5, then 1).
ALTER TABLE einvoices ADD COLUMN report_deadline timestamptz;
ALTER TABLE einvoices ADD COLUMN report_alerted_days integer;
CREATE INDEX einvoices_report_deadline ON einvoices (report_deadline) WHERE report_deadline IS NOT NULL AND status IN ('pending', 'failed');
