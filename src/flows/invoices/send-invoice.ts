import type { Config } from '../../platform/config.js';
import type { AppScope } from '../../platform/app-scope.js';
import type { Ctx } from '../../platform/context.js';
import { errors, isKoshError } from '../../platform/errors.js';
import { emitEvent } from '../../platform/events/events.js';
import { enqueueMail, isDeliverableAddress, isMailConfigured, type MailSentHook } from '../../platform/mail/index.js';
import { findCustomer } from '../../modules/customers/index.js';
import { INVOICE_PDF_ATTACHMENT, formatDate, invoiceHeading } from '../../modules/documents/index.js';
import { formatMoney } from '../../platform/money.js';
import { getInvoice, type Invoice } from '../../modules/invoices/index.js';
import { getTenant } from '../../modules/tenants/index.js';

/** The mail-sent hook under which a delivered invoice mail records `invoice.sent`. */
export const INVOICE_SENT_HOOK = 'invoice.sent';

async function invoiceToSend(ctx: Ctx, invoiceId: string): Promise<Invoice> {
  try {
    return await getInvoice(ctx, invoiceId);
  } catch (error) {
    // SPEC 4.8 answers an unknown (or foreign) invoice with 400, not 404.
    if (isKoshError(error) && error.kind === 'not_found') {
      throw errors.validation('invoice not found', [{ field: 'id', message: 'no such invoice' }], 'invoice_not_found');
    }
    throw error;
  }
}

function mailText(invoice: Invoice & { number: string }, customerName: string, supplierName: string, timeZone: string): string {
  const title = invoiceHeading(invoice).title.toLowerCase();
  const lines = [
    `Dear ${customerName},`,
    '',
    `Please find attached ${title} ${invoice.number} dated ${formatDate(invoice.issued_at, timeZone)} for ${formatMoney(invoice.total, invoice.currency)}.`,
  ];
  if (invoice.status === 'paid') lines.push('It has been paid in full. Thank you.');
  else if (invoice.amount_due > 0) {
    lines.push(`Amount due: ${formatMoney(invoice.amount_due, invoice.currency)}, by ${formatDate(invoice.due_date, timeZone)}.`);
  }
  lines.push('', 'If you have any questions about it, reply to this e-mail.', '', supplierName, '');
  return lines.join('\n');
}

/**
 * SPEC 4.8: e-mails the invoice, with its PDF, to the customer's current e-mail address. The mail
 * is queued in this transaction and sent by the worker; the PDF is rendered then, so the jobs
 * table holds no document. `invoice.sent` is emitted when the SMTP server has accepted the
 * message (see recordInvoiceSent), not here: a queued mail is not yet a sent one.
 * Every refusal is a 400, as SPEC 4.8 lists them.
 */
export async function sendInvoice(ctx: Ctx, invoiceId: string, config: Pick<Config, 'smtpUrl'>, scope: AppScope): Promise<{ message: string }> {
  const invoice = await invoiceToSend(ctx, invoiceId);
  if (invoice.status === 'draft' || invoice.number === null) {
    throw errors.validation('finalize the invoice before sending it: a draft has no number and is not a tax invoice', undefined, 'invoice_not_finalized');
  }
  if (invoice.status === 'void') throw errors.validation('a void invoice cannot be sent', undefined, 'invoice_void');
  const customer = await findCustomer(ctx.tx, ctx.tenantId, invoice.customer_id);
  if (!customer) throw errors.validation("the invoice's customer no longer exists", undefined, 'customer_not_found');
  const to = customer.email?.trim();
  if (!isDeliverableAddress(to)) throw errors.validation('the customer has no e-mail address to send the invoice to', undefined, 'customer_email_missing');
  if (!isMailConfigured(config)) {
    throw errors.validation('no e-mail provider is configured on this server (set SMTP_URL)', undefined, 'email_not_configured');
  }

  const supplierName = invoice.supplier?.legal_name || invoice.supplier?.name || 'Billing';
  const customerName = customer.name || invoice.customer_details?.name || to;
  const timeZone = (invoice.supplier?.country_code ?? 'IN') === 'IN' ? 'Asia/Kolkata' : 'UTC';
  const tenant = await getTenant(ctx);
  await enqueueMail(
    ctx.tx,
    ctx.now,
    {
      tenantId: ctx.tenantId,
      to,
      subject: `${invoiceHeading(invoice).title} ${invoice.number} from ${supplierName}`,
      text: mailText({ ...invoice, number: invoice.number }, customerName, supplierName, timeZone),
      fromName: supplierName,
      replyTo: isDeliverableAddress(tenant.email) ? tenant.email : undefined,
      attachments: [{ render: INVOICE_PDF_ATTACHMENT, params: { invoice_id: invoice.id } }],
      onSent: { hook: INVOICE_SENT_HOOK, params: { invoice_id: invoice.id } },
    },
    scope,
  );
  return { message: `invoice ${invoice.number} queued for delivery to ${to}` };
}

/** Runs in the mail job once the SMTP server accepted the invoice mail: one `invoice.sent`, exactly once. */
export const recordInvoiceSent: MailSentHook = async (ctx, params) => {
  await emitEvent(ctx, 'invoice.sent', await getInvoice(ctx, String(params.invoice_id)));
};
