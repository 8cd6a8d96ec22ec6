import type { Ctx, ReadCtx } from '../../platform/context.js';
import { errors } from '../../platform/errors.js';
import { emitEvent } from '../../platform/events/events.js';
import type { Page } from '../../platform/http/envelope.js';
import { newId } from '../../platform/ids.js';
import { toIso, toIsoOrNull } from '../../platform/time.js';
import { customerCountry, customerStateCode, getCustomer, type Customer } from '../customers/index.js';
import {
  entityAt,
  findEntity,
  findPrimaryEntity,
  invoiceExchangeRate,
  lutMissing,
  takeDocumentNumber,
  type EntityRow,
  type InvoiceExchangeRate,
  type LutState,
} from '../entities/index.js';
import { Account, postEntry, type Posting } from '../ledger/index.js';
import { postingDate } from '../periods/index.js';
import { findPlan, pricesOfPlans } from '../plans/index.js';
import { computeInvoiceTax, resolveHsnCode, type GstLine, type GstLineInput, type InvoiceTax } from '../tax/index.js';
import { getTenant, readSettings } from '../tenants/index.js';
import type { CreateInvoiceBody, CreateInvoiceRequest, Invoice } from './invoices.schemas.js';
import {
  addDraftLineDiscounts,
  findInvoice,
  insertInvoice,
  linesOfInvoices,
  listInvoiceRows,
  updateInvoiceLineTax,
  type InvoiceFilter,
  type InvoiceLineRow,
  type InvoiceRow,
} from './invoices.repository.js';
import { settleInvoiceBalance, transitionInvoice, type Settlement } from './invoices.states.js';
import type { PartySnapshot, ShippingBill } from './invoices.tables.js';

const DAY_MS = 86_400_000;

export function toInvoice(row: InvoiceRow, lines: InvoiceLineRow[]): Invoice {
  return {
    id: row.id,
    tenant_id: row.tenant_id,
    number: row.number,
    status: row.status,
    customer_id: row.customer_id,
    entity_id: row.entity_id,
    subscription_id: row.subscription_id,
    billing_reason: row.billing_reason,
    currency: row.currency,
    subtotal: row.subtotal,
    discount_amount: row.discount_amount ?? 0,
    tax_amount: row.tax_amount,
    cgst_amount: row.cgst_amount,
    sgst_amount: row.sgst_amount,
    igst_amount: row.igst_amount,
    tax_type: row.tax_type,
    utgst: row.utgst,
    lut: row.lut,
    place_of_supply: row.place_of_supply,
    shipping_bill: row.shipping_bill ?? null,
    total: row.total,
    exchange_rate: row.exchange_rate,
    exchange_rate_source: row.exchange_rate_source,
    inr_subtotal: row.inr_subtotal,
    inr_cgst_amount: row.inr_cgst_amount,
    inr_sgst_amount: row.inr_sgst_amount,
    inr_igst_amount: row.inr_igst_amount,
    inr_tax_amount: row.inr_tax_amount,
    inr_total: row.inr_total,
    amount_paid: row.amount_paid,
    amount_tds: row.amount_tds,
    amount_credited: row.amount_credited,
    amount_due: row.amount_due,
    period_start: toIsoOrNull(row.period_start),
    period_end: toIsoOrNull(row.period_end),
    issued_at: toIsoOrNull(row.issued_at),
    due_date: toIsoOrNull(row.due_date),
    paid_at: toIsoOrNull(row.paid_at),
    voided_at: toIsoOrNull(row.voided_at),
    marked_uncollectible_at: toIsoOrNull(row.marked_uncollectible_at),
    supplier: row.supplier,
    customer_details: row.customer_details,
    memo: row.memo,
    metadata: row.metadata,
    collection_method: row.collection_method ?? 'send_invoice',
    last_payment_error: row.last_payment_error ?? null,
    lines: lines.map((l) => ({
      id: l.id,
      position: l.position,
      description: l.description,
      quantity: l.quantity,
      unit_amount: l.unit_amount,
      discount_amount: l.discount_amount ?? 0,
      amount: l.amount,
      hsn_code: l.hsn_code,
      tax_rate_bp: l.rate_bp,
      cgst_amount: l.cgst_amount,
      sgst_amount: l.sgst_amount,
      igst_amount: l.igst_amount,
      tax_amount: l.tax_amount,
      total: l.total,
      inr_amount: l.inr_amount,
      inr_cgst_amount: l.inr_cgst_amount,
      inr_sgst_amount: l.inr_sgst_amount,
      inr_igst_amount: l.inr_igst_amount,
      plan_id: l.plan_id,
      period_start: toIsoOrNull(l.period_start),
      period_end: toIsoOrNull(l.period_end),
      subscription_id: l.subscription_id ?? null,
      customer_id: l.customer_id ?? null,
    })),
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}

async function loadInvoice(ctx: ReadCtx, row: InvoiceRow): Promise<Invoice> {
  return toInvoice(row, await linesOfInvoices(ctx.tx, ctx.tenantId, [row.id]));
}

/** A line as the billing code gives it: resolved amounts, before tax. */
export type DraftLine = {
  description: string;
  quantity: number;
  unit_amount: number;
  /** Taken off quantity × unit_amount before GST (coupons: applyDiscounts); 0 by default. */
  discount_amount?: number;
  hsn_code?: string;
  /** The rate the line or its plan gives; else the code's rate applies. */
  tax_rate_bp?: number | null;
  plan_id?: string | null;
  price_id?: string | null;
  period_start?: Date | null;
  period_end?: Date | null;
  /** On a consolidated invoice (decision 0550): the child's subscription and the child the line bills. */
  subscription_id?: string | null;
  customer_id?: string | null;
};

export type DraftInvoiceInput = {
  customer: Customer;
  entityId?: string;
  currency: string;
  lines: DraftLine[];
  dueDate?: Date;
  subscriptionId?: string | null;
  billingReason?: string;
  periodStart?: Date | null;
  periodEnd?: Date | null;
  memo?: string | null;
  metadata?: Record<string, unknown>;
  /** The INR exchange rate the request gave (a decimal string); else the entity's table applies. */
  exchangeRate?: string | null;
  /** Names the request field of a validation error (see computeInvoiceTax); `lines.N.x` by default. */
  field?: (index: number | null, name: string) => string;
  collectionMethod?: 'send_invoice' | 'charge_automatically';
};

async function resolveEntity(ctx: ReadCtx, entityId: string | undefined): Promise<EntityRow> {
  const entity = entityId ? await findEntity(ctx.tx, ctx.tenantId, entityId) : await findPrimaryEntity(ctx.tx, ctx.tenantId);
  if (!entity) throw errors.notFound('entity');
  // Whether its LUT is in force on this date (per financial year: decision 0282).
  return entityAt(ctx, entity, ctx.now);
}

const apiField = (index: number | null, name: string) => (index === null ? name : `lines.${index}.${name}`);

/** The tax of an invoice between these parties now: GST per line, and the INR amounts (rule 34). */
function taxInvoice(
  entity: EntityRow & { lut_refuse?: LutState | null },
  customer: Customer,
  currency: string,
  lines: readonly GstLineInput[],
  rate: InvoiceExchangeRate,
  field: (index: number | null, name: string) => string = apiField,
  invoiceDate?: Date,
): InvoiceTax {
  const tax = computeInvoiceTax({
    supplier: { country_code: entity.country_code, gstin: entity.gstin, state_code: entity.state_code, lut: entity.lut },
    customer: { country_code: customerCountry(customer), state_code: customerStateCode(customer), gstin: customer.gstin, sez: customer.sez },
    lines,
    currency,
    exchangeRate: rate?.rate ?? null,
    field,
    invoiceDate,
  });
  if (entity.lut_refuse && (tax.tax_type === 'export' || tax.tax_type === 'sez')) throw lutMissing({ id: entity.id, lut_refuse: entity.lut_refuse });
  // Notification 78/2020-Central Tax: above ₹5 crore of turnover an invoice carries 6-digit HSN
  // (GSTR-1 table 12 the same, decision 0361).
  if (tax.tax_type !== '' && entity.aato_band !== 'up_to_5_crore') {
    lines.forEach((l, i) => {
      if (l.hsn_code.length < 6) {
        throw errors.invalidField(
          field(i, 'hsn_code'),
          `HSN/SAC ${l.hsn_code} has ${l.hsn_code.length} digits: an entity with turnover above ₹5 crore gives at least 6 (Notification 78/2020-Central Tax)`,
        );
      }
    });
  }
  if (tax.tax_type !== '' && tax.inr === null && tax.tax_amount > 0) {
    throw errors.invalidField(
      'exchange_rate',
      `GST on a ${currency} invoice is determined in INR (CGST Rules, rule 34): give exchange_rate, or set the entity's rate with PUT /v1/entities/${entity.id}/exchange-rates`,
    );
  }
  return tax;
}

/**
 * The supplier as the GST engine sees it for an invoice of this billing reason. A prepaid-credit
 * top-up is a request for an advance, not a tax invoice (decision 0700): its GST is due when the
 * payment is received (CGST Act s.13(2)) and is charged on the receipt voucher issued then (CGST
 * Rules, rule 50), so the request itself carries no GST lines — its lines (the credit and the GST
 * the voucher will charge) are untaxed, as for a supplier without a GSTIN, and it is neither listed
 * in GSTR-1 tables 4/5/7 nor e-invoiced.
 */
function taxedAs<E extends EntityRow>(entity: E, billingReason: string | null | undefined): E {
  return billingReason === CREDIT_TOP_UP_REASON ? { ...entity, gstin: null } : entity;
}

/** The tax columns of an invoice row, from a computed tax. */
function invoiceTaxColumns(tax: InvoiceTax, rate: InvoiceExchangeRate) {
  return {
    subtotal: tax.subtotal,
    tax_amount: tax.tax_amount,
    cgst_amount: tax.cgst_amount,
    sgst_amount: tax.sgst_amount,
    igst_amount: tax.igst_amount,
    tax_type: tax.tax_type,
    utgst: tax.utgst,
    lut: tax.lut,
    place_of_supply: tax.place_of_supply,
    total: tax.total,
    // The rate is kept whenever the invoice is in another currency than the entity's books (DESIGN
    // §19), even when GST determines no INR amounts (an entity without a GSTIN, or outside India).
    exchange_rate: tax.inr ? tax.exchange_rate : rate && rate.source !== 'invoice_currency' ? rate.rate : null,
    exchange_rate_source: (tax.inr || rate?.source !== 'invoice_currency') && rate ? rate.source : null,
    inr_subtotal: tax.inr?.subtotal ?? null,
    inr_cgst_amount: tax.inr?.cgst_amount ?? null,
    inr_sgst_amount: tax.inr?.sgst_amount ?? null,
    inr_igst_amount: tax.inr?.igst_amount ?? null,
    inr_tax_amount: tax.inr?.tax_amount ?? null,
    inr_total: tax.inr?.total ?? null,
  };
}

/** The tax columns of an invoice line, from its computed tax. */
function lineTaxColumns(t: GstLine) {
  return {
    amount: t.amount,
    rate_bp: t.rate_bp,
    cgst_amount: t.cgst_amount,
    sgst_amount: t.sgst_amount,
    igst_amount: t.igst_amount,
    tax_amount: t.tax_amount,
    total: t.total,
    inr_amount: t.inr?.amount ?? null,
    inr_cgst_amount: t.inr?.cgst_amount ?? null,
    inr_sgst_amount: t.inr?.sgst_amount ?? null,
    inr_igst_amount: t.inr?.igst_amount ?? null,
  };
}

/**
 * The rows of a draft invoice — GST per line from the entity's and customer's details now — built
 * in one place for the single path (createDraftInvoice) and the batch path (issueInvoices).
 * `rate` is the INR exchange rate (see invoiceExchangeRate).
 */
export function buildDraftInvoice(
  ctx: ReadCtx,
  entity: EntityRow,
  sacCode: string | null,
  input: DraftInvoiceInput,
  rate: InvoiceExchangeRate,
): { row: InvoiceRow; lines: InvoiceLineRow[] } {
  const taxLines = input.lines.map((l) => ({
    quantity: l.quantity,
    unit_amount: l.unit_amount,
    hsn_code: resolveHsnCode(l.hsn_code, null, sacCode),
    tax_rate_bp: l.tax_rate_bp ?? null,
    discount_amount: l.discount_amount ?? 0,
    supply_date: l.period_end ?? null,
  }));
  // Dated now (the invoice's date when issued at once; finalizing a draft computes it again then).
  const tax = taxInvoice(taxedAs(entity, input.billingReason), input.customer, input.currency, taxLines, rate, input.field, ctx.now);
  const id = newId();
  const row: InvoiceRow = {
    tenant_id: ctx.tenantId,
    id,
    entity_id: entity.id,
    customer_id: input.customer.id,
    subscription_id: input.subscriptionId ?? null,
    number: null,
    status: 'draft',
    billing_reason: input.billingReason ?? 'manual',
    currency: input.currency,
    ...invoiceTaxColumns(tax, rate),
    discount_amount: input.lines.reduce((sum, l) => sum + (l.discount_amount ?? 0), 0),
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
    collection_method: input.collectionMethod ?? 'send_invoice',
    last_payment_error: null,
    shipping_bill: null,
    created_at: ctx.now,
    updated_at: ctx.now,
  };
  const lines: InvoiceLineRow[] = input.lines.map((l, i) => {
    const t = tax.lines[i]!;
    return {
      tenant_id: ctx.tenantId,
      id: newId(),
      invoice_id: id,
      position: i + 1,
      description: l.description,
      quantity: l.quantity,
      unit_amount: l.unit_amount,
      discount_amount: l.discount_amount ?? 0,
      hsn_code: t.hsn_code,
      explicit_rate_bp: l.tax_rate_bp ?? null,
      ...lineTaxColumns(t),
      plan_id: l.plan_id ?? null,
      price_id: l.price_id ?? null,
      period_start: l.period_start ?? null,
      period_end: l.period_end ?? null,
      subscription_id: l.subscription_id ?? null,
      customer_id: l.customer_id ?? null,
    };
  });
  return { row, lines };
}

function lineTaxChanged(before: InvoiceLineRow, after: InvoiceLineRow): boolean {
  const keys = [
    'amount',
    'rate_bp',
    'cgst_amount',
    'sgst_amount',
    'igst_amount',
    'tax_amount',
    'total',
    'inr_amount',
    'inr_cgst_amount',
    'inr_sgst_amount',
    'inr_igst_amount',
  ] as const;
  return keys.some((k) => before[k] !== after[k]);
}

/** The billing reason of an invoice that sells prepaid credit (a paid credit grant, DESIGN §23). */
export const CREDIT_TOP_UP_REASON = 'credit_top_up';

/**
 * The number series an invoice of this billing reason is numbered in: a top-up of prepaid credit
 * asks for an advance and is no tax invoice (decision 0700), so it has a series of its own and the
 * tax-invoice series (rule 46(b)) stays consecutive without it (decision 0840).
 */
export function documentKindOf(billingReason: string | null | undefined): 'invoice' | 'top_up' {
  return billingReason === CREDIT_TOP_UP_REASON ? 'top_up' : 'invoice';
}

/**
 * Where an invoice's value is credited: revenue, except for a prepaid-credit top-up, which is an
 * advance for services not yet supplied — a liability (2330) until drawn down. A top-up carries no
 * GST of its own (taxedAs): its whole total goes to 2330, and the GST on the advance is taken out
 * of 2330 when the payment is received and its receipt voucher issued (decision 0700).
 */
function valueAccountOf(row: InvoiceRow): typeof Account.REVENUE | typeof Account.PREPAID_CREDIT {
  return row.billing_reason === CREDIT_TOP_UP_REASON ? Account.PREPAID_CREDIT : Account.REVENUE;
}

/** The finalization entry: Dr receivables (total); Cr revenue (subtotal; prepaid credit for a top-up) and each output tax. */
export function finalizationPosting(row: InvoiceRow, entity: EntityRow, number: string): Posting {
  return {
    ledgerId: entity.tb_ledger_id,
    entityId: entity.id,
    kind: 'invoice.finalized',
    referenceType: 'invoice',
    referenceId: row.id,
    currency: row.currency,
    description: `Invoice ${number}`,
    rate: row.exchange_rate,
    lines: [
      { account: Account.RECEIVABLES, debit: row.total, customerId: row.customer_id, invoiceId: row.id, functional: row.inr_total ?? undefined },
      { account: valueAccountOf(row), credit: row.subtotal, invoiceId: row.id, functional: row.inr_subtotal ?? undefined },
      { account: Account.CGST_PAYABLE, credit: row.cgst_amount, invoiceId: row.id, functional: row.inr_cgst_amount ?? undefined },
      { account: Account.SGST_PAYABLE, credit: row.sgst_amount, invoiceId: row.id, functional: row.inr_sgst_amount ?? undefined },
      { account: Account.IGST_PAYABLE, credit: row.igst_amount, invoiceId: row.id, functional: row.inr_igst_amount ?? undefined },
    ],
  };
}

/**
 * The void's entry: the exact mirror of the finalization entry, in both currencies (the invoice's
 * INR amounts, or its rate).
 */
function voidPosting(row: InvoiceRow, entity: EntityRow): Posting {
  const booked = finalizationPosting(row, entity, row.number ?? '');
  return {
    ...booked,
    kind: 'invoice.voided',
    description: `Void of invoice ${row.number}`,
    // Reversals and taxes first, the receivable last, as the entry has always been laid out.
    lines: [...booked.lines.slice(1), booked.lines[0]!].map((l) => ({
      ...l,
      account: l.account === Account.REVENUE ? Account.REVENUE_REVERSALS : l.account,
      debit: l.credit,
      credit: l.debit,
    })),
  };
}

/**
 * Creates a draft invoice with GST computed per line from the customer's and entity's details of
 * this moment. A draft is not a tax document: finalization computes the tax again from the
 * parties it freezes (finalizeInvoice).
 */
export async function createDraftInvoice(ctx: Ctx, input: DraftInvoiceInput): Promise<InvoiceRow> {
  const entity = await resolveEntity(ctx, input.entityId);
  const settings = await readSettings(ctx);
  const rate = await invoiceExchangeRate(ctx, entity, input.currency, input.exchangeRate, ctx.now);
  const { row, lines } = buildDraftInvoice(ctx, entity, settings.sac_code, input, rate);
  await insertInvoice(
    ctx.tx,
    { ...row, metadata: JSON.stringify(row.metadata), supplier: null, customer_details: null, last_payment_error: null, shipping_bill: null },
    lines,
  );
  await emitEvent(ctx, 'invoice.created', toInvoice(row, lines));
  return row;
}

/**
 * The invoice `input` would draft now — the same entity, GST per line and INR amounts as
 * createDraftInvoice — without writing anything: `id` is null (the upcoming-invoice preview).
 */
export async function previewInvoice(ctx: ReadCtx, input: DraftInvoiceInput): Promise<Omit<Invoice, 'id'> & { id: null }> {
  const entity = await resolveEntity(ctx, input.entityId);
  const settings = await readSettings(ctx);
  const rate = await invoiceExchangeRate(ctx, entity, input.currency, input.exchangeRate, ctx.now);
  const { row, lines } = buildDraftInvoice(ctx, entity, settings.sac_code, input, rate);
  return { ...toInvoice(row, lines), id: null };
}

/** Turns API lines (explicit amounts or a plan) into draft lines, pricing plans in the invoice currency. */
export async function resolveApiLines(ctx: Ctx, input: CreateInvoiceBody): Promise<DraftLine[]> {
  const lines: DraftLine[] = [];
  for (const [i, line] of input.lines.entries()) {
    if (!line.plan_id) {
      lines.push({
        description: line.description!,
        quantity: line.quantity,
        unit_amount: line.unit_amount!,
        hsn_code: line.hsn_code,
        tax_rate_bp: line.tax_rate_bp,
      });
      continue;
    }
    const plan = await findPlan(ctx.tx, ctx.tenantId, line.plan_id);
    if (!plan) throw errors.notFound('plan');
    const price = (await pricesOfPlans(ctx.tx, ctx.tenantId, [plan.id], { activeOnly: true })).find((p) => p.currency === input.currency);
    if (!price && line.unit_amount === undefined) {
      throw errors.invalidField(`lines.${i}.plan_id`, `plan ${plan.code} has no price in ${input.currency}`);
    }
    lines.push({
      description: line.description ?? plan.name,
      quantity: line.quantity,
      unit_amount: line.unit_amount ?? price!.amount,
      hsn_code: line.hsn_code ?? (plan.hsn_code || undefined),
      tax_rate_bp: line.tax_rate_bp ?? plan.tax_rate_bp,
      plan_id: plan.id,
      price_id: line.unit_amount === undefined ? price!.id : null,
    });
  }
  return lines;
}

/**
 * A create request's currency: the one it names, else its entity's — INR for an Indian entity
 * (its functional currency, DESIGN §19), else the tenant's base currency.
 */
export async function withInvoiceCurrency(ctx: Ctx, input: CreateInvoiceRequest): Promise<CreateInvoiceBody> {
  if (input.currency !== undefined) return { ...input, currency: input.currency };
  const entity = await resolveEntity(ctx, input.entity_id);
  return { ...input, currency: entity.country_code === 'IN' ? 'INR' : (await getTenant(ctx)).base_currency };
}

/** POST /v1/invoices as a draft; `lines` when the caller resolved (and discounted) them already. */
export async function createInvoiceFromApi(ctx: Ctx, input: CreateInvoiceBody, lines?: DraftLine[]): Promise<InvoiceRow> {
  const customer = await getCustomer(ctx, input.customer_id);
  return createDraftInvoice(ctx, {
    customer,
    entityId: input.entity_id,
    currency: input.currency,
    lines: lines ?? (await resolveApiLines(ctx, input)),
    dueDate: input.due_date ? new Date(input.due_date) : undefined,
    memo: input.memo,
    metadata: input.metadata,
    exchangeRate: input.exchange_rate,
    collectionMethod: input.collection_method,
  });
}

export function entitySnapshot(entity: EntityRow): PartySnapshot {
  return {
    name: entity.name,
    legal_name: entity.legal_name,
    gstin: entity.gstin,
    state_code: entity.state_code,
    country_code: entity.country_code,
    address: entity.address ?? null,
  };
}

/**
 * Replaces the frozen buyer details of an issued invoice with corrected ones. Only for the
 * e-invoice resubmission of a document the IRP never registered (the caller checks that the
 * correction leaves the supply — place of supply, tax — unchanged); nothing else is touched.
 */
export async function correctCustomerDetails(ctx: Ctx, id: string, details: PartySnapshot): Promise<InvoiceRow> {
  const row = await ctx.tx
    .updateTable('invoices')
    .set({ customer_details: JSON.stringify(details), updated_at: ctx.now })
    .where('tenant_id', '=', ctx.tenantId)
    .where('id', '=', id)
    .where('number', 'is not', null)
    .returningAll()
    .executeTakeFirst();
  if (!row) throw errors.notFound('invoice');
  return row;
}

/**
 * Records corrected GST particulars of an issued invoice (decision 0610): a place of supply, a
 * shipping bill. The caller (flows/invoices/correct-gst-details.ts) checks that the correction
 * leaves the invoice's tax as it was; nothing else is touched.
 */
export async function correctGstParticulars(ctx: Ctx, id: string, patch: { place_of_supply?: string; shipping_bill?: ShippingBill }): Promise<InvoiceRow> {
  const row = await ctx.tx
    .updateTable('invoices')
    .set({
      ...(patch.place_of_supply !== undefined ? { place_of_supply: patch.place_of_supply } : {}),
      ...(patch.shipping_bill !== undefined ? { shipping_bill: JSON.stringify(patch.shipping_bill) } : {}),
      updated_at: ctx.now,
    })
    .where('tenant_id', '=', ctx.tenantId)
    .where('id', '=', id)
    .where('number', 'is not', null)
    .returningAll()
    .executeTakeFirst();
  if (!row) throw errors.notFound('invoice');
  return row;
}

export function customerSnapshot(customer: Customer): PartySnapshot {
  return {
    name: customer.name ?? customer.email,
    email: customer.email,
    gstin: customer.gstin,
    state_code: customerStateCode(customer),
    country_code: customerCountry(customer),
    address: (customer.billing_address as Record<string, string | null | undefined> | null) ?? null,
  };
}

/**
 * draft → open: takes the entity's next invoice number, freezes the parties, books the receivable
 * (Dr receivables; Cr revenue and output taxes) and emits invoice.finalized — one transaction.
 * A zero-total invoice is paid at once.
 */
export async function finalizeInvoice(ctx: Ctx, id: string): Promise<InvoiceRow> {
  const draft = await findInvoice(ctx.tx, ctx.tenantId, id, true);
  if (!draft) throw errors.notFound('invoice');
  if (draft.status !== 'draft') throw errors.conflict(`cannot finalize an invoice whose status is ${draft.status}`, 'invalid_invoice_state');
  const entity = await resolveEntity(ctx, draft.entity_id);
  const customer = await getCustomer(ctx, draft.customer_id);
  const settings = await readSettings(ctx);
  const drafted = await linesOfInvoices(ctx.tx, ctx.tenantId, [id]);
  // A draft is not a tax document: place of supply, tax and the INR amounts are computed again
  // from the parties frozen now, so the invoice never prints one party's GSTIN with another's tax.
  const rate = await invoiceExchangeRate(ctx, entity, draft.currency, draft.exchange_rate_source === 'request' ? draft.exchange_rate : null, ctx.now);
  const tax = taxInvoice(
    taxedAs(entity, draft.billing_reason),
    customer,
    draft.currency,
    drafted.map((l) => ({
      quantity: l.quantity,
      unit_amount: l.unit_amount,
      hsn_code: l.hsn_code,
      tax_rate_bp: l.explicit_rate_bp,
      discount_amount: l.discount_amount,
      supply_date: l.period_end,
    })),
    rate,
    apiField,
    ctx.now,
  );
  const lines = drafted.map((l, i) => ({ ...l, ...lineTaxColumns(tax.lines[i]!) }));
  for (const [i, line] of lines.entries()) {
    if (lineTaxChanged(drafted[i]!, line)) await updateInvoiceLineTax(ctx.tx, ctx.tenantId, line.id, lineTaxColumns(tax.lines[i]!));
  }
  // Dated in the first open period (DESIGN §18): finalized while its month is closed, the invoice
  // is the next open month's document (its entry is posted there too).
  const issuedAt = await postingDate(ctx, entity.id);
  // Numbers are taken here, not at draft time, so abandoned drafts leave no gaps. The counter row
  // stays locked until commit, so everything that can be read is read above, before it.
  // A top-up of prepaid credit is no tax invoice (decision 0700): its own series (decision 0840).
  const number = await takeDocumentNumber(ctx, entity, documentKindOf(draft.billing_reason), issuedAt);
  let row = await transitionInvoice(ctx.tx, ctx.tenantId, id, 'finalize', {
    ...invoiceTaxColumns(tax, rate),
    amount_due: tax.total,
    number,
    issued_at: issuedAt,
    due_date: draft.due_date ?? new Date(ctx.now.getTime() + settings.invoice_due_days * DAY_MS),
    supplier: JSON.stringify(entitySnapshot(entity)),
    customer_details: JSON.stringify(customerSnapshot(customer)),
    updated_at: ctx.now,
  });
  await postEntry(ctx, finalizationPosting(row, entity, number));
  await emitEvent(ctx, 'invoice.finalized', toInvoice(row, lines));
  if (row.total === 0) {
    row = await settleInvoiceBalance(ctx.tx, ctx.tenantId, row.id, {}, ctx.now);
    await emitEvent(ctx, 'invoice.paid', toInvoice(row, lines));
  }
  return row;
}

/**
 * Takes discounts off a draft's lines before GST (a promotional credit grant, DESIGN §23): each
 * line's discount grows by its amount and the invoice's discount by their sum. Finalization then
 * computes GST on the lowered taxable value. Never below zero: the caller allocates at most each
 * line's amount.
 */
export async function discountDraftLines(ctx: Ctx, invoiceId: string, discounts: { lineId: string; amount: number }[]): Promise<void> {
  const positive = discounts.filter((d) => d.amount > 0);
  if (positive.length === 0) return;
  await addDraftLineDiscounts(ctx.tx, ctx.tenantId, invoiceId, positive, ctx.now);
}

/**
 * Voids an invoice. A finalized one keeps its number and gets a reversing entry (Dr revenue
 * reversals and output taxes; Cr receivables). Once money has been applied, voiding would orphan
 * it: issue a credit note instead.
 */
/** `voidedAt`: the void's date, in the first open period (DESIGN §18); its entry is dated there too. */
export async function voidInvoice(ctx: Ctx, id: string, voidedAt: Date = ctx.now): Promise<InvoiceRow> {
  const current = await findInvoice(ctx.tx, ctx.tenantId, id, true);
  if (!current) throw errors.notFound('invoice');
  if (current.amount_paid > 0 || current.amount_credited > 0) {
    throw errors.conflict('cannot void an invoice with payments or credits applied; issue a credit note instead', 'invoice_has_payments');
  }
  const row = await transitionInvoice(ctx.tx, ctx.tenantId, id, 'void', { voided_at: voidedAt, updated_at: ctx.now });
  if (current.status !== 'draft') {
    const entity = await resolveEntity(ctx, row.entity_id);
    await postEntry(ctx, voidPosting(row, entity));
  }
  await emitEvent(ctx, 'invoice.voided', await loadInvoice(ctx, row));
  return row;
}

/**
 * The TDS rules for money applied to an invoice (SPEC 4.4's `tds_amount` and
 * POST /v1/invoices/{id}/tds): TDS is deducted on the value excluding GST (CBDT circular 23/2017),
 * so the invoice's TDS may total at most 20 % of its taxable value (`subtotal`) — 20 % covers the
 * highest rate, s.206AA without a PAN; and an export has no Indian payer to deduct it.
 */
export function assertTdsAllowed(invoice: InvoiceRow, tds: number, field: string): void {
  if (tds <= 0) return;
  if (invoice.tax_type === 'export') {
    throw errors.invalidField(field, 'TDS cannot be recorded on an export invoice: tax is deducted at source only by payers in India');
  }
  const limit = Math.floor(invoice.subtotal / 5);
  if (invoice.amount_tds + tds > limit) {
    throw errors.invalidField(
      field,
      `the invoice's TDS would total ${invoice.amount_tds + tds}, above 20 % of its taxable value ${invoice.subtotal} (at most ${limit}): TDS is deducted on the value excluding GST (CBDT circular 23/2017) at no more than 20 % (s.206AA)`,
    );
  }
}

/** open → uncollectible. The receivable stays on the books (no write-off entry); payments still settle it. */
export async function markInvoiceUncollectible(ctx: Ctx, id: string): Promise<InvoiceRow> {
  const row = await transitionInvoice(ctx.tx, ctx.tenantId, id, 'mark_uncollectible', { marked_uncollectible_at: ctx.now, updated_at: ctx.now });
  await emitEvent(ctx, 'invoice.marked_uncollectible', await loadInvoice(ctx, row));
  return row;
}

/**
 * Applies a payment or credit to the invoice balance (see settleInvoiceBalance) and emits
 * invoice.paid when it closes. The caller books the matching journal entry.
 */
export async function applyToInvoice(ctx: Ctx, id: string, settlement: Settlement): Promise<InvoiceRow> {
  const row = await settleInvoiceBalance(ctx.tx, ctx.tenantId, id, settlement, ctx.now);
  if (row.status === 'paid') await emitEvent(ctx, 'invoice.paid', await loadInvoice(ctx, row));
  return row;
}

export async function getInvoice(ctx: ReadCtx, id: string): Promise<Invoice> {
  const row = await findInvoice(ctx.tx, ctx.tenantId, id);
  if (!row) throw errors.notFound('invoice');
  return loadInvoice(ctx, row);
}

export async function listInvoices(ctx: ReadCtx, filter: InvoiceFilter, page: Page): Promise<{ invoices: Invoice[]; total: number }> {
  const { rows, total } = await listInvoiceRows(ctx.tx, ctx.tenantId, filter, page);
  const lines = await linesOfInvoices(
    ctx.tx,
    ctx.tenantId,
    rows.map((r) => r.id),
  );
  const byInvoice = new Map<string, InvoiceLineRow[]>();
  for (const l of lines) byInvoice.set(l.invoice_id, [...(byInvoice.get(l.invoice_id) ?? []), l]);
  return { invoices: rows.map((r) => toInvoice(r, byInvoice.get(r.id) ?? [])), total };
}

/**
 * Reads and writes of this module's own tables that flows and other modules call; the repository
 * itself is private to the module (index.ts exports operations and types only).
 */
export {
  pricedLinesWithin,
  draftInvoicesOfEntity,
  insertTdsCertificate,
  invoiceCurrenciesOfCustomer,
  invoicedSince,
  linesOfInvoices,
  unsettledSubscriptionInvoices,
  nextInvoiceDueInClockScope,
  tenantsWithOverdueSubscriptionInvoices,
} from './invoices.repository.js';
