-- A refund that failed after it was booked at an accounting provider has its provider document
-- voided or deleted by the sync (decision 0860): its sync record's status widens to 'voided'.
-- Every value the previous release writes stays allowed.
-- contract: replaced at once by a wider CHECK; the previous release writes only pending, synced and failed
ALTER TABLE accounting_sync_records DROP CONSTRAINT IF EXISTS accounting_sync_records_status_check;
-- NOT VALID, so adding it does not scan the records under a lock; validated just after.
ALTER TABLE accounting_sync_records
  ADD CONSTRAINT accounting_sync_records_status_check CHECK (status IN ('pending', 'synced', 'failed', 'voided')) NOT VALID;
ALTER TABLE accounting_sync_records VALIDATE CONSTRAINT accounting_sync_records_status_check;
