import type { Ctx } from '../../platform/context.js';
import { enqueueMail, isDeliverableAddress } from '../../platform/mail/index.js';
import { getCustomer } from '../../modules/customers/index.js';
import { formatMoney } from '../../modules/documents/index.js';
import { getEntity } from '../../modules/entities/index.js';
import type { InvoiceRow } from '../../modules/invoices/index.js';
import { renderTemplate, templateSource } from '../../modules/notifications/index.js';
import { getTenant } from '../../modules/tenants/index.js';

/** `2026-04-02` and `2026-04-02 14:30 (Asia/Kolkata)`: the instant as the invoice's entity reads it. */
export function localDebitTime(at: Date, timeZone: string): { date: string; not_before: string } {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' })
      .formatToParts(at)
      .map((p) => [p.type, p.value]),
  );
  const date = `${parts.year}-${parts.month}-${parts.day}`;
  return { date, not_before: `${date} ${parts.hour}:${parts.minute} (${timeZone})` };
}

/**
 * The mandate pre-debit notice (DESIGN §11, docs/decisions/0186): rendered from the tenant's
 * `mandate_pre_debit` template (or the shipped file) and queued through the mail outbox in the
 * attempt's transaction, so the notice exists exactly when the waiting attempt does. Not a
 * notification a tenant can switch off: the debit may not happen without it.
 */
export async function queuePreDebitNotice(
  ctx: Ctx,
  invoice: Pick<InvoiceRow, 'customer_id' | 'entity_id' | 'number'>,
  attempt: { amount: number; currency: string; charge_after: Date },
): Promise<boolean> {
  const customer = await getCustomer(ctx, invoice.customer_id);
  const to = customer.email?.trim();
  if (!isDeliverableAddress(to)) return false;
  const [tenant, entity, source] = await Promise.all([
    getTenant(ctx),
    getEntity(ctx, invoice.entity_id),
    templateSource(ctx.tx, ctx.tenantId, 'mandate_pre_debit'),
  ]);
  const mail = renderTemplate(source, {
    tenant: { name: tenant.name },
    customer: { name: customer.name || to, email: to },
    invoice: { number: invoice.number ?? '' },
    debit: { amount: formatMoney(attempt.amount, attempt.currency), ...localDebitTime(attempt.charge_after, entity.time_zone) },
  });
  await enqueueMail(ctx.tx, ctx.now, {
    tenantId: ctx.tenantId,
    to,
    subject: mail.subject || tenant.name,
    text: mail.text,
    html: mail.html,
    fromName: tenant.name,
    replyTo: isDeliverableAddress(tenant.email) ? tenant.email : undefined,
  });
  return true;
}
