import type { Ctx, ReadCtx } from '../../platform/context.js';
import { errors } from '../../platform/errors.js';
import { emitEvent } from '../../platform/events/events.js';
import type { Page } from '../../platform/http/envelope.js';
import { newId } from '../../platform/ids.js';
import { toIso } from '../../platform/time.js';
import { customerCountry, customerStateCode, type Customer } from '../customers/index.js';
import { entityAt, findEntity, takeDocumentNumber, transactionRate, type EntityRow } from '../entities/index.js';
import { applyToInvoice, type InvoiceRow } from '../invoices/index.js';
import { Account, postEntry } from '../ledger/index.js';
import { postingDate } from '../periods/index.js';
import { DEFAULT_SAC_CODE, determineTaxRegime, gstRateBasisPoints } from '../tax/index.js';
import { inrOfAdvance, inrShareOfOpen, partOfPrepayment, shareOfOpen, taxOfAdvance, taxOfValue, type AdvanceInrPart, type AdvanceTax } from './advance-tax.js';
import type { Advance } from './advances.schemas.js';
import {
  customersWithOpenAdvances,
  findAdvance,
  findAdvancesOfGrant,
  insertAdvance,
  insertMovement,
  listAdvanceRows,
  movementOfRefund,
  movementsOf,
  openAdvancesForUpdate,
  takeFromAdvance,
  type AdvanceRow,
  type MovementRow,
} from './advances.repository.js';

export function toAdvance(row: AdvanceRow, movements: MovementRow[]): Advance {
  return {
    id: row.id,
    object: 'advance',
    customer_id: row.customer_id,
    entity_id: row.entity_id,
    payment_id: row.payment_id,
    credit_grant_id: row.credit_grant_id,
    receipt_voucher_number: row.number,
    currency: row.currency,
    amount: Number(row.amount),
    subtotal: Number(row.subtotal),
    cgst_amount: Number(row.cgst_amount),
    sgst_amount: Number(row.sgst_amount),
    igst_amount: Number(row.igst_amount),
    tax_amount: Number(row.tax_amount),
    rate_bp: row.rate_bp,
    hsn_code: row.hsn_code,
    tax_type: row.tax_type,
    place_of_supply: row.place_of_supply,
    utgst: row.utgst,
    balance: Number(row.balance),
    tax_open: Number(row.open_cgst) + Number(row.open_sgst) + Number(row.open_igst),
    exchange_rate: row.exchange_rate,
    ...inrFields(row),
    inr_tax_amount: row.inr_amount === null ? null : Number(row.inr_cgst_amount) + Number(row.inr_sgst_amount) + Number(row.inr_igst_amount),
    inr_tax_open: row.open_inr_cgst === null ? null : Number(row.open_inr_cgst) + Number(row.open_inr_sgst) + Number(row.open_inr_igst),
    movements: movements.map((m) => ({
      id: m.id,
      kind: m.kind,
      invoice_id: m.invoice_id,
      refund_voucher_number: m.number,
      payout: m.payout,
      refund_id: m.refund_id,
      amount: Number(m.amount),
      subtotal: Number(m.subtotal),
      cgst_amount: Number(m.cgst_amount),
      sgst_amount: Number(m.sgst_amount),
      igst_amount: Number(m.igst_amount),
      ...inrFields(m),
      reason: m.reason,
      created_at: toIso(m.created_at),
    })),
    received_at: toIso(row.received_at),
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}

const orNull = (v: number | null) => (v === null ? null : Number(v));
function inrFields(row: Pick<AdvanceRow, 'inr_amount' | 'inr_subtotal' | 'inr_cgst_amount' | 'inr_sgst_amount' | 'inr_igst_amount'>) {
  return {
    inr_amount: orNull(row.inr_amount),
    inr_subtotal: orNull(row.inr_subtotal),
    inr_cgst_amount: orNull(row.inr_cgst_amount),
    inr_sgst_amount: orNull(row.inr_sgst_amount),
    inr_igst_amount: orNull(row.inr_igst_amount),
  };
}

/**
 * The rate an advance is taxed at (docs/decisions/0280): services (a SAC, chapter 99) at their
 * rate — Kosh bills services, so with no code given the default SAC at 18 %, which is also rule
 * 50's rate when the rate cannot be determined; goods at 0 (no GST on advances for goods:
 * Notification 66/2017-Central Tax).
 */
function advanceRate(hsnCode: string): number {
  const rate = gstRateBasisPoints(hsnCode);
  return hsnCode.startsWith('99') ? rate : 0;
}

async function getEntity(ctx: Ctx, id: string): Promise<EntityRow> {
  const entity = await findEntity(ctx.tx, ctx.tenantId, id);
  if (!entity) throw errors.notFound('entity');
  return entity;
}

export type ReceiveAdvanceInput = {
  paymentId: string;
  entityId: string;
  customer: Customer;
  currency: string;
  amount: number;
  hsnCode?: string | undefined;
  /** The payment's rate on its date (INR per one unit of a foreign currency), when the entity's functional currency is INR. */
  exchangeRate?: string | null | undefined;
};

/**
 * The rupee values of a foreign-currency advance of an Indian entity (CGST Rules, rule 34(2): the
 * rate of the date of the time of supply, which for an advance is its receipt — CGST Act
 * s.13(2)): the payment's rate of that date. None known for an advance that carries GST → 400, as
 * for an invoice.
 */
function rupeesOfAdvance(entity: EntityRow, input: ReceiveAdvanceInput, tax: AdvanceTax): { rate: string | null; inr: AdvanceInrPart | null } {
  if (input.currency === 'INR' || entity.country_code !== 'IN') return { rate: null, inr: null };
  const rate = entity.functional_currency === 'INR' ? (input.exchangeRate ?? null) : null;
  if (rate === null) {
    if (tax.tax_amount > 0) {
      throw errors.invalidField(
        'exchange_rate',
        `GST on a ${input.currency} advance is determined in INR at the rate of the date of receipt (CGST Rules, rule 34): give exchange_rate, or set the entity's rate with PUT /v1/entities/${entity.id}/exchange-rates`,
      );
    }
    return { rate: null, inr: null };
  }
  return { rate, inr: inrOfAdvance(input.amount, tax, input.currency, rate) };
}

/**
 * Books money received before any invoice as an advance with its receipt voucher (rule 50), in
 * the caller's transaction. The money itself is the payment's entry (Dr cash or gateway clearing /
 * Cr 2310 customer advances); this adds the GST the advance carries, payable now (CGST Act
 * s.13(2)): `advance.received` Dr 1300 GST paid on advances / Cr 2100+2110 or 2120. An entity
 * without a GSTIN charges none, so the voucher carries no tax and nothing is posted.
 */
export async function receiveAdvance(ctx: Ctx, input: ReceiveAdvanceInput): Promise<Advance> {
  const { customer } = input;
  // Its LUT in force today (decision 0282); an export advance without one pays IGST, as the export will.
  const entity = await entityAt(ctx, await getEntity(ctx, input.entityId), ctx.now);
  const hsnCode = input.hsnCode ?? DEFAULT_SAC_CODE;
  const regime = determineTaxRegime(
    { country_code: entity.country_code, gstin: entity.gstin, state_code: entity.state_code, lut: entity.lut },
    { country_code: customerCountry(customer), state_code: customerStateCode(customer), gstin: customer.gstin, sez: customer.sez },
  );
  const rate = regime.tax_type === '' ? 0 : advanceRate(hsnCode);
  const tax = taxOfAdvance(input.amount, rate, regime);
  const { rate: exchangeRate, inr } = rupeesOfAdvance(entity, input, tax);
  const id = newId();
  // The receipt voucher is dated as its entry is: in the first open month (DESIGN §18), so GSTR-1
  // table 11A declares its tax in the month the books carry it; numbered in that date's year.
  const receivedAt = await postingDate(ctx, entity.id);
  const number = await takeDocumentNumber(ctx, entity, 'receipt_voucher', receivedAt);
  const row: AdvanceRow = {
    tenant_id: ctx.tenantId,
    id,
    entity_id: entity.id,
    customer_id: customer.id,
    payment_id: input.paymentId,
    credit_grant_id: null,
    number,
    currency: input.currency,
    amount: input.amount,
    ...tax,
    rate_bp: tax.tax_amount > 0 ? rate : 0,
    hsn_code: hsnCode,
    tax_type: regime.tax_type,
    place_of_supply: regime.place_of_supply,
    utgst: regime.utgst,
    balance: input.amount,
    open_subtotal: tax.subtotal,
    open_cgst: tax.cgst_amount,
    open_sgst: tax.sgst_amount,
    open_igst: tax.igst_amount,
    exchange_rate: exchangeRate,
    ...movementInr(inr),
    open_inr_subtotal: inr?.inr_subtotal ?? null,
    open_inr_cgst: inr?.inr_cgst_amount ?? null,
    open_inr_sgst: inr?.inr_sgst_amount ?? null,
    open_inr_igst: inr?.inr_igst_amount ?? null,
    received_at: receivedAt,
    created_at: ctx.now,
    updated_at: ctx.now,
  };
  await insertAdvance(ctx.tx, row);
  await postEntry(ctx, {
    ledgerId: entity.tb_ledger_id,
    entityId: entity.id,
    kind: 'advance.received',
    referenceType: 'advance',
    referenceId: id,
    currency: input.currency,
    description: `GST on advance, receipt voucher ${number}`,
    // A foreign-currency voucher's tax is booked at its rupee values (rule 34), as GSTR-1 reports it.
    lines: [
      { account: Account.ADVANCE_TAX, debit: tax.tax_amount, customerId: customer.id, ...fx(entity, inrTax(inr)) },
      { account: Account.CGST_PAYABLE, credit: tax.cgst_amount, customerId: customer.id, ...fx(entity, inr?.inr_cgst_amount) },
      { account: Account.SGST_PAYABLE, credit: tax.sgst_amount, customerId: customer.id, ...fx(entity, inr?.inr_sgst_amount) },
      { account: Account.IGST_PAYABLE, credit: tax.igst_amount, customerId: customer.id, ...fx(entity, inr?.inr_igst_amount) },
    ],
  });
  const advance = toAdvance(row, []);
  await emitEvent(ctx, 'advance.received', advance);
  return advance;
}

const inrTax = (inr: AdvanceInrPart | null) => (inr ? inr.inr_amount - inr.inr_subtotal : null);

/** A line's functional value when it is known in rupees and the entity keeps its books in rupees. */
function fx(entity: Pick<EntityRow, 'functional_currency'>, inr: number | null | undefined): { functional?: number } {
  return inr !== null && inr !== undefined && entity.functional_currency === 'INR' ? { functional: inr } : {};
}

/** The tax lines that move an advance's GST back out of 1300 (an adjustment or a refund voucher), at its rupee values when it has them. */
function taxReleaseLines(entity: EntityRow, part: AdvanceTax, inr: AdvanceInrPart | null, customerId: string) {
  return [
    { account: Account.CGST_PAYABLE, debit: part.cgst_amount, customerId, ...fx(entity, inr?.inr_cgst_amount) },
    { account: Account.SGST_PAYABLE, debit: part.sgst_amount, customerId, ...fx(entity, inr?.inr_sgst_amount) },
    { account: Account.IGST_PAYABLE, debit: part.igst_amount, customerId, ...fx(entity, inr?.inr_igst_amount) },
    { account: Account.ADVANCE_TAX, credit: part.tax_amount, customerId, ...fx(entity, inrTax(inr)) },
  ];
}

/** The share of value and tax (and their rupee values) that `amount` of an advance's balance carries. */
function useOf(advance: AdvanceRow, amount: number): { part: AdvanceTax; inr: AdvanceInrPart | null } {
  const open = numeric(advance);
  const part = shareOfOpen(open, amount);
  if (advance.open_inr_subtotal === null) return { part, inr: null };
  const openInr = {
    subtotal: Number(advance.open_inr_subtotal),
    cgst: Number(advance.open_inr_cgst),
    sgst: Number(advance.open_inr_sgst),
    igst: Number(advance.open_inr_igst),
  };
  return { part, inr: inrShareOfOpen(open, openInr, amount, part) };
}

/** The movement columns of one use's rupee values. */
function movementInr(inr: AdvanceInrPart | null) {
  return {
    inr_amount: inr?.inr_amount ?? null,
    inr_subtotal: inr?.inr_subtotal ?? null,
    inr_cgst_amount: inr?.inr_cgst_amount ?? null,
    inr_sgst_amount: inr?.inr_sgst_amount ?? null,
    inr_igst_amount: inr?.inr_igst_amount ?? null,
  };
}

/**
 * Spends the customer's advances (same entity and currency, oldest first) on an open invoice, in
 * the caller's transaction; answers how much was applied. Each application settles the invoice as
 * a payment and adjusts the advance's GST (GSTR-1 11B): `advance.applied` Dr 2310 / Cr 1100 (the
 * invoice) for the amount, and Dr 2100+2110 or 2120 / Cr 1300 for the tax that amount carried on
 * the receipt voucher — the invoice charged its own GST, so the tax paid early is taken back and
 * the supply is taxed once.
 */
export async function applyAdvances(ctx: Ctx, invoice: InvoiceRow): Promise<number> {
  let due = invoice.amount_due;
  if (due <= 0 || (invoice.status !== 'open' && invoice.status !== 'uncollectible')) return 0;
  const advances = await openAdvancesForUpdate(ctx.tx, ctx.tenantId, {
    customerId: invoice.customer_id,
    entityId: invoice.entity_id,
    currency: invoice.currency,
  });
  if (advances.length === 0) return 0;
  const entity = await getEntity(ctx, invoice.entity_id);
  for (const advance of advances) {
    if (due <= 0) break;
    const amount = Math.min(Number(advance.balance), due);
    const { part, inr } = useOf(advance, amount);
    const after = await takeFromAdvance(ctx.tx, ctx.tenantId, advance.id, { amount, ...part, inr }, ctx.now);
    if (!after) throw errors.conflict('the advance changed meanwhile; try again', 'advance_changed');
    const movementId = newId();
    await insertMovement(ctx.tx, {
      tenant_id: ctx.tenantId,
      id: movementId,
      advance_id: advance.id,
      kind: 'applied',
      invoice_id: invoice.id,
      number: null,
      amount,
      subtotal: part.subtotal,
      cgst_amount: part.cgst_amount,
      sgst_amount: part.sgst_amount,
      igst_amount: part.igst_amount,
      ...movementInr(inr),
      payout: 'offline',
      refund_id: null,
      reason: '',
      // Dated as its entry (table 11B of that month).
      created_at: await postingDate(ctx, entity.id),
    });
    await applyToInvoice(ctx, invoice.id, { paid: amount });
    await postEntry(ctx, {
      ledgerId: entity.tb_ledger_id,
      entityId: entity.id,
      kind: 'advance.applied',
      referenceType: 'advance_movement',
      referenceId: movementId,
      currency: invoice.currency,
      description: `Advance ${advance.number} applied to invoice ${invoice.number}`,
      lines: [
        { account: Account.CUSTOMER_ADVANCES, debit: amount, customerId: invoice.customer_id },
        { account: Account.RECEIVABLES, credit: amount, customerId: invoice.customer_id, invoiceId: invoice.id },
        ...taxReleaseLines(entity, part, inr, invoice.customer_id),
      ],
    });
    due -= amount;
    const movements = await movementsOf(ctx.tx, ctx.tenantId, [advance.id]);
    await emitEvent(ctx, 'advance.applied', { ...toAdvance(after, movements), applied_amount: amount, applied_invoice_id: invoice.id });
  }
  return invoice.amount_due - due;
}

/** Bigint columns may come back as strings from some drivers: the numbers shareOfOpen works on. */
function numeric(a: AdvanceRow) {
  return {
    balance: Number(a.balance),
    open_subtotal: Number(a.open_subtotal),
    open_cgst: Number(a.open_cgst),
    open_sgst: Number(a.open_sgst),
    open_igst: Number(a.open_igst),
  };
}

/**
 * Pays (part of) an advance back with a refund voucher (rule 51): `advance.refunded` Dr 2310 /
 * Cr 2320 refunds payable (paid out by hand: the offline refund `payout.refundId`, settled by
 * `mark_paid`, decision 0740) — or Cr 1050 gateway clearing when `payout.gateway` (the gateway
 * refund `payout.refundId` carries the money back, docs/decisions/0401) — for
 * the amount, and Dr 2100+2110 or 2120 / Cr 1300 for the GST that amount carried: no supply was
 * made, so the tax paid on it is reversed.
 */
export async function refundAdvance(
  ctx: Ctx,
  id: string,
  input: { amount?: number | undefined; reason: string },
  payout: { refundId: string; gateway: boolean },
): Promise<Advance> {
  const advance = await findAdvance(ctx.tx, ctx.tenantId, id, true);
  if (!advance) throw errors.notFound('advance');
  if (advance.credit_grant_id) {
    throw errors.conflict(
      `the advance is the payment for prepaid credit grant ${advance.credit_grant_id}: it is drawn down by invoices or expires with the grant, never refunded on its own`,
      'advance_is_prepaid_credit',
    );
  }
  const balance = Number(advance.balance);
  if (balance === 0) throw errors.conflict('the advance has nothing left to refund', 'advance_exhausted');
  const amount = input.amount ?? balance;
  if (amount > balance) throw errors.invalidField('amount', `exceeds the advance's balance of ${balance}`);
  const { part, inr } = useOf(advance, amount);
  const entity = await getEntity(ctx, advance.entity_id);
  // The refund voucher is dated as its entry is (table 11B and doc_issue of that month), and
  // numbered in that date's financial year.
  const voucherDate = await postingDate(ctx, entity.id);
  const number = await takeDocumentNumber(ctx, entity, 'refund_voucher', voucherDate);
  const after = await takeFromAdvance(ctx.tx, ctx.tenantId, id, { amount, ...part, inr }, ctx.now);
  if (!after) throw errors.conflict('the advance changed meanwhile; try again', 'advance_changed');
  const movementId = newId();
  await insertMovement(ctx.tx, {
    tenant_id: ctx.tenantId,
    id: movementId,
    advance_id: id,
    kind: 'refunded',
    invoice_id: null,
    number,
    amount,
    subtotal: part.subtotal,
    cgst_amount: part.cgst_amount,
    sgst_amount: part.sgst_amount,
    igst_amount: part.igst_amount,
    ...movementInr(inr),
    payout: payout.gateway ? 'gateway' : 'offline',
    refund_id: payout.refundId,
    reason: input.reason,
    created_at: voucherDate,
  });
  await postEntry(ctx, {
    ledgerId: entity.tb_ledger_id,
    entityId: entity.id,
    kind: 'advance.refunded',
    referenceType: 'advance_movement',
    referenceId: movementId,
    currency: advance.currency,
    description: `Refund voucher ${number} for advance ${advance.number}`,
    lines: [
      { account: Account.CUSTOMER_ADVANCES, debit: amount, customerId: advance.customer_id },
      { account: payout.gateway ? Account.GATEWAY_CLEARING : Account.REFUNDS_PAYABLE, credit: amount, customerId: advance.customer_id },
      ...taxReleaseLines(entity, part, inr, advance.customer_id),
    ],
  });
  const result = toAdvance(after, await movementsOf(ctx.tx, ctx.tenantId, [id]));
  await emitEvent(ctx, 'advance.refunded', { ...result, refunded_amount: amount, refund_voucher_number: number });
  return result;
}

/** The refund voucher whose money the refund carries (its movement), if the refund is an advance's. */
export async function refundVoucherOfRefund(ctx: ReadCtx, refundId: string): Promise<{ id: string; advance_id: string } | undefined> {
  return movementOfRefund(ctx.tx, ctx.tenantId, refundId);
}

export async function getAdvance(ctx: ReadCtx, id: string): Promise<Advance> {
  const row = await findAdvance(ctx.tx, ctx.tenantId, id);
  if (!row) throw errors.notFound('advance');
  return toAdvance(row, await movementsOf(ctx.tx, ctx.tenantId, [id]));
}

export async function listAdvances(ctx: ReadCtx, filter: { customer_id?: string | undefined }, page: Page): Promise<{ advances: Advance[]; total: number }> {
  const { rows, total } = await listAdvanceRows(ctx.tx, ctx.tenantId, filter.customer_id ? { customer_id: filter.customer_id } : {}, page);
  const movements = await movementsOf(
    ctx.tx,
    ctx.tenantId,
    rows.map((r) => r.id),
  );
  return {
    advances: rows.map((r) =>
      toAdvance(
        r,
        movements.filter((m) => m.advance_id === r.id),
      ),
    ),
    total,
  };
}

export { customersWithOpenAdvances };

// ── Prepaid credit: the top-up as an advance (decision 0700) ───────────────────────────────────

/** The GST regime and rate a top-up of prepaid credit is taxed at, as an advance for services. */
export type PrepaymentTerms = {
  entity: EntityRow;
  hsnCode: string;
  rateBp: number;
  regime: ReturnType<typeof determineTaxRegime>;
};

async function prepaymentTerms(ctx: Ctx, entityId: string, customer: Customer, hsnCode: string | undefined): Promise<PrepaymentTerms> {
  const entity = await entityAt(ctx, await getEntity(ctx, entityId), ctx.now);
  const code = hsnCode ?? DEFAULT_SAC_CODE;
  const regime = determineTaxRegime(
    { country_code: entity.country_code, gstin: entity.gstin, state_code: entity.state_code, lut: entity.lut },
    { country_code: customerCountry(customer), state_code: customerStateCode(customer), gstin: customer.gstin, sez: customer.sez },
  );
  return { entity, hsnCode: code, rateBp: regime.tax_type === '' ? 0 : advanceRate(code), regime };
}

/**
 * The GST a top-up of `value` of prepaid credit will carry when it is paid: an advance for the
 * supplier's services (CGST Act s.13(2)), at the rate of its SAC (rule 50: 18 % where it cannot be
 * determined), each head rounded half-up on the value as on an invoice line (taxOfValue). The
 * top-up asks for value + that tax; its receipt voucher then finds the same split in the gross.
 */
export async function taxOfPrepayment(
  ctx: Ctx,
  input: { entityId: string; customer: Customer; value: number; hsnCode?: string | undefined },
): Promise<AdvanceTax & { rate_bp: number }> {
  const terms = await prepaymentTerms(ctx, input.entityId, input.customer, input.hsnCode);
  return { ...taxOfValue(input.value, terms.rateBp, terms.regime), rate_bp: terms.rateBp };
}

export type PrepaymentReceipt = {
  grantId: string;
  entityId: string;
  customer: Customer;
  currency: string;
  /** The top-up's whole total, GST included. */
  gross: number;
  /**
   * What of `gross` had been received before this payment and has been with it (decision 0840):
   * each payment received against a top-up is an advance of its own date, with its own voucher.
   */
  received: { before: number; after: number };
  hsnCode?: string | undefined;
  /** The top-up's own rate (INR per one unit): the voucher's rate when the entity knows none for the date of receipt. */
  topUpRate?: string | null | undefined;
  /** The split the top-up asked for (taxOfPrepayment): kept when it adds up to the gross and fits the regime. */
  asked?: { subtotal: number; cgst_amount: number; sgst_amount: number; igst_amount: number } | undefined;
};

/** The voucher's split of a top-up's gross: the one asked for when it still holds, else the tax contained in the gross. */
function splitOfPrepayment(input: PrepaymentReceipt, terms: PrepaymentTerms): AdvanceTax {
  const found = taxOfAdvance(input.gross, terms.rateBp, terms.regime);
  const a = input.asked;
  if (!a) return found;
  const tax = a.cgst_amount + a.sgst_amount + a.igst_amount;
  const fits =
    a.subtotal + tax === input.gross &&
    (found.tax_amount === 0
      ? tax === 0
      : terms.regime.tax_type === 'intra_state'
        ? a.igst_amount === 0 && tax > 0
        : a.cgst_amount === 0 && a.sgst_amount === 0 && tax > 0);
  return fits ? { ...a, tax_amount: tax } : found;
}

/**
 * Issues the receipt voucher (CGST Rules, rule 50) of a payment received against a top-up of
 * prepaid credit, in the paying transaction: payment received for services not yet supplied is an
 * advance, taxed at its receipt "to the extent it is covered by the payment" (CGST Act s.13(2)(a)
 * and its Explanation (i); GSTR-1 table 11A) — so a top-up paid in parts has one voucher per part,
 * each on its own date (decision 0840). A foreign-currency voucher is valued in rupees at the
 * entity's rate of its date (rule 34), the top-up's own rate when the entity has none. The voucher
 * belongs to the grant (credit_grant_id): only the grant's draw-downs adjust it
 * (adjustPrepayment, table 11B); it is never applied or refunded as a plain advance. Posts nothing
 * — the credits module books the tax out of the prepaid-credit liability (docs/ledger.md).
 * Answers the voucher's split of the part received.
 */
export async function receivePrepayment(ctx: Ctx, input: PrepaymentReceipt): Promise<{ advance: Advance; tax: AdvanceTax; inr: AdvanceInrPart | null }> {
  const terms = await prepaymentTerms(ctx, input.entityId, input.customer, input.hsnCode);
  const { entity, regime } = terms;
  const tax = partOfPrepayment(splitOfPrepayment(input, terms), input.gross, input.received);
  const amount = input.received.after - input.received.before;
  // Dated as the entry that books its tax: in the first open month (DESIGN §18); numbered and
  // valued (rule 34) on that date.
  const receivedAt = await postingDate(ctx, entity.id);
  const rupees = input.currency !== 'INR' && entity.country_code === 'IN' && entity.functional_currency === 'INR';
  const rate = rupees ? (await transactionRate(ctx, entity, input.currency, null, receivedAt, input.topUpRate ?? null)).rate : null;
  const inr = rate ? inrOfAdvance(amount, tax, input.currency, rate) : null;
  const id = newId();
  const number = await takeDocumentNumber(ctx, entity, 'receipt_voucher', receivedAt);
  const row: AdvanceRow = {
    tenant_id: ctx.tenantId,
    id,
    entity_id: entity.id,
    customer_id: input.customer.id,
    payment_id: null,
    credit_grant_id: input.grantId,
    number,
    currency: input.currency,
    amount,
    ...tax,
    rate_bp: tax.tax_amount > 0 ? terms.rateBp : 0,
    hsn_code: terms.hsnCode,
    tax_type: regime.tax_type,
    place_of_supply: regime.place_of_supply,
    utgst: regime.utgst,
    balance: amount,
    open_subtotal: tax.subtotal,
    open_cgst: tax.cgst_amount,
    open_sgst: tax.sgst_amount,
    open_igst: tax.igst_amount,
    exchange_rate: inr ? rate : null,
    ...movementInr(inr),
    open_inr_subtotal: inr?.inr_subtotal ?? null,
    open_inr_cgst: inr?.inr_cgst_amount ?? null,
    open_inr_sgst: inr?.inr_sgst_amount ?? null,
    open_inr_igst: inr?.inr_igst_amount ?? null,
    received_at: receivedAt,
    created_at: ctx.now,
    updated_at: ctx.now,
  };
  await insertAdvance(ctx.tx, row);
  const advance = toAdvance(row, []);
  await emitEvent(ctx, 'advance.received', advance);
  return { advance, tax, inr };
}

/** What a grant's receipt vouchers add up to: the gross received and its split (the grant's amount and tax once spendable). */
export async function prepaymentsOfGrant(ctx: ReadCtx, grantId: string): Promise<{ count: number; amount: number } & AdvanceTax> {
  const rows = await findAdvancesOfGrant(ctx.tx, ctx.tenantId, grantId);
  const sum = (pick: (r: AdvanceRow) => number) => rows.reduce((s, r) => s + Number(pick(r)), 0);
  const cgst = sum((r) => r.cgst_amount);
  const sgst = sum((r) => r.sgst_amount);
  const igst = sum((r) => r.igst_amount);
  return {
    count: rows.length,
    amount: sum((r) => r.amount),
    subtotal: sum((r) => r.subtotal),
    cgst_amount: cgst,
    sgst_amount: sgst,
    igst_amount: igst,
    tax_amount: cgst + sgst + igst,
  };
}

/**
 * A draw-down of a paid grant adjusts the tax its top-up's vouchers paid on the part drawn (GSTR-1
 * table 11B; the invoice drawing it charges its own GST in table 4/5/7, so each rupee of tax is
 * counted once). `part` is the draw's value and its share of the grant's tax, computed by the
 * grant (cumulative shares, so a grant's draws take exactly its vouchers' tax). The part is taken
 * from the grant's vouchers oldest first, each value and head up to what the voucher has open — the
 * grant's tax is the sum of its vouchers', so they always have enough between them — one 'applied'
 * movement per voucher touched. Posts nothing (the draw's entry is the credits module's). Answers
 * the rupee values of the part for foreign-currency vouchers (the draw's entry books its tax at
 * them, as table 11B reports it), null otherwise.
 */
export async function adjustPrepayment(
  ctx: Ctx,
  input: { grantId: string; invoiceId: string; subtotal: number; cgst_amount: number; sgst_amount: number; igst_amount: number },
): Promise<AdvanceInrPart | null> {
  const rest = { subtotal: input.subtotal, cgst_amount: input.cgst_amount, sgst_amount: input.sgst_amount, igst_amount: input.igst_amount };
  if (rest.subtotal + rest.cgst_amount + rest.sgst_amount + rest.igst_amount <= 0) return null;
  const vouchers = await findAdvancesOfGrant(ctx.tx, ctx.tenantId, input.grantId, true);
  let rupees: AdvanceInrPart | null = null;
  for (const advance of vouchers) {
    const open = numeric(advance);
    const take = (want: number, has: number) => Math.max(0, Math.min(want, has));
    const part: AdvanceTax = {
      subtotal: take(rest.subtotal, open.open_subtotal),
      cgst_amount: take(rest.cgst_amount, open.open_cgst),
      sgst_amount: take(rest.sgst_amount, open.open_sgst),
      igst_amount: take(rest.igst_amount, open.open_igst),
      tax_amount: 0,
    };
    part.tax_amount = part.cgst_amount + part.sgst_amount + part.igst_amount;
    const amount = part.subtotal + part.tax_amount;
    if (amount <= 0) continue;
    const inr = await adjustVoucher(ctx, advance, input.invoiceId, amount, part);
    if (inr) rupees = addInr(rupees, inr);
    rest.subtotal -= part.subtotal;
    rest.cgst_amount -= part.cgst_amount;
    rest.sgst_amount -= part.sgst_amount;
    rest.igst_amount -= part.igst_amount;
  }
  if (rest.subtotal + rest.cgst_amount + rest.sgst_amount + rest.igst_amount > 0) {
    throw new Error(`the vouchers of credit grant ${input.grantId} had less open than a draw of ${JSON.stringify(input)} under their lock`);
  }
  return rupees;
}

const addInr = (a: AdvanceInrPart | null, b: AdvanceInrPart): AdvanceInrPart =>
  a === null
    ? b
    : {
        inr_amount: a.inr_amount + b.inr_amount,
        inr_subtotal: a.inr_subtotal + b.inr_subtotal,
        inr_cgst_amount: a.inr_cgst_amount + b.inr_cgst_amount,
        inr_sgst_amount: a.inr_sgst_amount + b.inr_sgst_amount,
        inr_igst_amount: a.inr_igst_amount + b.inr_igst_amount,
      };

/** One voucher's 'applied' movement of a draw-down (dated as its entry: table 11B of that month). */
async function adjustVoucher(ctx: Ctx, advance: AdvanceRow, invoiceId: string, amount: number, part: AdvanceTax): Promise<AdvanceInrPart | null> {
  const inr =
    advance.open_inr_subtotal === null
      ? null
      : inrShareOfOpen(
          numeric(advance),
          {
            subtotal: Number(advance.open_inr_subtotal),
            cgst: Number(advance.open_inr_cgst),
            sgst: Number(advance.open_inr_sgst),
            igst: Number(advance.open_inr_igst),
          },
          amount,
          part,
        );
  const after = await takeFromAdvance(ctx.tx, ctx.tenantId, advance.id, { amount, ...part, inr }, ctx.now);
  if (!after) throw new Error(`voucher ${advance.number} had less than ${amount} open under its lock`);
  await insertMovement(ctx.tx, {
    tenant_id: ctx.tenantId,
    id: newId(),
    advance_id: advance.id,
    kind: 'applied',
    invoice_id: invoiceId,
    number: null,
    amount,
    subtotal: part.subtotal,
    cgst_amount: part.cgst_amount,
    sgst_amount: part.sgst_amount,
    igst_amount: part.igst_amount,
    ...movementInr(inr),
    payout: 'offline',
    refund_id: null,
    reason: '',
    created_at: await postingDate(ctx, advance.entity_id),
  });
  return inr;
}
