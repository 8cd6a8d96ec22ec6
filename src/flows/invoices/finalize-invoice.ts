import type { Ctx } from '../../platform/context.js';
import { errors } from '../../platform/errors.js';
import { applyAdvances } from '../../modules/advances/index.js';
import { applyAvailableCredit } from '../../modules/credit-notes/index.js';
import { drawPaidCredit, drawPromotionalCredit, recordPromotionalDraws, type DrawLine, type PromotionalDraws } from '../../modules/credits/index.js';
import {
  CREDIT_TOP_UP_REASON,
  discountDraftLines,
  finalizeInvoice,
  getInvoiceRow,
  linesOfInvoices,
  type DraftInvoiceInput,
  type InvoiceRow,
} from '../../modules/invoices/index.js';
import { scheduleAutomaticCharges } from '../collections/collect-invoice-payment.js';

/**
 * Finalizes an invoice and spends the customer's balance on it, in the caller's transaction:
 * promotional credit grants first, as discounts on the draft's lines before GST (DESIGN §23); then,
 * once finalized, paid credit grants (like a payment), credit notes (soonest-expiring first) and
 * advances (oldest first, their GST adjusted: decision 0280). The API, the billing run
 * (settleSubscriptionInvoices, the batch twin) and every flow that issues an invoice use this, so
 * the balance is applied the same way everywhere. A charge_automatically invoice still due
 * afterwards gets its charge job (collections), which runs after this transaction commits.
 */
export async function finalizeInvoiceWithCredit(ctx: Ctx, invoiceId: string): Promise<InvoiceRow> {
  const draft = await getInvoiceRow(ctx, invoiceId, true);
  let promotional: PromotionalDraws | undefined;
  if (draft.status === 'draft' && draft.billing_reason !== CREDIT_TOP_UP_REASON) {
    const lines = await linesOfInvoices(ctx.tx, ctx.tenantId, [invoiceId]);
    [promotional] = await drawPromotionalCredit(ctx, [
      {
        customerId: draft.customer_id,
        currency: draft.currency,
        lines: lines.map((l) => ({ key: l.id, amount: l.amount, plan_id: l.plan_id, price_id: l.price_id })),
      },
    ]);
    if (promotional && promotional.draws.length > 0) {
      await discountDraftLines(
        ctx,
        invoiceId,
        [...promotional.lineDiscounts].map(([lineId, amount]) => ({ lineId, amount })),
      );
    }
  }
  const finalized = await finalizeInvoice(ctx, invoiceId);
  if (promotional && promotional.draws.length > 0) await recordPromotionalDraws(ctx, [{ invoiceId, draws: promotional.draws }]);
  const row = await spendCredit(ctx, [finalized]);
  await scheduleAutomaticCharges(ctx, row);
  return row[0]!;
}

/**
 * Promotional grants on draft inputs about to be issued together (issueInvoices): each input's
 * lines get the discounts its customer's grants give, before GST. Returns the inputs to issue and
 * the draws to record once the invoices exist (recordPromotionalDraws).
 */
export async function discountInputsWithGrants(
  ctx: Ctx,
  inputs: DraftInvoiceInput[],
  holding: Set<string>,
): Promise<{ inputs: DraftInvoiceInput[]; draws: PromotionalDraws[] }> {
  const subjects = inputs.map((input) => ({
    customerId: input.customer.id,
    currency: input.currency,
    lines: holding.has(input.customer.id) && input.billingReason !== CREDIT_TOP_UP_REASON ? input.lines.map(drawLineOf) : [],
  }));
  const draws = await drawPromotionalCredit(ctx, subjects);
  const discounted = inputs.map((input, i) => {
    const d = draws[i];
    if (!d || d.draws.length === 0) return input;
    return { ...input, lines: input.lines.map((l, k) => ({ ...l, discount_amount: (l.discount_amount ?? 0) + (d.lineDiscounts.get(String(k)) ?? 0) })) };
  });
  return { inputs: discounted, draws };
}

function drawLineOf(l: DraftInvoiceInput['lines'][number], k: number): DrawLine {
  return { key: String(k), amount: l.quantity * l.unit_amount - (l.discount_amount ?? 0), plan_id: l.plan_id ?? null, price_id: l.price_id ?? null };
}

/**
 * After finalization: paid credit grants settle what they can (like a payment), then credit notes
 * and advances the rest. Answers the invoices as they are now.
 */
export async function spendCredit(ctx: Ctx, invoices: InvoiceRow[]): Promise<InvoiceRow[]> {
  const settled = await drawPaidCredit(ctx, invoices);
  const out: InvoiceRow[] = [];
  for (const invoice of invoices) {
    let row = settled.has(invoice.id) ? await getInvoiceRow(ctx, invoice.id) : invoice;
    if ((await spendCustomerBalance(ctx, row)) > 0) row = await getInvoiceRow(ctx, invoice.id);
    out.push(row);
  }
  return out;
}

/** Credit notes first (they are the customer's already), then advances; answers how much was applied. */
export async function spendCustomerBalance(ctx: Ctx, invoice: InvoiceRow): Promise<number> {
  const credited = await applyAvailableCredit(ctx, invoice);
  const after = credited > 0 ? await getInvoiceRow(ctx, invoice.id) : invoice;
  return credited + (await applyAdvances(ctx, after));
}

/**
 * `POST /v1/invoices/{id}/apply-balance`: spends what the customer holds (credit notes, advances)
 * on an open invoice now — e.g. an advance received after the invoice was issued.
 */
export async function applyCustomerBalance(ctx: Ctx, invoiceId: string): Promise<InvoiceRow> {
  const invoice = await getInvoiceRow(ctx, invoiceId, true);
  if (invoice.status !== 'open' && invoice.status !== 'uncollectible') {
    throw errors.conflict(`cannot apply a balance to an invoice whose status is ${invoice.status}`, 'invalid_invoice_state');
  }
  const applied = await spendCustomerBalance(ctx, invoice);
  return applied > 0 ? getInvoiceRow(ctx, invoiceId) : invoice;
}
