-- Four eyes (DESIGN §21, docs/decisions/0221): who asked for a credit note (the API key or
-- operator whose request created it; null for the worker's), so that the approval of a note
-- waiting in pending_approval can be refused to that same actor.
ALTER TABLE credit_notes ADD COLUMN requested_by_type text CHECK (requested_by_type IN ('api_key', 'user'));
ALTER TABLE credit_notes ADD COLUMN requested_by_id uuid;
