import type { KoshModule } from '../../app-deps.js';
import { onEvent } from '../../platform/events/events.js';
import { alertIrpReportLimits, cancelEinvoiceAtIrp, submitEinvoice } from './einvoicing.jobs.js';
import { CANCEL_JOB, SUBMIT_JOB, queueEinvoicesOnIssue } from './einvoicing.service.js';
import { subscription } from '../events/index.js';

export const einvoicingModule: KoshModule = {
  name: 'einvoicing',
  jobs: { [SUBMIT_JOB]: submitEinvoice, [CANCEL_JOB]: cancelEinvoiceAtIrp, 'einvoicing.report_limit_alerts': alertIrpReportLimits },
  // The IRP's 30-day limit: alerts 5 and 1 days before the last day (decision 0363).
  recurring: [{ kind: 'einvoicing.report_limit_alerts', everyMs: 60 * 60_000 }],
  // Submission is queued inside the issuing transaction (invoice.finalized, credit_note.issued).
  init: () => onEvent(queueEinvoicesOnIssue, subscription('einvoicing')),
};
