import { createHash, randomBytes } from 'node:crypto';
import type { Ctx } from '../../platform/context.js';
import type { CollectionsEnv } from '../../modules/collections/index.js';
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

/** The stored form of a skip link's token: its SHA-256 (hex), so the table never holds a usable link. */
export const skipTokenHash = (token: string): string => createHash('sha256').update(token).digest('hex');

/** A new "skip this debit" token and its hash. */
export function newSkipToken(): { token: string; hash: string } {
  const token = randomBytes(24).toString('base64url');
  return { token, hash: skipTokenHash(token) };
}

/** The pre-debit notice's link that lets the customer skip that one debit (GET shows it, POST skips). */
export function skipDebitUrl(env: CollectionsEnv, tenantId: string, attemptId: string, token: string): string {
  return `${env.config.publicUrl}/mandate-debits/${tenantId}/${attemptId}/skip?token=${token}`;
}

/**
 * The mandate pre-debit notice (DESIGN §11, docs/decisions/0186 and 0520): rendered from the
 * tenant's `mandate_pre_debit` template (or the shipped file) and queued through the mail outbox in
 * the attempt's transaction, so the notice exists exactly when the waiting attempt does. It names
 * the merchant (the entity's legal name), the amount, the date, the mandate's reference, and
 * carries the link that skips this one debit (RBI e-mandate framework). Not a notification a
 * tenant can switch off: the debit may not happen without it.
 */
export async function queuePreDebitNotice(
  ctx: Ctx,
  env: CollectionsEnv,
  invoice: Pick<InvoiceRow, 'customer_id' | 'entity_id' | 'number'>,
  attempt: { id: string; amount: number; currency: string; charge_after: Date; mandateReference: string; skipToken: string },
): Promise<boolean> {
  const entity = await getEntity(ctx, invoice.entity_id);
  return queueMandateMail(ctx, 'mandate_pre_debit', invoice, {
    debit: {
      amount: formatMoney(attempt.amount, attempt.currency),
      ...localDebitTime(attempt.charge_after, entity.time_zone),
      merchant: entity.legal_name,
      mandate_reference: attempt.mandateReference,
    },
    skip_url: skipDebitUrl(env, ctx.tenantId, attempt.id, attempt.skipToken),
  });
}

/**
 * The post-debit notice of a mandate debit that succeeded (RBI e-mandate framework, decision 0520):
 * merchant, amount, date, mandate reference and the grievance contact (the entity's, else the
 * tenant's e-mail), queued in the transaction that records the payment.
 */
export async function queuePostDebitNotice(
  ctx: Ctx,
  invoice: Pick<InvoiceRow, 'customer_id' | 'entity_id' | 'number'>,
  debit: { amount: number; currency: string; at: Date; mandateReference: string },
): Promise<boolean> {
  const [entity, tenant] = await Promise.all([getEntity(ctx, invoice.entity_id), getTenant(ctx)]);
  return queueMandateMail(ctx, 'mandate_post_debit', invoice, {
    debit: {
      amount: formatMoney(debit.amount, debit.currency),
      date: localDebitTime(debit.at, entity.time_zone).date,
      merchant: entity.legal_name,
      mandate_reference: debit.mandateReference,
    },
    grievance_contact: entity.emandate.grievance_contact ?? tenant.email ?? '',
  });
}

/**
 * The mail that replaces a mandate debit Kosh may not make (above the AFA-free limit or outside the
 * mandate's terms, decision 0520): why, and the pay link where the customer authenticates the
 * payment themselves. Queued in the transaction that makes the link's checkout session.
 */
export async function queueMandatePayLinkMail(
  ctx: Ctx,
  invoice: Pick<InvoiceRow, 'customer_id' | 'entity_id' | 'number'>,
  debit: { amount: number; currency: string; reason: string },
  payUrl: string,
): Promise<boolean> {
  const entity = await getEntity(ctx, invoice.entity_id);
  return queueMandateMail(ctx, 'mandate_pay_link', invoice, {
    debit: { amount: formatMoney(debit.amount, debit.currency), merchant: entity.legal_name, reason: debit.reason },
    pay_url: payUrl,
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
  return queueMandateMail(ctx, 'mandate_debit_canceled', invoice, { debit: { amount: formatMoney(attempt.amount, attempt.currency), reason } });
}

async function queueMandateMail(
  ctx: Ctx,
  template: 'mandate_pre_debit' | 'mandate_debit_canceled' | 'mandate_post_debit' | 'mandate_pay_link',
  invoice: Pick<InvoiceRow, 'customer_id' | 'number'>,
  data: Record<string, unknown>,
): Promise<boolean> {
  const customer = await getCustomer(ctx, invoice.customer_id);
  const to = customer.email?.trim();
  if (!isDeliverableAddress(to)) return false;
  const [tenant, source] = await Promise.all([getTenant(ctx), templateSource(ctx.tx, ctx.tenantId, template)]);
  const mail = renderTemplate(source, {
    tenant: { name: tenant.name },
    customer: { name: customer.name || to, email: to },
    invoice: { number: invoice.number ?? '' },
    ...data,
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
