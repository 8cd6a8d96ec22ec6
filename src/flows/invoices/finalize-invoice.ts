import type { Ctx } from '../../platform/context.js';
import { errors } from '../../platform/errors.js';
import { applyAdvances, customersWithOpenAdvances } from '../../modules/advances/index.js';
import { recordInvoiceDiscounts, type DiscountInForce } from '../../modules/coupons/index.js';
import { applyAvailableCredit, customersWithSpendableCredit } from '../../modules/credit-notes/index.js';
import {
  customersHoldingGrants,
  drawPaidCredit,
  drawPromotionalCredit,
  recordPromotionalDraws,
  type DrawLine,
  type PromotionalDraws,
} from '../../modules/credits/index.js';
import {
  CREDIT_TOP_UP_REASON,
  discountDraftLines,
  finalizeInvoice,
  getInvoiceRow,
  issueInvoices,
  linesOfInvoices,
  type DraftInvoiceInput,
  type InvoiceRow,
} from '../../modules/invoices/index.js';
import { scheduleAutomaticCharges } from '../collections/collect-invoice-payment.js';

/**
 * Finalizes an existing draft and spends the customer's balance on it, in the caller's
 * transaction: promotional credit grants first, as discounts on the draft's lines before GST
 * (DESIGN §23); then, once finalized, paid credit grants (like a payment), credit notes
 * (soonest-expiring first) and advances (oldest first, their GST adjusted: decision 0280). The
 * API's finalize (and create with auto_finalize) use this; flows that issue an invoice at once
 * use issueInvoicesWithCredit, which spends the balance in the same order. A charge_automatically
 * invoice still due afterwards gets its charge job (collections), which runs after this
 * transaction commits.
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

/** The subscription discounts an input's lines took (recordInvoiceDiscounts), one list per input. */
export type DiscountsApplied = { inForce: DiscountInForce; amount: number }[];

/**
 * Issues invoices drafted and finalized at once (issueInvoices: GST, numbers, ledger entries and
 * events for the batch in a few statements), records the subscription discounts they took, spends
 * any customer balance (only for the customers who hold some — promotional grants on the lines
 * before GST, then paid grants, credit notes and advances, as finalizeInvoiceWithCredit does for a
 * draft) and schedules one charge job for the charge_automatically ones. The billing run issues
 * its batches here; every flow that issues one invoice at once calls it with one item
 * (issueInvoiceWithCredit), so there is one path for both.
 */
export async function issueInvoicesWithCredit(ctx: Ctx, inputs: DraftInvoiceInput[], discountsApplied: DiscountsApplied[] = []): Promise<InvoiceRow[]> {
  // Credit grants (DESIGN §23), only for the customers who hold some: promotional ones on the
  // lines before GST, then paid ones like a payment once issued.
  const holdingGrants = await customersHoldingGrants(
    ctx,
    inputs.map((i) => i.customer.id),
  );
  const promotional = holdingGrants.size > 0 ? await discountInputsWithGrants(ctx, inputs, holdingGrants) : { inputs, draws: [] };
  const issued = await issueInvoices(ctx, promotional.inputs);
  for (const [i, invoice] of issued.entries()) await recordInvoiceDiscounts(ctx, invoice.id, discountsApplied[i] ?? []);
  await recordPromotionalDraws(
    ctx,
    issued.map((invoice, i) => ({ invoiceId: invoice.id, draws: promotional.draws[i]?.draws ?? [] })),
  );
  const holdingCredit = await customersWithSpendableCredit(
    ctx.tx,
    ctx.tenantId,
    issued.map((i) => i.customer_id),
    ctx.now,
  );
  const holdingAdvances = await customersWithOpenAdvances(
    ctx.tx,
    ctx.tenantId,
    issued.map((i) => i.customer_id),
  );
  const spending = issued.filter((i) => holdingGrants.has(i.customer_id) || holdingCredit.has(i.customer_id) || holdingAdvances.has(i.customer_id));
  const spent = new Map((await spendCredit(ctx, spending)).map((row) => [row.id, row]));
  const invoices = issued.map((row) => spent.get(row.id) ?? row);
  // charge_automatically invoices: one charge job for the batch; it reads each balance (after credit) when it runs.
  await scheduleAutomaticCharges(ctx, invoices);
  return invoices;
}

/** issueInvoicesWithCredit for one invoice. */
export async function issueInvoiceWithCredit(ctx: Ctx, input: DraftInvoiceInput, discountsApplied: DiscountsApplied = []): Promise<InvoiceRow> {
  const [invoice] = await issueInvoicesWithCredit(ctx, [input], [discountsApplied]);
  return invoice!;
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
