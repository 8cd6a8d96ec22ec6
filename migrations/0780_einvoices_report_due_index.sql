-- Decision 0363 / GET /v1/einvoices/report-due: a tenant's unreported documents by their IRP limit.
CREATE INDEX einvoices_tenant_report_due ON einvoices (tenant_id, report_deadline)
  WHERE report_deadline IS NOT NULL AND status IN ('pending', 'failed');
