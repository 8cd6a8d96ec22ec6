import type { Ctx } from '../../platform/context.js';
import { errors } from '../../platform/errors.js';
import {
  createPromotionalGrant,
  getCreditGrantRow,
  insertPaidGrant,
  voidPromotionalGrant,
  type CreateCreditGrantBody,
  type CreditGrantRow,
} from '../../modules/credits/index.js';
import { taxOfPrepayment } from '../../modules/advances/index.js';
import { getCustomer } from '../../modules/customers/index.js';
import { findPrimaryEntity } from '../../modules/entities/index.js';
import { readSettings } from '../../modules/tenants/index.js';
import { CREDIT_TOP_UP_REASON, invoiceCurrenciesOfCustomer, issueInvoices } from '../../modules/invoices/index.js';
import { runningSubscriptionsOfCustomers } from '../../modules/subscriptions/index.js';
import { voidInvoiceWithCreditNotes } from '../invoices/void-invoice.js';

/**
 * Grants credit to a customer. Promotional: spendable at once (a discount before GST when drawn).
 * Paid: sold — a top-up for `amount` plus the GST the advance will carry is finalized and left
 * open, and the grant waits for it to be paid (DESIGN §23). The top-up asks for an advance: it is
 * no tax invoice (no GST lines); its GST is due on receipt (CGST Act s.13(2)) under the receipt
 * voucher issued when it is paid (CGST Rules, rule 50; decision 0700). The top-up's own
 * finalization never draws credit: credit cannot buy credit.
 */
export async function createCreditGrant(
  ctx: Ctx,
  customerId: string,
  body: CreateCreditGrantBody,
  options: { collectionMethod?: 'send_invoice' | 'charge_automatically'; paymentMethodId?: string | null } = {},
): Promise<CreditGrantRow> {
  if (body.category === 'promotional') {
    await checkPromotionalCurrency(ctx, customerId, body.currency);
    return createPromotionalGrant(ctx, customerId, body);
  }
  const customer = await getCustomer(ctx, customerId);
  const entity = await findPrimaryEntity(ctx.tx, ctx.tenantId);
  if (!entity) throw errors.notFound('entity');
  const settings = await readSettings(ctx);
  // The GST the advance will carry when it is paid (decision 0700), asked for on top of the credit.
  const tax = await taxOfPrepayment(ctx, { entityId: entity.id, customer, value: body.amount, hsnCode: settings.sac_code ?? undefined });
  const lines = [{ description: body.name ? `Prepaid credit: ${body.name}` : 'Prepaid credit', quantity: 1, unit_amount: body.amount }];
  if (tax.tax_amount > 0) lines.push({ description: gstLineLabel(tax), quantity: 1, unit_amount: tax.tax_amount });
  // Drafted and finalized at once: the batch issue with one item.
  const [invoice] = await issueInvoices(ctx, [
    {
      customer,
      entityId: entity.id,
      currency: body.currency,
      billingReason: CREDIT_TOP_UP_REASON,
      collectionMethod: options.collectionMethod,
      lines,
      field: (_i, name) => (name === 'unit_amount' || name === 'lines' ? 'amount' : name),
    },
  ]);
  return insertPaidGrant(ctx, body, invoice!, { paymentMethodId: options.paymentMethodId, tax });
}

/** The top-up's second line: the GST its receipt voucher will charge when it is paid. */
function gstLineLabel(tax: { cgst_amount: number; igst_amount: number; rate_bp: number }): string {
  const rate = (bp: number) => `${bp / 100} %`;
  const heads = tax.igst_amount > 0 ? `IGST ${rate(tax.rate_bp)}` : `CGST ${rate(tax.rate_bp / 2)} + SGST ${rate(tax.rate_bp / 2)}`;
  return `GST on the advance, ${heads} (charged on the receipt voucher issued on payment)`;
}

/**
 * A promotional grant discounts only invoices of its currency: for a customer already billed (by
 * its running subscriptions or its invoices) in other currencies only, one in another currency
 * would discount nothing — a 400 naming `currency`, not a grant that silently never applies. A
 * customer not yet billed may receive one in any currency.
 */
async function checkPromotionalCurrency(ctx: Ctx, customerId: string, currency: string): Promise<void> {
  await getCustomer(ctx, customerId);
  const billed = new Set([
    ...(await runningSubscriptionsOfCustomers(ctx.tx, ctx.tenantId, [customerId])).map((s) => s.currency),
    ...(await invoiceCurrenciesOfCustomer(ctx.tx, ctx.tenantId, customerId)),
  ]);
  if (billed.size === 0 || billed.has(currency)) return;
  throw errors.invalidField(
    'currency',
    `the customer is billed in ${[...billed].sort().join(', ')}: a promotional grant in ${currency} would discount none of its invoices`,
  );
}

/**
 * Voids a grant's unspent balance. Promotional: at once. Paid, top-up still unpaid: its invoice is
 * voided (the grant follows, in the same transaction). Paid and paid for: refused — it is the
 * customer's money; it is drawn down or expires.
 */
export async function voidCreditGrant(ctx: Ctx, id: string): Promise<CreditGrantRow> {
  const grant = await getCreditGrantRow(ctx, id);
  if (grant.category === 'promotional') return voidPromotionalGrant(ctx, grant);
  if (grant.status !== 'pending' || !grant.invoice_id) {
    throw errors.conflict(
      `cannot void a paid credit grant whose status is ${grant.status}: the customer paid for it; it is drawn down by invoices or expires`,
      `credit_grant_${grant.status}`,
    );
  }
  await voidInvoiceWithCreditNotes(ctx, grant.invoice_id);
  return getCreditGrantRow(ctx, id);
}
