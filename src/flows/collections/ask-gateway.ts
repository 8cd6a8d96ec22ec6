import type { ReadCtx } from '../../platform/context.js';
import { errors } from '../../platform/errors.js';
import { getCustomer } from '../../modules/customers/index.js';
import { getInvoiceRow, type InvoiceRow } from '../../modules/invoices/index.js';
import {
  callContext,
  claimNoticeAttempt,
  inUpiPeak,
  findAttempt,
  findPaymentMethod,
  gatewayForCurrency,
  gatewayOfPaymentMethod,
  isGatewayOrNetworkError,
  savedPaymentMethod,
  type AttemptRow,
  type ChargeOutcome,
  type CollectionsEnv,
  type GatewayCustomer,
  type ResolvedGateway,
  type SavedPaymentMethod,
} from '../../modules/collections/index.js';
import { payable } from './start-attempt.js';

/**
 * Step 2 of collecting an invoice: the gateway is asked, outside any transaction, and nothing is
 * committed. Only a gateway or network failure (a timeout, a connection reset, a 5xx — see
 * isGatewayOrNetworkError) makes the outcome `unknown`, to be resolved later by lookup; any other
 * exception is a defect and propagates, so the attempt stays as it was committed.
 */

const idempotencyKeyOf = (attemptId: string) => `kosh_att_${attemptId}`;

export type GatewayQuestion = {
  saved: SavedPaymentMethod;
  resolved: ResolvedGateway;
  now: Date;
  /** The attempt may have reached the gateway before (found pending later): look it up, and charge only when the gateway never saw it. */
  lookUpFirst: boolean;
  /** Why nothing new may be charged (the payment method was removed or revoked): a lookup still runs. */
  blocked?: string;
  /** Read by the caller for a whole batch: the invoice as it is now (undefined: gone) and the customer. */
  known?: { invoice: InvoiceRow | undefined; customer: GatewayCustomer };
};

/**
 * What the gateway says of a pending attempt (charging it if it never saw it); null when it is not
 * pending or not yet due. A mandate debit leaving its notice wait commits that claim first.
 */
export async function askAboutPendingAttempt(
  env: CollectionsEnv,
  attemptOf: { tenantId: string; attemptId: string },
  now: Date,
  options: { lookUpFirst: boolean },
): Promise<ChargeOutcome | null> {
  const { tenantId, attemptId } = attemptOf;
  const read: ReadCtx = { tx: env.db, tenantId, now };
  const attempt = await findAttempt(env.db, tenantId, attemptId);
  if (!attempt || attempt.status !== 'pending') return null;
  if (attempt.charge_after && attempt.charge_after > now) return null;
  let saved: SavedPaymentMethod;
  let resolved: ResolvedGateway;
  let blocked: string | undefined;
  if (attempt.payment_method_id) {
    const pm = await findPaymentMethod(env.db, tenantId, attempt.payment_method_id);
    if (!pm) throw new Error(`attempt ${attempt.id}: payment method missing`);
    saved = savedPaymentMethod(pm);
    // Removed or revoked (a mandate) meanwhile: whatever was sent is still looked up, nothing new is charged.
    if (pm.status !== 'active') blocked = `the payment method was ${pm.status}`;
    resolved = await gatewayOfPaymentMethod(read, env, pm);
  } else {
    // Checkout attempts carry a one-off card: only lookups can finish them after the request.
    saved = { type: 'card', brand: null, last4: null, reference: '', gatewayCustomerId: null, requiresPreDebitNotice: false };
    resolved = await gatewayForCurrency(read, env, attempt.currency);
  }
  // A UPI AutoPay debit is not executed in NPCI's peak hours (decision 0520): one the sweep
  // reaches late, inside a peak window, waits for its end.
  if (attempt.pending_reason === 'notice' && saved.type === 'upi_mandate' && inUpiPeak(now)) return null;
  // Leaving the notice wait for the gateway is committed first: a hosted payment canceling the
  // debit meanwhile wins or loses this row, never both (cancelNoticeDebit).
  if (attempt.pending_reason === 'notice' && !(await claimNoticeAttempt(env.db, tenantId, attempt.id, now))) return null;
  return askGateway(env, attempt, { saved, resolved, now, lookUpFirst: options.lookUpFirst, blocked });
}

/** Asks the gateway about one attempt: a lookup first when asked to, then the charge with the attempt's idempotency key. */
export async function askGateway(env: CollectionsEnv, attempt: AttemptRow, question: GatewayQuestion): Promise<ChargeOutcome> {
  const { saved, resolved, now } = question;
  const adapter = resolved.gateway.adapter;
  const call = callContext(env, resolved, now);
  const key = idempotencyKeyOf(attempt.id);
  const metadata = { tenant_id: attempt.tenant_id, invoice_id: attempt.invoice_id, attempt_id: attempt.id };
  if (question.lookUpFirst) {
    const looked = await unknownOnGatewayFailure(() =>
      adapter.lookupCharge(call, { idempotencyKey: key, gatewayPaymentId: attempt.gateway_payment_id, metadata }),
    );
    if (looked.status !== 'not_found') return looked;
  }
  if (question.blocked) return { status: 'failed', gatewayPaymentId: null, failureCode: 'payment_method_unavailable', failureMessage: question.blocked };
  if (!saved.reference)
    return { status: 'failed', gatewayPaymentId: null, failureCode: 'checkout_abandoned', failureMessage: 'the checkout payment never reached the gateway' };
  const read: ReadCtx = { tx: env.db, tenantId: attempt.tenant_id, now };
  const invoice = question.known ? question.known.invoice : await getInvoiceRow(read, attempt.invoice_id);
  if (!invoice) throw errors.notFound('invoice');
  if (!payable(invoice) || invoice.amount_due < attempt.amount) {
    // Paid, credited or voided while the attempt waited (a mandate's notice period): nothing to charge.
    return {
      status: 'failed',
      gatewayPaymentId: null,
      failureCode: 'invoice_not_payable',
      failureMessage: `the invoice is ${invoice.status} with ${invoice.amount_due} due`,
    };
  }
  const customer = question.known ? question.known.customer : await getCustomer(read, attempt.customer_id);
  return unknownOnGatewayFailure(() =>
    adapter.charge(call, {
      idempotencyKey: key,
      amount: attempt.amount,
      currency: attempt.currency,
      paymentMethod: saved,
      customer: { id: customer.id, email: customer.email, name: customer.name, phone: customer.phone },
      description: `Invoice ${invoice.number ?? attempt.invoice_id}`,
      metadata,
    }),
  );
}

/** A gateway call's answer; a gateway or network failure is an `unknown` outcome, any other exception propagates. */
async function unknownOnGatewayFailure<Answer>(ask: () => Promise<Answer>): Promise<Answer | Extract<ChargeOutcome, { status: 'unknown' }>> {
  try {
    return await ask();
  } catch (error) {
    if (!isGatewayOrNetworkError(error)) throw error;
    return { status: 'unknown', reason: error instanceof Error ? error.message : String(error) };
  }
}
