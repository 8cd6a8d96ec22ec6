import type { KoshModule } from '../app-deps.js';
import { onEvent } from '../platform/events/events.js';
import { onMailSent } from '../platform/mail/index.js';
import { INVOICE_SENT_HOOK, recordInvoiceSent } from './invoices/send-invoice.js';
import { completeReferralOnPayment } from './referrals/complete-referral.js';
import { BILLING_RUN_JOB, billingRunJob } from './subscriptions/billing-run.job.js';
import { collectionsWiring } from './collections/collections.wiring.js';
import { dunningWiring } from './dunning/dunning.wiring.js';
import { notificationsWiring } from './notifications/notifications.wiring.js';
import { autoTopUpListener } from './credits/auto-top-up.js';
import { subscription } from '../modules/events/index.js';

/**
 * The flows' own wiring: jobs and listeners that act across modules. Modules never import flows,
 * so what a module would otherwise register for a flow is registered here.
 */
export const flowsModule: KoshModule = {
  name: 'flows',
  jobs: { [BILLING_RUN_JOB]: billingRunJob },
  recurring: [{ kind: BILLING_RUN_JOB, everyMs: 60_000 }],
  init: (deps) => {
    // Completion runs inside the paying transaction (invoice.paid), so it commits with the payment.
    onEvent(completeReferralOnPayment, subscription('referrals'));
    // A paid-credit balance lowered below a customer's auto top-up threshold sells a top-up in the same transaction.
    onEvent(autoTopUpListener, subscription('credits.auto_top_up'));
    // invoice.sent is recorded once the SMTP server has accepted the invoice mail.
    onMailSent(deps.scope, INVOICE_SENT_HOOK, recordInvoiceSent);
  },
};

/** Every flow-level module: the composition root registers them after the domain modules. */
export const flowModules: KoshModule[] = [flowsModule, dunningWiring, collectionsWiring, notificationsWiring];
