import type { KoshModule } from '../../app-deps.js';
import { onEvent } from '../../platform/events/events.js';
import { cancelEinvoiceAtIrp, submitEinvoice } from './einvoicing.jobs.js';
import { CANCEL_JOB, SUBMIT_JOB, queueEinvoicesOnIssue } from './einvoicing.service.js';

export const einvoicingModule: KoshModule = {
  name: 'einvoicing',
  jobs: { [SUBMIT_JOB]: submitEinvoice, [CANCEL_JOB]: cancelEinvoiceAtIrp },
  // Submission is queued inside the issuing transaction (invoice.finalized, credit_note.issued).
  init: () => onEvent(queueEinvoicesOnIssue),
};
