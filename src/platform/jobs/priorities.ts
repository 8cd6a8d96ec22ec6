/**
 * Priority classes of the job queue (decision 0321): the worker claims a lower class first, then by
 * due time. Money first — a billing run, charges and dunning must not wait behind a backlog of
 * deliveries — then what customers are told, then deliveries to other systems, then housekeeping.
 * Kinds are named here as strings (the platform imports no module); a kind not listed is a
 * delivery (class 2).
 */
export const JOB_PRIORITY_CLASSES = ['money', 'notices', 'deliveries', 'background'] as const;
export type JobPriorityClass = (typeof JOB_PRIORITY_CLASSES)[number];

const CLASS_OF_KIND: Record<string, JobPriorityClass> = {
  'subscriptions.billing_run': 'money',
  'collections.charge_invoices': 'money',
  'collections.resolve_attempts': 'money',
  'collections.settle_payments': 'money',
  'collections.execute_refund': 'money',
  'dunning.run_steps': 'money',
  'dunning.scan_overdue': 'money',
  'mail.send': 'notices',
  'notifications.send': 'notices',
  'notifications.scan_trials': 'notices',
  'dunning.send_email': 'notices',
  'dunning.send_sms': 'notices',
  'collections.mandate_pay_links': 'notices',
  'portal.login_link': 'notices',
  'operators.password_reset': 'notices',
  'einvoice.submit': 'notices',
  'einvoice.cancel': 'notices',
  'webhooks.deliver': 'deliveries',
  'accounting.sync': 'deliveries',
  'accounting.revoke_token': 'deliveries',
  'ledger.secondary_sync': 'deliveries',
  'analytics.mrr_snapshot': 'background',
  'finance.reconciliation_run': 'background',
  'finance.reconciliation_daily': 'background',
  'finance.recognize_revenue': 'background',
  'platform.purge_idempotency_keys': 'background',
  'platform.purge_finished_jobs': 'background',
  'portal.purge_credentials': 'background',
  'accounting.purge_oauth_states': 'background',
  'credit_notes.expire': 'background',
  'ledger.fx_revaluation': 'background',
  'quotes.expire': 'background',
  'usage.maintain_partitions': 'background',
  'referrals.expire': 'background',
};

/** The class number stored in `jobs.priority` (0 runs first). */
export function jobPriority(kind: string): number {
  return JOB_PRIORITY_CLASSES.indexOf(CLASS_OF_KIND[kind] ?? 'deliveries');
}
