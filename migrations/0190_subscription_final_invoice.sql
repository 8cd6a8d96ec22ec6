-- A subscription's final invoice (the usage of its last period, billed when it ends: at period
-- end after cancel_at_period_end, or at an immediate cancel; decision 0190) is issued at most
-- once, whatever the code does (two workers, a crash and a retry).
CREATE UNIQUE INDEX invoices_subscription_final ON invoices (tenant_id, subscription_id)
  WHERE subscription_id IS NOT NULL AND billing_reason = 'subscription_final';
