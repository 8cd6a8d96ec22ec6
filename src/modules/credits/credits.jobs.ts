import type { Ctx } from '../../platform/context.js';
import type { EventPayload } from '../../platform/events/events.js';
import type { JobHandler } from '../../platform/jobs/jobs.js';
import { CREDIT_TOP_UP_REASON } from '../invoices/index.js';
import { grantsDueForExpiry } from './credits.repository.js';
import { activateGrantOfInvoice, expireCreditGrant, receiveTopUpPayments, releaseAutoTopUp, voidGrantOfInvoice } from './credits.service.js';

export const EXPIRE_GRANTS_JOB = 'credit_grants.expire';

/**
 * Expires every active grant whose expires_at has passed, each in its own transaction. Re-running
 * is harmless: the guarded transition expires a grant once.
 */
export const expireDueCreditGrants: JobHandler = async (_job, env) => {
  const now = env.clock.now();
  for (;;) {
    const due = await grantsDueForExpiry(env.db, env.config.mode, now, 200);
    if (due.length === 0) return;
    for (const { tenant_id, id } of due) {
      await env.db.transaction().execute((tx) => expireCreditGrant({ tx, tenantId: tenant_id, now }, id));
    }
    if (due.length < 200) return;
  }
};

/**
 * Inside the emitting transaction: a payment recorded against a top-up invoice gets its receipt
 * voucher (a part paid is an advance of its own date, decision 0840); a top-up invoice paid makes
 * its grant spendable; one voided unpaid voids it. Only top-up invoices are looked at (their
 * billing_reason, or for a payment its invoice's grant), so other invoices cost nothing here.
 */
export async function followTopUpInvoices(ctx: Ctx, event: EventPayload): Promise<void> {
  if (event.type === 'payment.recorded') {
    const payment = event.data.object as { invoice_id?: unknown };
    if (typeof payment.invoice_id === 'string') await receiveTopUpPayments(ctx, payment.invoice_id);
    return;
  }
  if (event.type !== 'invoice.paid' && event.type !== 'invoice.voided') return;
  const invoice = event.data.object as { id?: unknown; billing_reason?: unknown; customer_id?: unknown };
  if (invoice.billing_reason !== CREDIT_TOP_UP_REASON || typeof invoice.id !== 'string') return;
  if (typeof invoice.customer_id === 'string') await releaseAutoTopUp(ctx, invoice.customer_id, invoice.id);
  if (event.type === 'invoice.paid') await activateGrantOfInvoice(ctx, invoice.id);
  else await voidGrantOfInvoice(ctx, invoice.id);
}
