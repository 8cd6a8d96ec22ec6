-- Job priorities and fairness (DESIGN §22 "Processes", docs/decisions/0321): the worker claims by
-- priority class first (0 money: billing runs, charges, dunning; 1 notices: e-mail, SMS, e-invoices;
-- 2 deliveries: webhooks, accounting sync; 3 background: analytics, purges, expiries), then by due
-- time; a job may name a concurrency group (a webhook endpoint) whose running jobs are capped.
-- Expand only: the previous release enqueues without these columns (class 2, no group) and still
-- claims through jobs_due.
ALTER TABLE jobs ADD COLUMN priority smallint NOT NULL DEFAULT 2;
ALTER TABLE jobs ADD COLUMN concurrency_key text;
CREATE INDEX jobs_due_by_priority ON jobs (priority, run_at) WHERE state = 'pending';
UPDATE jobs SET priority = CASE
    WHEN kind IN ('subscriptions.billing_run', 'collections.charge_invoices', 'collections.resolve_attempts',
                  'collections.settle_payments', 'collections.execute_refund', 'dunning.run_steps', 'dunning.scan_overdue') THEN 0
    WHEN kind IN ('mail.send', 'notifications.send', 'notifications.scan_trials', 'dunning.send_email', 'dunning.send_sms',
                  'portal.login_link', 'operators.password_reset', 'einvoice.submit', 'einvoice.cancel') THEN 1
    WHEN kind IN ('webhooks.deliver', 'accounting.sync', 'accounting.revoke_token', 'ledger.secondary_sync') THEN 2
    ELSE 3 END
  WHERE state IN ('pending', 'running');
