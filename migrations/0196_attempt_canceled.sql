-- A mandate debit still waiting out its pre-debit notice is canceled when the invoice is paid on
-- the provider's hosted checkout meanwhile (docs/decisions/0196): a fourth, final attempt status.
ALTER TABLE payment_attempts DROP CONSTRAINT IF EXISTS payment_attempts_status_check;
ALTER TABLE payment_attempts ADD CONSTRAINT payment_attempts_status_check CHECK (status IN ('pending', 'succeeded', 'failed', 'canceled'));
