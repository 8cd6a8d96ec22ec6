import type { Ctx } from '../../platform/context.js';
import { errors, isKoshError } from '../../platform/errors.js';
import { getInvoiceRow, type InvoiceRow } from '../../modules/invoices/index.js';
import {
  callContext,
  cancelNoticeAttempt,
  gatewayName,
  gatewayOfPaymentMethod,
  insertAttempt,
  lockCheckoutSession,
  pendingAttemptOf,
  type AttemptRow,
  type CheckoutSessionRow,
  type CollectionsEnv,
} from '../../modules/collections/index.js';
import { queueDebitCanceledNotice } from './pre-debit-notice.js';
import { recordChargeOutcome } from './record-charge-outcomes.js';
import { attemptRow } from './start-attempt.js';

/** What a hosted-checkout payment event came to: applied, not this connection's unpaid session, or not what the session asked for. */
export type HostedCheckoutOutcome =
  { kind: 'applied' } | { kind: 'ignored' } | { kind: 'mismatch'; invoiceId: string; expected: { amount: number; currency: string } };

/**
 * A payment taken on the provider's hosted checkout (Stripe Checkout, a Razorpay Payment Link),
 * announced by its verified webhook, in the webhook's transaction: no attempt was in flight, so
 * one is written for the session and settled at once with what the provider collected. The session
 * row is locked first and must still be unpaid: a second event for the same payment (Stripe's
 * `checkout.session.completed` and `payment_intent.succeeded`, Razorpay's `payment_link.paid` and
 * `payment.captured`) finds it complete and changes nothing. The payment must be exactly what the
 * session asked the provider for (amount and currency; a session older than migration 0240: the
 * invoice's amount due): a signed event is believed about what happened, not about how much
 * (DESIGN §20). Anything else is a `mismatch` and nothing is applied.
 */
export async function recordHostedCheckoutPayment(
  ctx: Ctx,
  input: {
    sessionId: string;
    provider: string;
    connectionId: string;
    gatewayPaymentId: string;
    amount: number | null;
    currency: string | null;
    paymentType: 'card' | 'upi';
  },
): Promise<HostedCheckoutOutcome> {
  const session = await lockCheckoutSession(ctx.tx, ctx.tenantId, input.sessionId);
  if (!session || session.status === 'complete' || session.gateway !== input.provider || session.connection_id !== input.connectionId) {
    return { kind: 'ignored' };
  }
  const invoice = await getInvoiceRow(ctx, session.invoice_id, true);
  const expected = { amount: session.amount ?? invoice.amount_due, currency: session.currency ?? invoice.currency };
  if (input.amount !== expected.amount || input.currency !== expected.currency) return { kind: 'mismatch', invoiceId: invoice.id, expected };
  // A mandate debit still in its notice wait was never sent: it is canceled here, so the customer
  // pays once. One already sent to the gateway stays in flight (one pending attempt per invoice is
  // a database fact); the provider redelivers after this 409 (docs/decisions/0196).
  await cancelNoticeDebit(ctx, invoice, 'paid_by_checkout', `the invoice was paid on the ${gatewayName(session.gateway)} checkout page`);
  if (await pendingAttemptOf(ctx.tx, ctx.tenantId, invoice.id))
    throw errors.conflict('a payment attempt on this invoice is in progress; deliver the event again later', 'payment_in_progress');
  const attempt = attemptRow(ctx, invoice, {
    notice: false,
    resolved: { provider: session.gateway, connectionId: session.connection_id },
    paymentMethodId: null,
    checkoutSessionId: session.id,
  });
  await insertAttempt(ctx.tx, { ...attempt, amount: expected.amount, pending_reason: 'gateway' });
  await recordChargeOutcome(ctx, attempt.id, { status: 'succeeded', gatewayPaymentId: input.gatewayPaymentId, paymentType: input.paymentType });
  return { kind: 'applied' };
}

/**
 * Cancels the invoice's mandate debit that is still waiting out its pre-debit notice (never sent to
 * the gateway), in the caller's transaction, and tells the customer the announced debit will not
 * happen. The guarded UPDATE races the sweep's claim (claimNoticeAttempt) on the attempt row:
 * whichever commits first wins, so a debit is either canceled or sent, never both. Answers the
 * canceled attempt, if any.
 */
async function cancelNoticeDebit(ctx: Ctx, invoice: InvoiceRow, code: string, message: string): Promise<AttemptRow | undefined> {
  const canceled = await cancelNoticeAttempt(ctx.tx, ctx.tenantId, invoice.id, { code, message }, ctx.now);
  if (!canceled) return undefined;
  await queueDebitCanceledNotice(ctx, invoice, canceled, message);
  return canceled;
}

/**
 * The return page's check (docs/decisions/0730): when the provider sends the customer back, Kosh
 * asks the provider server-to-server whether the session was paid — the return address's query is
 * never believed — and applies a payment it reports exactly as its webhook would
 * (`recordHostedCheckoutPayment`: the session row is locked and paid at most once). Whichever of
 * the return and the webhook comes first records the payment; the other changes nothing. A payment
 * that is not what the session asked for is left to the webhook, which holds it for review.
 */
export async function confirmHostedCheckout(env: CollectionsEnv, session: CheckoutSessionRow, now: Date): Promise<HostedCheckoutOutcome['kind'] | 'open'> {
  if (session.status !== 'open' || !session.gateway_reference || !session.connection_id) return 'ignored';
  const read = { tx: env.db, tenantId: session.tenant_id, now };
  const resolved = await gatewayOfPaymentMethod(read, env, { gateway: session.gateway, connection_id: session.connection_id });
  const lookup = await resolved.gateway.adapter.lookupCheckout?.(callContext(env, resolved, now), session.gateway_reference);
  if (!lookup || lookup.status !== 'paid') return 'open';
  try {
    const outcome = await env.db.transaction().execute((tx) =>
      recordHostedCheckoutPayment(
        { tx, tenantId: session.tenant_id, now },
        {
          sessionId: session.id,
          provider: session.gateway,
          connectionId: session.connection_id!,
          gatewayPaymentId: lookup.gatewayPaymentId,
          amount: lookup.amount,
          currency: lookup.currency,
          paymentType: lookup.paymentType,
        },
      ),
    );
    return outcome.kind;
  } catch (error) {
    // A mandate debit already sent for the invoice: the webhook settles the checkout payment later.
    if (isKoshError(error) && error.reason === 'payment_in_progress') return 'open';
    throw error;
  }
}
