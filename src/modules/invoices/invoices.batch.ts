import type { Ctx } from '../../platform/context.js';
import { errors } from '../../platform/errors.js';
import { emitEvents } from '../../platform/events/events.js';
import {
  entityAt,
  findEntity,
  findPrimaryEntity,
  invoiceExchangeRate,
  takeDocumentNumbers,
  type EntityRow,
  type InvoiceExchangeRate,
} from '../entities/index.js';
import { postEntries, type Posting } from '../ledger/index.js';
import { postingDates } from '../periods/index.js';
import { readSettings } from '../tenants/index.js';
import { insertInvoices, type InvoiceLineRow, type InvoiceRow } from './invoices.repository.js';
import {
  buildDraftInvoice,
  customerSnapshot,
  documentKindOf,
  entitySnapshot,
  finalizationPosting,
  toInvoice,
  type DraftInvoiceInput,
} from './invoices.service.js';

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
      entity = await entityAt(ctx, entity, ctx.now); // its LUT in force on this date (decision 0282)
      entities.set(key, entity);
    }
    return entity;
  };
  const resolved: EntityRow[] = [];
  for (const input of inputs) resolved.push(await entityOf(input.entityId));
  // The INR rate per entity and currency (and per rate given), read once each.
  const rates = new Map<string, InvoiceExchangeRate>();
  const rateOf: InvoiceExchangeRate[] = [];
  for (const [i, input] of inputs.entries()) {
    const entity = resolved[i]!;
    const key = `${entity.id}:${input.currency}:${input.exchangeRate ?? ''}`;
    if (!rates.has(key)) rates.set(key, await invoiceExchangeRate(ctx, entity, input.currency, input.exchangeRate, ctx.now));
    rateOf.push(rates.get(key)!);
  }

  // Dated in each entity's first open period (DESIGN §18): a closed month gets no new invoice.
  const issuedAt = await postingDates(ctx, [...new Set(resolved.map((e) => e.id))]);

  // Numbers per entity and series, in input order: a top-up of prepaid credit is no tax invoice
  // and takes its own series (decision 0840).
  const seriesOf = (i: number) => `${resolved[i]!.id}:${documentKindOf(inputs[i]!.billingReason)}`;
  const numbers = new Map<string, string[]>();
  for (const key of new Set(inputs.map((_, i) => seriesOf(i)))) {
    const first = inputs.findIndex((_, i) => seriesOf(i) === key);
    const entity = resolved[first]!;
    const count = inputs.filter((_, i) => seriesOf(i) === key).length;
    numbers.set(key, await takeDocumentNumbers(ctx, entity, documentKindOf(inputs[first]!.billingReason), count, issuedAt.get(entity.id) ?? ctx.now));
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
    const { row: draft, lines: invoiceLines } = buildDraftInvoice(ctx, entity, settings.sac_code, input, rateOf[i]!);
    const id = draft.id;
    const k = taken.get(seriesOf(i)) ?? 0;
    taken.set(seriesOf(i), k + 1);
    const number = numbers.get(seriesOf(i))![k]!;
    const paidAtOnce = draft.total === 0;
    const open: InvoiceRow = {
      ...draft,
      number,
      status: 'open',
      issued_at: issuedAt.get(entity.id) ?? ctx.now,
      due_date: input.dueDate ?? new Date(ctx.now.getTime() + settings.invoice_due_days * DAY_MS),
      supplier: entitySnapshot(entity),
      customer_details: customerSnapshot(input.customer),
    };
    const final: InvoiceRow = paidAtOnce ? { ...open, status: 'paid', paid_at: ctx.now } : open;
    invoices.push(final);
    lines.push(...invoiceLines);
    linesById.set(id, invoiceLines);
    postings.push(finalizationPosting(final, entity, number));
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
      last_payment_error: null,
      shipping_bill: null,
    })),
    lines,
  );
  await postEntries(ctx, postings);
  // Per invoice still created → finalized → paid, as one by one; the batch's are grouped by type.
  await emitEvents(ctx, [
    ...created.map((object) => ({ type: 'invoice.created' as const, object })),
    ...finalized.map((object) => ({ type: 'invoice.finalized' as const, object })),
    ...paid.map((object) => ({ type: 'invoice.paid' as const, object })),
  ]);
  return invoices;
}
