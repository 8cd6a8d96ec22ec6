import type { Ctx, ReadCtx } from '../../platform/context.js';
import { findCustomers } from '../../modules/customers/index.js';
import { notificationExists, recordNotification } from '../../modules/notifications/index.js';
import { isDeliverableAddress } from '../../platform/mail/index.js';
import { getInvoiceRows } from '../../modules/invoices/index.js';
import { findAttempts, type CollectionsEnv } from '../../modules/collections/index.js';
import { createCheckoutSessions, prepareCheckouts } from './checkout-invoice.js';
import { queueMandatePayLinkMail } from './pre-debit-notice.js';
import { AUTOMATIC_BLOCK_TAIL, MANDATE_PAY_LINKS_JOB } from './start-attempt.js';

export { MANDATE_PAY_LINKS_JOB };

/** The notifications log's name for the mail (its dedupe key: the attempt's id). */
const PAY_LINK_NOTIFICATION = 'mandate_pay_link';

/**
 * The job MANDATE_PAY_LINKS_JOB: the pay links that replace mandate debits Kosh may not make
 * (docs/decisions/0520). For each attempt the charge job wrote `canceled` (above the entity's
 * AFA-free limit, above the mandate's maximum, outside its validity) and queued this job with, in
 * the same transaction, a hosted checkout — the same link the dunning e-mails carry —
 * asked of the gateway outside any transaction, then one transaction that stores the sessions and
 * queues the `mandate_pay_link` mail of each. An invoice paid or voided meanwhile gets none; a
 * gateway that cannot make a checkout leaves that invoice without a link (its dunning still runs).
 *
 * Exactly once per attempt: the mail is recorded in the notifications log (`mandate_pay_link`,
 * keyed by the attempt) in the transaction that queues it, and the insert is the guard — a rerun
 * (the job retried after a crash past its commit, the job queued twice, two workers at once) finds
 * the record, asks the gateway for no second checkout and queues no second mail.
 */
export async function sendMandatePayLinks(env: CollectionsEnv, tenantId: string, attemptIds: string[], now: Date): Promise<void> {
  const attempts: Awaited<ReturnType<typeof findAttempts>> = [];
  for (const a of await findAttempts(env.db, tenantId, attemptIds)) {
    if (a.status === 'canceled' && !(await notificationExists(env.db, tenantId, PAY_LINK_NOTIFICATION, a.id))) attempts.push(a);
  }
  if (attempts.length === 0) return;
  const read: ReadCtx = { tx: env.db, tenantId, now };
  const ids = attempts.map((a) => a.invoice_id);
  const invoices = await getInvoiceRows(read, ids);
  const customers = new Map(
    (
      await findCustomers(
        env.db,
        tenantId,
        invoices.map((i) => i.customer_id),
      )
    ).map((c) => [c.id, c]),
  );
  const prepared = await prepareCheckouts(
    read,
    env,
    invoices.flatMap((invoice) => {
      const c = customers.get(invoice.customer_id);
      return c ? [{ invoice, customer: { id: c.id, email: c.email, name: c.name, phone: c.phone } }] : [];
    }),
  );
  await env.db.transaction().execute(async (tx) => {
    const ctx: Ctx = { tx, tenantId, now };
    const locked = new Map((await getInvoiceRows(ctx, ids, true)).map((i) => [i.id, i]));
    const sessions = await createCheckoutSessions(
      ctx,
      env,
      [...locked.values()].flatMap((invoice) => {
        const p = prepared.get(invoice.id);
        return p && !(p instanceof Error) ? [{ invoice, prepared: p }] : [];
      }),
    );
    for (const attempt of attempts) {
      const invoice = locked.get(attempt.invoice_id);
      const session = sessions.get(attempt.invoice_id);
      if (!invoice || !session) continue;
      const to = customers.get(invoice.customer_id)?.email?.trim();
      const deliverable = isDeliverableAddress(to);
      const recorded = await recordNotification(ctx, {
        notification: PAY_LINK_NOTIFICATION,
        dedupe_key: attempt.id,
        customer_id: invoice.customer_id,
        channel: 'email',
        status: deliverable ? 'queued' : 'skipped',
        recipient: deliverable ? to! : null,
        detail: deliverable ? `e-mailed ${to} the pay link of invoice ${invoice.number ?? ''}` : 'the customer has no e-mail address',
      });
      if (!recorded || !deliverable) continue; // sent by an earlier run (or a concurrent one that committed first)
      const reason = (attempt.failure_message ?? '').replace(AUTOMATIC_BLOCK_TAIL, '');
      await queueMandatePayLinkMail(ctx, invoice, { amount: attempt.amount, currency: attempt.currency, reason }, session.url);
    }
  });
}
