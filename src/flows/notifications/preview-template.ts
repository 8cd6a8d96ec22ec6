import type { ReadCtx } from '../../platform/context.js';
import { findCustomer } from '../../modules/customers/index.js';
import { formatMoney } from '../../platform/money.js';
import { getInvoice } from '../../modules/invoices/index.js';
import {
  SAMPLE_DATA,
  assertTemplateSource,
  missingVariables,
  renderTemplate,
  templateSource,
  type PreviewTemplateBody,
  type TemplateName,
} from '../../modules/notifications/index.js';
import { getTenant } from '../../modules/tenants/index.js';

/**
 * POST /v1/email-templates/{name}/preview: the saved template (or the source in the body, checked
 * like a PUT) rendered with sample data, or with a real invoice and its customer; the variables the
 * template reads that the data lacks are listed (they render empty). Writes nothing.
 */
export async function previewEmailTemplate(ctx: ReadCtx, name: TemplateName, body: PreviewTemplateBody) {
  assertTemplateSource(body);
  const saved = await templateSource(ctx.tx, ctx.tenantId, name);
  const source = {
    subject: body.subject ?? saved.subject,
    html: body.html ?? saved.html,
    text: body.text !== undefined ? body.text : body.html !== undefined ? null : saved.text,
  };
  const tenant = await getTenant(ctx);
  let data: Record<string, unknown> = { ...SAMPLE_DATA[name], tenant: { name: tenant.name } };
  if (body.invoice_id) {
    const invoice = await getInvoice(ctx, body.invoice_id);
    const customer = await findCustomer(ctx.tx, ctx.tenantId, invoice.customer_id);
    const sampleInvoice = (SAMPLE_DATA[name].invoice ?? {}) as Record<string, unknown>;
    data = {
      ...data,
      customer: { name: customer?.name || customer?.email || '', email: customer?.email ?? '' },
      invoice: {
        ...sampleInvoice,
        number: invoice.number ?? '',
        total: formatMoney(invoice.total, invoice.currency),
        amount_due: formatMoney(invoice.amount_due, invoice.currency),
        issued_on: invoice.issued_at?.slice(0, 10) ?? null,
        due_date: invoice.due_date?.slice(0, 10) ?? null,
        is_paid: invoice.status === 'paid',
      },
    };
  }
  const rendered = renderTemplate(source, data);
  return { name, ...rendered, data_source: body.invoice_id ? ('invoice' as const) : ('sample' as const), missing_variables: missingVariables(source, data) };
}
