import type { KoshModule } from '../../app-deps.js';
import { CHARGE_INVOICES_JOB, chargeInvoices, RESOLVE_ATTEMPTS_JOB, resolvePendingAttempts } from './collect-invoice-payment.js';
import { EXECUTE_REFUND_JOB, executeRefund, refundOnCreditNoteDecision } from './refund-payment.js';
import { SETTLE_PAYMENTS_JOB, settleGatewayPayments } from './settle-gateway-payments.js';
import { retryInvoicePayment } from './retry-invoice-payment.js';
import { MANDATE_PAY_LINKS_JOB, sendMandatePayLinks } from './mandate-pay-links.js';
import { registerPaymentRetrier } from '../../modules/dunning/index.js';
import { onEvent } from '../../platform/events/events.js';
import { subscription } from '../../modules/events/index.js';

/** Collections' jobs (charges, refunds, settlement, stuck attempts) and its dunning retrier. */
export const collectionsWiring: KoshModule = {
  name: 'collections',
  jobs: {
    [CHARGE_INVOICES_JOB]: async (job, env) => {
      const payload = job.payload as { invoice_ids: string[] };
      await chargeInvoices(env, job.tenant_id!, payload.invoice_ids, env.clock.now());
    },
    [MANDATE_PAY_LINKS_JOB]: async (job, env) => {
      await sendMandatePayLinks(env, job.tenant_id!, (job.payload as { attempt_ids: string[] }).attempt_ids, env.clock.now());
    },
    [RESOLVE_ATTEMPTS_JOB]: async (_job, env) => {
      await resolvePendingAttempts(env, env.clock.now());
    },
    [EXECUTE_REFUND_JOB]: async (job, env) => {
      await executeRefund(env, job.tenant_id!, (job.payload as { refund_id: string }).refund_id, env.clock.now());
    },
    [SETTLE_PAYMENTS_JOB]: async (_job, env) => {
      await settleGatewayPayments(env, env.clock.now());
    },
  },
  init: (deps) => {
    // Dunning's retry_payment steps charge again through collections.
    registerPaymentRetrier(deps.scope, retryInvoicePayment);
    // A refund waiting for its credit note's approval is released or failed by the decision.
    onEvent(refundOnCreditNoteDecision, subscription('collections.credit_note_refunds'));
  },
  recurring: [
    { kind: RESOLVE_ATTEMPTS_JOB, everyMs: 60_000 },
    { kind: SETTLE_PAYMENTS_JOB, everyMs: 60 * 60_000 },
  ],
};
