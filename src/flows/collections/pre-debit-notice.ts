import type { Ctx } from '../../platform/context.js';
import { enqueueMail, isDeliverableAddress } from '../../platform/mail/index.js';
import { getCustomer } from '../../modules/customers/index.js';
import { formatMoney } from '../../platform/money.js';
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
  const entity = await getEntity(ctx, invoice.entity_id);
  return queueMandateMail(ctx, 'mandate_pre_debit', invoice, {
    amount: formatMoney(attempt.amount, attempt.currency),
    ...localDebitTime(attempt.charge_after, entity.time_zone),
  });
}

/**
 * The notice that an announced debit will not be made (docs/decisions/0196: the invoice was paid
 * another way during the notice period), from the `mandate_debit_canceled` template, queued in the
 * transaction that cancels the debit.
 */
export async function queueDebitCanceledNotice(
  ctx: Ctx,
  invoice: Pick<InvoiceRow, 'customer_id' | 'number'>,
  attempt: { amount: number; currency: string },
  reason: string,
): Promise<boolean> {
  return queueMandateMail(ctx, 'mandate_debit_canceled', invoice, { amount: formatMoney(attempt.amount, attempt.currency), reason });
}

async function queueMandateMail(
  ctx: Ctx,
  template: 'mandate_pre_debit' | 'mandate_debit_canceled',
  invoice: Pick<InvoiceRow, 'customer_id' | 'number'>,
  debit: Record<string, string>,
): Promise<boolean> {
  const customer = await getCustomer(ctx, invoice.customer_id);
  const to = customer.email?.trim();
  if (!isDeliverableAddress(to)) return false;
  const [tenant, source] = await Promise.all([getTenant(ctx), templateSource(ctx.tx, ctx.tenantId, template)]);
  const mail = renderTemplate(source, {
    tenant: { name: tenant.name },
    customer: { name: customer.name || to, email: to },
    invoice: { number: invoice.number ?? '' },
    debit,
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
