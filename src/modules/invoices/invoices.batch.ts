import type { Ctx } from '../../platform/context.js';
import { errors } from '../../platform/errors.js';
import { emitEvents } from '../../platform/events/events.js';
import { newId } from '../../platform/ids.js';
import { customerCountry, customerStateCode } from '../customers/index.js';
import { findEntity, findPrimaryEntity, takeDocumentNumbers, type EntityRow } from '../entities/index.js';
import { Account, postEntries, type Posting } from '../ledger/index.js';
import { computeInvoiceTax, resolveHsnCode } from '../tax/index.js';
import { readSettings } from '../tenants/index.js';
import { insertInvoices, type InvoiceLineRow, type InvoiceRow } from './invoices.repository.js';
import { customerSnapshot, entitySnapshot, toInvoice, type DraftInvoiceInput } from './invoices.service.js';

const DAY_MS = 86_400_000;

/**
 * createDraftInvoice + finalizeInvoice for many invoices at once — the billing run's batches —
 * with the same results row for row: GST per line from the customer's and entity's details now,
 * the entity's next gapless numbers (taken together, in input order, inside this transaction, so
 * a rollback returns them all), the parties frozen, one balanced `invoice.finalized` entry each,
 * and `invoice.created` (as the draft was) then `invoice.finalized` (and `invoice.paid` for a zero
 * total) per invoice. A handful of statements per batch instead of a dozen per invoice.
 * Customer credit is not applied here: the caller does that (flows/finalize-invoice does for one).
 */
export async function issueInvoices(ctx: Ctx, inputs: DraftInvoiceInput[]): Promise<InvoiceRow[]> {
  if (inputs.length === 0) return [];
  const settings = await readSettings(ctx);
  const entities = new Map<string, EntityRow>();
  const entityOf = async (id: string | undefined): Promise<EntityRow> => {
    const key = id ?? '';
    let entity = entities.get(key);
    if (!entity) {
      entity = (id ? await findEntity(ctx.tx, ctx.tenantId, id) : await findPrimaryEntity(ctx.tx, ctx.tenantId)) ?? undefined;
      if (!entity) throw errors.notFound('entity');
      entities.set(key, entity);
    }
    return entity;
  };
  const resolved: EntityRow[] = [];
  for (const input of inputs) resolved.push(await entityOf(input.entityId));

  // Numbers per entity, in input order.
  const numbers = new Map<string, string[]>();
  for (const entity of new Set(resolved)) {
    const count = resolved.filter((e) => e === entity).length;
    numbers.set(entity.id, await takeDocumentNumbers(ctx, entity, 'invoice', count));
  }
  const taken = new Map<string, number>();

  const invoices: InvoiceRow[] = [];
  const lines: InvoiceLineRow[] = [];
  const linesById = new Map<string, InvoiceLineRow[]>();
  const postings: Posting[] = [];
  const created: Record<string, unknown>[] = [];
  const finalized: Record<string, unknown>[] = [];
  const paid: Record<string, unknown>[] = [];
  inputs.forEach((input, i) => {
    const entity = resolved[i]!;
    const tax = computeInvoiceTax({
      supplier: { country_code: entity.country_code, state_code: entity.state_code },
      customer: { country_code: customerCountry(input.customer), state_code: customerStateCode(input.customer), gstin: input.customer.gstin },
      lines: input.lines.map((l) => ({ quantity: l.quantity, unit_amount: l.unit_amount, hsn_code: resolveHsnCode(l.hsn_code, null, settings.sac_code) })),
    });
    const k = taken.get(entity.id) ?? 0;
    taken.set(entity.id, k + 1);
    const number = numbers.get(entity.id)![k]!;
    const id = newId();
    const paidAtOnce = tax.total === 0;
    const draft: InvoiceRow = {
      tenant_id: ctx.tenantId,
      id,
      entity_id: entity.id,
      customer_id: input.customer.id,
      subscription_id: input.subscriptionId ?? null,
      number: null,
      status: 'draft',
      billing_reason: input.billingReason ?? 'manual',
      currency: input.currency,
      subtotal: tax.subtotal,
      tax_amount: tax.tax_amount,
      cgst_amount: tax.cgst_amount,
      sgst_amount: tax.sgst_amount,
      igst_amount: tax.igst_amount,
      tax_type: tax.tax_type,
      utgst: tax.utgst,
      place_of_supply: tax.place_of_supply,
      total: tax.total,
      amount_paid: 0,
      amount_tds: 0,
      amount_credited: 0,
      amount_due: tax.total,
      period_start: input.periodStart ?? null,
      period_end: input.periodEnd ?? null,
      issued_at: null,
      due_date: input.dueDate ?? null,
      paid_at: null,
      voided_at: null,
      marked_uncollectible_at: null,
      supplier: null,
      customer_details: null,
      memo: input.memo ?? null,
      metadata: input.metadata ?? {},
      created_at: ctx.now,
      updated_at: ctx.now,
    };
    const open: InvoiceRow = {
      ...draft,
      number,
      status: 'open',
      issued_at: ctx.now,
      due_date: input.dueDate ?? new Date(ctx.now.getTime() + settings.invoice_due_days * DAY_MS),
      supplier: entitySnapshot(entity),
      customer_details: customerSnapshot(input.customer),
    };
    const final: InvoiceRow = paidAtOnce ? { ...open, status: 'paid', paid_at: ctx.now } : open;
    const invoiceLines: InvoiceLineRow[] = input.lines.map((l, j) => {
      const t = tax.lines[j]!;
      return {
        tenant_id: ctx.tenantId,
        id: newId(),
        invoice_id: id,
        position: j + 1,
        description: l.description,
        quantity: l.quantity,
        unit_amount: l.unit_amount,
        amount: t.amount,
        hsn_code: t.hsn_code,
        rate_bp: t.rate_bp,
        cgst_amount: t.cgst_amount,
        sgst_amount: t.sgst_amount,
        igst_amount: t.igst_amount,
        tax_amount: t.tax_amount,
        total: t.total,
        plan_id: l.plan_id ?? null,
        price_id: l.price_id ?? null,
        period_start: l.period_start ?? null,
        period_end: l.period_end ?? null,
      };
    });
    invoices.push(final);
    lines.push(...invoiceLines);
    linesById.set(id, invoiceLines);
    postings.push({
      ledgerId: entity.tb_ledger_id,
      entityId: entity.id,
      kind: 'invoice.finalized',
      referenceType: 'invoice',
      referenceId: id,
      currency: final.currency,
      description: `Invoice ${number}`,
      lines: [
        { account: Account.RECEIVABLES, debit: final.total, customerId: final.customer_id, invoiceId: id },
        { account: Account.REVENUE, credit: final.subtotal, invoiceId: id },
        { account: Account.CGST_PAYABLE, credit: final.cgst_amount, invoiceId: id },
        { account: Account.SGST_PAYABLE, credit: final.sgst_amount, invoiceId: id },
        { account: Account.IGST_PAYABLE, credit: final.igst_amount, invoiceId: id },
      ],
    });
    created.push(toInvoice(draft, invoiceLines));
    finalized.push(toInvoice(open, invoiceLines));
    if (paidAtOnce) paid.push(toInvoice(final, invoiceLines));
  });

  await insertInvoices(
    ctx.tx,
    invoices.map((row) => ({
      ...row,
      metadata: JSON.stringify(row.metadata),
      supplier: JSON.stringify(row.supplier),
      customer_details: JSON.stringify(row.customer_details),
    })),
    lines,
  );
  await postEntries(ctx, postings);
  // Per invoice still created → finalized → paid, as one by one; the batch's are grouped by type.
  await emitEvents(ctx, [
    ...created.map((object) => ({ type: 'invoice.created', object })),
    ...finalized.map((object) => ({ type: 'invoice.finalized', object })),
    ...paid.map((object) => ({ type: 'invoice.paid', object })),
  ]);
  return invoices;
}
