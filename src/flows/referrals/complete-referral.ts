import type { Ctx } from '../../platform/context.js';
import type { EventPayload } from '../../platform/events/events.js';
import { createCreditNote } from '../../modules/credit-notes/index.js';
import { markReferralCompleted, recordReferralReward, referredWithPendingReferral, type ReferralRow } from '../../modules/referrals/index.js';

type PaidInvoice = { id: string; customer_id: string; amount_paid: number };

function paidInvoiceOf(event: EventPayload): PaidInvoice | null {
  const o = event.data.object as Partial<PaidInvoice>;
  return typeof o.id === 'string' && typeof o.customer_id === 'string' && typeof o.amount_paid === 'number'
    ? { id: o.id, customer_id: o.customer_id, amount_paid: o.amount_paid }
    : null;
}

/**
 * Listens to every event inside its emitting transaction; on `invoice.paid` of a referred
 * customer with a pending referral inside its window, completes the referral and credits the
 * referrer — so completion commits (or rolls back) with the payment itself. Only money paid
 * counts: an invoice settled entirely by credit, or one of zero total, is not a payment.
 */
export async function completeReferralOnPayment(ctx: Ctx, event: EventPayload): Promise<void> {
  if (event.type !== 'invoice.paid') return;
  const invoice = paidInvoiceOf(event);
  if (!invoice || invoice.amount_paid <= 0) return;
  await completeReferral(ctx, invoice);
}

/**
 * The same for one emitEvents batch (a batch of payments): one read finds which paying customers
 * have a pending referral; only their invoices go through completeReferral, in order.
 */
completeReferralOnPayment.batch = async (ctx: Ctx, events: EventPayload[]): Promise<void> => {
  const paid = events
    .filter((e) => e.type === 'invoice.paid')
    .map(paidInvoiceOf)
    .filter((i): i is PaidInvoice => i !== null && i.amount_paid > 0);
  if (paid.length === 0) return;
  const referred = await referredWithPendingReferral(ctx.tx, ctx.tenantId, [...new Set(paid.map((i) => i.customer_id))]);
  for (const invoice of paid) if (referred.has(invoice.customer_id)) await completeReferral(ctx, invoice);
};

export async function completeReferral(ctx: Ctx, invoice: PaidInvoice): Promise<ReferralRow | null> {
  const referral = await markReferralCompleted(ctx, invoice.customer_id, invoice.id);
  if (!referral) return null;
  if (referral.reward_amount === 0) return recordReferralReward(ctx, referral, null);
  // The normal credit-note path: a standalone goodwill credit (no tax), approval governance and
  // the ledger entry apply; under governance the note waits in pending_approval.
  const note = await createCreditNote(ctx, {
    customer_id: referral.referrer_id,
    amount: referral.reward_amount,
    currency: referral.currency,
    reason: `Referral reward (${referral.code})`,
    reference: referral.code,
  });
  return recordReferralReward(ctx, referral, note.id);
}
