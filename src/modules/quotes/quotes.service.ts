import type { Ctx, ReadCtx } from '../../platform/context.js';
import { errors } from '../../platform/errors.js';
import { emitEvent } from '../../platform/events/events.js';
import type { Page } from '../../platform/http/envelope.js';
import { newId } from '../../platform/ids.js';
import { toIso, toIsoOrNull } from '../../platform/time.js';
import { customerCountry, customerStateCode, getCustomer } from '../customers/index.js';
import { findEntity, findPrimaryEntity, takeDocumentNumber, type EntityRow } from '../entities/index.js';
import type { DraftLine } from '../invoices/index.js';
import { computeInvoiceTax, resolveHsnCode } from '../tax/index.js';
import { getTenant, readSettings } from '../tenants/index.js';
import { allocateDiscount } from './quote-pricing.js';
import { findQuote, insertQuote, listQuoteRows, type QuoteFilter, type QuoteRow } from './quotes.repository.js';
import type { CreateQuoteBody, Quote } from './quotes.schemas.js';
import { transitionQuote } from './quotes.states.js';
import type { QuoteLine } from './quotes.tables.js';

const DAY_MS = 86_400_000;
/** A quote without valid_until / expires_at stays open this long. */
export const DEFAULT_QUOTE_VALIDITY_DAYS = 30;

export function toQuote(row: QuoteRow): Quote {
  const validUntil = toIsoOrNull(row.valid_until);
  return {
    id: row.id,
    tenant_id: row.tenant_id,
    customer_id: row.customer_id,
    entity_id: row.entity_id,
    quote_number: row.quote_number,
    status: row.status,
    line_items: row.line_items.map((l) => ({
      description: l.description,
      quantity: l.quantity,
      unit_price: l.unit_amount,
      unit_amount: l.unit_amount,
      amount: l.amount,
      discount_amount: l.discount_amount,
      hsn_code: l.hsn_code,
    })),
    subtotal: row.subtotal,
    discount_amount: row.discount_amount,
    tax_amount: row.tax_amount,
    tax_computed: row.tax_computed,
    total: row.total,
    currency: row.currency,
    valid_until: validUntil,
    expires_at: validUntil,
    notes: row.notes,
    terms: row.terms,
    invoice_id: row.invoice_id,
    accepted_at: toIsoOrNull(row.accepted_at),
    declined_at: toIsoOrNull(row.declined_at),
    expired_at: toIsoOrNull(row.expired_at),
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}

/**
 * The invoice lines a quote becomes: a line without a discount share exactly as quoted; a
 * discounted one as one unit at its net amount (invoice lines cannot be negative, and GST is due
 * on the discounted value).
 */
export function invoiceLinesOfQuote(row: QuoteRow): DraftLine[] {
  return row.line_items.map((l) =>
    l.discount_amount === 0
      ? { description: l.description, quantity: l.quantity, unit_amount: l.unit_amount, hsn_code: l.hsn_code ?? undefined }
      : {
          description: `${l.description} (${l.quantity} × ${l.unit_amount}, less ${l.discount_amount} discount)`,
          quantity: 1,
          unit_amount: l.amount - l.discount_amount,
          hsn_code: l.hsn_code ?? undefined,
        },
  );
}

async function issuingEntity(ctx: Ctx, entityId: string | undefined): Promise<EntityRow> {
  const entity = entityId ? await findEntity(ctx.tx, ctx.tenantId, entityId) : await findPrimaryEntity(ctx.tx, ctx.tenantId);
  if (!entity) throw errors.notFound('entity');
  return entity;
}

/**
 * SPEC 4.5. Line amounts, subtotal and total are computed here; tax, unless the caller gives
 * `tax_amount`, is the GST the acceptance invoice will carry (same lines, entity, customer and
 * rules). The number is taken from the entity's quote series now, at creation: a quote is not a
 * tax document, and a number the customer can quote back from the first e-mail is the point.
 */
export async function createQuote(ctx: Ctx, input: CreateQuoteBody): Promise<QuoteRow> {
  const customer = await getCustomer(ctx, input.customer_id);
  const entity = await issuingEntity(ctx, input.entity_id);
  const validUntilText = input.valid_until ?? input.expires_at;
  const validUntil = validUntilText ? new Date(validUntilText) : new Date(ctx.now.getTime() + DEFAULT_QUOTE_VALIDITY_DAYS * DAY_MS);
  if (validUntil <= ctx.now) throw errors.invalidField(input.valid_until ? 'valid_until' : 'expires_at', 'must be in the future');
  const amounts = input.line_items.map((l) => l.quantity * (l.unit_amount ?? l.unit_price)!);
  const subtotal = amounts.reduce((sum, a) => sum + a, 0);
  if (!Number.isSafeInteger(subtotal))
    throw errors.invalidField('line_items', `the subtotal exceeds the largest amount Kosh holds (${Number.MAX_SAFE_INTEGER} minor units)`);
  if (input.discount_amount > subtotal) throw errors.invalidField('discount_amount', `must not exceed the subtotal (${subtotal})`);
  const shares = allocateDiscount(amounts, input.discount_amount);
  const lines: QuoteLine[] = input.line_items.map((l, i) => ({
    description: l.description,
    quantity: l.quantity,
    unit_amount: (l.unit_amount ?? l.unit_price)!,
    amount: amounts[i]!,
    discount_amount: shares[i]!,
    hsn_code: l.hsn_code ?? null,
  }));
  let taxAmount = input.tax_amount;
  if (taxAmount === undefined) {
    const settings = await readSettings(ctx);
    const draft = { line_items: lines } as QuoteRow;
    const tax = computeInvoiceTax({
      supplier: { country_code: entity.country_code, gstin: entity.gstin, state_code: entity.state_code, lut: entity.lut },
      customer: { country_code: customerCountry(customer), state_code: customerStateCode(customer), gstin: customer.gstin, sez: customer.sez },
      lines: invoiceLinesOfQuote(draft).map((l) => ({
        quantity: l.quantity,
        unit_amount: l.unit_amount,
        hsn_code: resolveHsnCode(l.hsn_code, null, settings.sac_code),
      })),
      field: (i, name) => (i === null ? 'line_items' : `line_items.${i}.${name}`),
    });
    taxAmount = tax.tax_amount;
  }
  const total = subtotal - input.discount_amount + taxAmount;
  if (!Number.isSafeInteger(total)) {
    throw errors.invalidField(
      input.tax_amount !== undefined ? 'tax_amount' : 'line_items',
      `the total with tax exceeds the largest amount Kosh holds (${Number.MAX_SAFE_INTEGER} minor units)`,
    );
  }
  const row: QuoteRow = {
    tenant_id: ctx.tenantId,
    id: newId(),
    customer_id: customer.id,
    entity_id: entity.id,
    quote_number: await takeDocumentNumber(ctx, entity, 'quote'),
    status: 'draft',
    currency: input.currency ?? (await getTenant(ctx)).base_currency,
    line_items: lines,
    subtotal,
    discount_amount: input.discount_amount,
    tax_amount: taxAmount,
    tax_computed: input.tax_amount === undefined,
    total,
    valid_until: validUntil,
    notes: input.notes,
    terms: input.terms,
    invoice_id: null,
    accepted_at: null,
    declined_at: null,
    expired_at: null,
    created_at: ctx.now,
    updated_at: ctx.now,
  };
  await insertQuote(ctx.tx, { ...row, line_items: JSON.stringify(lines) });
  const quote = toQuote(row);
  await emitEvent(ctx, 'quote.created', quote);
  return row;
}

export async function getQuote(ctx: ReadCtx, id: string): Promise<Quote> {
  const row = await findQuote(ctx.tx, ctx.tenantId, id);
  if (!row) throw errors.notFound('quote');
  return toQuote(row);
}

export async function listQuotes(ctx: ReadCtx, filter: QuoteFilter, page: Page): Promise<{ quotes: Quote[]; total: number }> {
  const { rows, total } = await listQuoteRows(ctx.tx, ctx.tenantId, filter, page);
  return { quotes: rows.map(toQuote), total };
}

/**
 * Locks an open, still-valid quote for acceptance (FOR UPDATE: a second accept waits, then sees
 * `accepted` and gets 409). Past valid_until → 409 `quote_expired`, even before the job marks it.
 */
export async function lockQuoteForAcceptance(ctx: Ctx, id: string): Promise<QuoteRow> {
  const row = await findQuote(ctx.tx, ctx.tenantId, id, true);
  if (!row) throw errors.notFound('quote');
  if (row.status !== 'draft') throw errors.conflict(`cannot accept a quote whose status is ${row.status}`, `quote_${row.status}`);
  if (row.valid_until && row.valid_until <= ctx.now) throw errors.conflict('the quote expired at its valid_until', 'quote_expired');
  return row;
}

export async function markQuoteAccepted(ctx: Ctx, id: string, invoiceId: string): Promise<QuoteRow> {
  const row = await transitionQuote(
    ctx.tx,
    ctx.tenantId,
    id,
    'accept',
    { invoice_id: invoiceId, accepted_at: ctx.now, updated_at: ctx.now },
    { validAt: ctx.now },
  );
  await emitEvent(ctx, 'quote.accepted', toQuote(row));
  return row;
}

export async function declineQuote(ctx: Ctx, id: string): Promise<QuoteRow> {
  const row = await transitionQuote(ctx.tx, ctx.tenantId, id, 'decline', { declined_at: ctx.now, updated_at: ctx.now });
  await emitEvent(ctx, 'quote.declined', toQuote(row));
  return row;
}

/** draft → expired once valid_until has passed; null when not (or no longer) due. */
export async function expireQuote(ctx: Ctx, id: string): Promise<QuoteRow | null> {
  const current = await findQuote(ctx.tx, ctx.tenantId, id);
  if (!current || current.status !== 'draft' || !current.valid_until || current.valid_until > ctx.now) return null;
  const row = await transitionQuote(ctx.tx, ctx.tenantId, id, 'expire', { expired_at: ctx.now, updated_at: ctx.now }, { lapsedAt: ctx.now });
  await emitEvent(ctx, 'quote.expired', toQuote(row));
  return row;
}
