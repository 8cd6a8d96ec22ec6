import type { Ctx, ReadCtx } from '../../platform/context.js';
import { errors } from '../../platform/errors.js';
import { emitEvent } from '../../platform/events/events.js';
import type { Page } from '../../platform/http/envelope.js';
import { newId } from '../../platform/ids.js';
import { toIso, toIsoOrNull } from '../../platform/time.js';
import { getCustomer } from '../customers/index.js';
import { convertMinorUnits, mulDivRoundHalfUp } from '../../platform/money.js';
import { entityRateAt, findEntity, findPrimaryEntity, takeDocumentNumber, type EntityRow } from '../entities/index.js';
import { applyToInvoice, getInvoiceRow, linesOfInvoices, type InvoiceLineRow, type InvoiceRow } from '../invoices/index.js';
import { Account, postEntry, type PostingLine } from '../ledger/index.js';
import { splitTaxProRata, type TaxComponents } from '../tax/index.js';
import { postingDate } from '../periods/index.js';
import { assertTaxCreditInTime } from './credit-note-time-limit.js';
import { readSettings } from '../tenants/index.js';
import { allocateProRata, namedShares, splitLines, sumLines, type CreditedLine, type LineRemaining } from './credit-note-lines.js';
import type { CreateCreditNoteBody, CreditNote } from './credit-notes.schemas.js';
import {
  creditedAgainstInvoice,
  creditedPerInvoiceLine,
  findCreditNote,
  insertApplication,
  insertCreditNote,
  insertCreditNoteLines,
  linesOfCreditNotes,
  listCreditNoteRows,
  liveNotesOfInvoice,
  spendableCreditNotes,
  type CreditNoteLineRow,
  updateRefundStatus,
  type CreditNoteRow,
} from './credit-notes.repository.js';
import { spendCreditBalance, transitionCreditNote } from './credit-notes.states.js';
import type { CreditNoteStatus } from './credit-notes.tables.js';

const noInr = { inr_subtotal: null, inr_cgst_amount: null, inr_sgst_amount: null, inr_igst_amount: null, inr_tax_amount: null, inr_total: null };

export function toCreditNote(row: CreditNoteRow, lines?: CreditNoteLineRow[]): CreditNote {
  const note: CreditNote = {
    id: row.id,
    tenant_id: row.tenant_id,
    customer_id: row.customer_id,
    invoice_id: row.invoice_id,
    entity_id: row.entity_id,
    number: row.number,
    reference: row.reference,
    amount: row.amount,
    subtotal: row.subtotal,
    tax_amount: row.tax_amount,
    igst_amount: row.igst_amount,
    cgst_amount: row.cgst_amount,
    sgst_amount: row.sgst_amount,
    tax_type: row.tax_type,
    hsn_code: row.hsn_code,
    balance: row.balance,
    currency: row.currency,
    status: row.status,
    reason: row.reason,
    type: row.type,
    refund_status: row.refund_status,
    tax_reversal: row.tax_reversal,
    exchange_rate: row.exchange_rate,
    inr_subtotal: row.inr_subtotal,
    inr_cgst_amount: row.inr_cgst_amount,
    inr_sgst_amount: row.inr_sgst_amount,
    inr_igst_amount: row.inr_igst_amount,
    inr_tax_amount: row.inr_tax_amount,
    inr_total: row.inr_total,
    expires_at: toIsoOrNull(row.expires_at),
    issued_at: toIsoOrNull(row.issued_at),
    voided_at: toIsoOrNull(row.voided_at),
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
  if (lines) {
    note.lines = lines.map((l) => ({
      id: l.id,
      invoice_line_id: l.invoice_line_id,
      position: l.position,
      hsn_code: l.hsn_code,
      tax_rate_bp: l.rate_bp,
      amount: l.amount,
      subtotal: l.subtotal,
      cgst_amount: l.cgst_amount,
      sgst_amount: l.sgst_amount,
      igst_amount: l.igst_amount,
      tax_amount: l.tax_amount,
    }));
  }
  return note;
}

/** The API shape with the note's credited lines (every credit-note endpoint answers this). */
export async function renderCreditNote(ctx: ReadCtx, row: CreditNoteRow): Promise<CreditNote> {
  return toCreditNote(row, await linesOfCreditNotes(ctx.tx, ctx.tenantId, [row.id]));
}

async function entityOf(ctx: Ctx, id: string): Promise<EntityRow> {
  const entity = await findEntity(ctx.tx, ctx.tenantId, id);
  if (!entity) throw errors.notFound('entity');
  return entity;
}

/**
 * The issue entry's lines: reverse revenue and output tax; the customer now holds spendable
 * credit. A goodwill note (no tax breakdown) reverses revenue by its whole amount.
 */
function issueLines(row: CreditNoteRow): PostingLine[] {
  const revenuePart = row.tax_amount > 0 || row.subtotal > 0 ? row.subtotal : row.amount;
  const tags = { creditNoteId: row.id, invoiceId: row.invoice_id };
  // In the functional books the note is worth its INR amounts (rule 34), when it has them.
  const inr = row.inr_total === null ? null : row;
  return [
    { account: Account.REVENUE_REVERSALS, debit: revenuePart, ...tags, functional: inr ? inr.inr_total! - inr.inr_tax_amount! : undefined },
    { account: Account.CGST_PAYABLE, debit: row.cgst_amount, ...tags, functional: inr?.inr_cgst_amount ?? undefined },
    { account: Account.SGST_PAYABLE, debit: row.sgst_amount, ...tags, functional: inr?.inr_sgst_amount ?? undefined },
    { account: Account.IGST_PAYABLE, debit: row.igst_amount, ...tags, functional: inr?.inr_igst_amount ?? undefined },
    { account: Account.CUSTOMER_CREDIT, credit: row.amount, creditNoteId: row.id, customerId: row.customer_id, functional: inr?.inr_total ?? undefined },
  ];
}

/**
 * The note's value in INR (CGST Rules, rule 34), at its invoice's rate — computed as the GST
 * returns declare it, so the output tax the ledger reverses is the tax GSTR-1/3B show: each credited
 * line takes the share of that invoice line's INR values it takes of the line (all of them for a
 * whole line); a note without lines the same share of the invoice's INR values; a note on no
 * invoice (or a commercial credit) converts its amounts at `rate`.
 */
export function creditNoteInr(
  note: Pick<CreditNoteRow, 'currency' | 'amount' | 'subtotal' | 'cgst_amount' | 'sgst_amount' | 'igst_amount' | 'tax_amount'>,
  rate: string,
  credited: { invoice_line_id: string; subtotal: number; cgst_amount: number; sgst_amount: number; igst_amount: number }[],
  invoice: (InvoiceRow & { lines: InvoiceLineRow[] }) | null,
): Pick<CreditNoteRow, 'inr_subtotal' | 'inr_cgst_amount' | 'inr_sgst_amount' | 'inr_igst_amount' | 'inr_tax_amount' | 'inr_total'> {
  const share = (value: number, part: number, whole: number) => (whole > 0 ? mulDivRoundHalfUp(value, part, whole) : 0);
  let t: { subtotal: number; cgst: number; sgst: number; igst: number };
  if (invoice && invoice.inr_subtotal !== null && credited.length > 0) {
    t = { subtotal: 0, cgst: 0, sgst: 0, igst: 0 };
    for (const c of credited) {
      const il = invoice.lines.find((l) => l.id === c.invoice_line_id);
      if (!il || il.inr_amount === null) {
        t.subtotal += c.subtotal;
        t.cgst += c.cgst_amount;
        t.sgst += c.sgst_amount;
        t.igst += c.igst_amount;
        continue;
      }
      t.subtotal += share(il.inr_amount, c.subtotal, il.amount);
      t.cgst += share(il.inr_cgst_amount ?? 0, c.cgst_amount, il.cgst_amount);
      t.sgst += share(il.inr_sgst_amount ?? 0, c.sgst_amount, il.sgst_amount);
      t.igst += share(il.inr_igst_amount ?? 0, c.igst_amount, il.igst_amount);
    }
  } else if (invoice && invoice.inr_subtotal !== null && note.tax_amount + note.subtotal > 0) {
    t = {
      subtotal: share(invoice.inr_subtotal, note.subtotal, invoice.subtotal),
      cgst: share(invoice.inr_cgst_amount ?? 0, note.cgst_amount, invoice.cgst_amount),
      sgst: share(invoice.inr_sgst_amount ?? 0, note.sgst_amount, invoice.sgst_amount),
      igst: share(invoice.inr_igst_amount ?? 0, note.igst_amount, invoice.igst_amount),
    };
  } else {
    const inr = (amount: number) => convertMinorUnits(amount, note.currency, 'INR', rate);
    const [cgst, sgst, igst] = [inr(note.cgst_amount), inr(note.sgst_amount), inr(note.igst_amount)];
    return {
      inr_subtotal: inr(note.subtotal),
      inr_cgst_amount: cgst,
      inr_sgst_amount: sgst,
      inr_igst_amount: igst,
      inr_tax_amount: cgst + sgst + igst,
      inr_total: inr(note.amount),
    };
  }
  const tax = t.cgst + t.sgst + t.igst;
  return {
    inr_subtotal: t.subtotal,
    inr_cgst_amount: t.cgst,
    inr_sgst_amount: t.sgst,
    inr_igst_amount: t.igst,
    inr_tax_amount: tax,
    inr_total: t.subtotal + tax,
  };
}

async function bookIssue(ctx: Ctx, row: CreditNoteRow, entity: EntityRow): Promise<void> {
  await postEntry(ctx, {
    ledgerId: entity.tb_ledger_id,
    entityId: entity.id,
    kind: 'credit_note.issued',
    referenceType: 'credit_note',
    referenceId: row.id,
    currency: row.currency,
    description: `Credit note ${row.number}`,
    rate: row.exchange_rate,
    lines: issueLines(row),
  });
}

/** pending_approval/new → issued: takes the entity's next credit-note number and books the credit. */
async function issue(ctx: Ctx, row: CreditNoteRow, entity: EntityRow): Promise<CreditNoteRow> {
  // Dated in the first open period: a note never lands in a closed month (DESIGN §18); numbered
  // in the series of that date's financial year.
  const issuedAt = await postingDate(ctx, entity.id);
  const number = await takeDocumentNumber(ctx, entity, 'credit_note', issuedAt);
  const issued = { ...row, number, issued_at: issuedAt };
  await bookIssue(ctx, issued, entity);
  await emitEvent(ctx, 'credit_note.issued', toCreditNote(issued));
  return issued;
}

type CreditSplit = { tax: TaxComponents; lines: CreditedLine[] };

/**
 * How a gross credit on an invoice splits into taxable value and each tax. Each credited line is
 * split at its own rate against what that line has left (Rule 53(1A)): the lines the request
 * names, or — when it names none — every line in proportion to what it has left. So no line, and
 * therefore no tax component of the invoice, is ever credited beyond what it charged.
 *
 * An invoice credited by notes from before lines were recorded (the notes' total exceeds what
 * their lines account for) keeps the older invoice-level split, against what the notes left.
 */
async function splitCredit(ctx: Ctx, invoice: InvoiceRow, amount: number, requested: CreateCreditNoteBody['lines']): Promise<CreditSplit> {
  const credited = await creditedAgainstInvoice(ctx.tx, ctx.tenantId, invoice.id);
  if (credited.amount + amount > invoice.total) {
    throw errors.conflict(
      `credit of ${amount} exceeds what remains creditable on the invoice (${invoice.total - credited.amount} of ${invoice.total})`,
      'amount_exceeds_invoice',
    );
  }
  const invoiceLines = await linesOfInvoices(ctx.tx, ctx.tenantId, [invoice.id]);
  const perLine = await creditedPerInvoiceLine(ctx.tx, ctx.tenantId, invoice.id);
  const lineCredited = [...perLine.values()].reduce((sum, c) => sum + c.amount, 0);
  if (lineCredited !== credited.amount - credited.commercial || invoiceLines.reduce((sum, l) => sum + l.total, 0) !== invoice.total) {
    if (requested) throw errors.conflict('the invoice was credited by notes without line detail: credit it without lines', 'credit_lines_unavailable');
    // Split against what the earlier notes left uncredited, component by component, so several
    // partial notes never together exceed any component of the invoice.
    const remaining = {
      subtotal: invoice.subtotal - credited.subtotal,
      cgst_amount: invoice.cgst_amount - credited.cgst_amount,
      sgst_amount: invoice.sgst_amount - credited.sgst_amount,
      igst_amount: invoice.igst_amount - credited.igst_amount,
      total: invoice.total - credited.amount,
    };
    return { tax: splitTaxProRata(remaining, amount), lines: [] };
  }
  const left: LineRemaining[] = invoiceLines.map((l) => {
    const c = perLine.get(l.id) ?? { amount: 0, subtotal: 0, cgst_amount: 0, sgst_amount: 0, igst_amount: 0 };
    return {
      invoice_line_id: l.id,
      position: l.position,
      hsn_code: l.hsn_code,
      rate_bp: l.rate_bp,
      subtotal: l.amount - c.subtotal,
      cgst_amount: l.cgst_amount - c.cgst_amount,
      sgst_amount: l.sgst_amount - c.sgst_amount,
      igst_amount: l.igst_amount - c.igst_amount,
      total: l.total - c.amount,
    };
  });
  const lines = splitLines(requested ? namedShares(left, requested) : allocateProRata(left, amount)).sort((a, b) => a.line.position - b.line.position);
  return { tax: sumLines(lines), lines };
}

/**
 * A commercial credit on an invoice (`tax_reversal: false`): no tax breakdown, no lines, no GSTR-1
 * entry, no IRN — the value of the supply for GST stays as invoiced. It still cannot credit more
 * than the invoice has left.
 */
async function assertCommercialCredit(ctx: Ctx, invoice: InvoiceRow, amount: number, lines: CreateCreditNoteBody['lines']): Promise<void> {
  if (lines) throw errors.invalidField('lines', 'a commercial credit (tax_reversal: false) credits no invoice lines; give amount');
  const left = await creditableOnInvoice(ctx, invoice);
  if (amount > left) {
    throw errors.conflict(`credit of ${amount} exceeds what remains creditable on the invoice (${left} of ${invoice.total})`, 'amount_exceeds_invoice');
  }
}

function noteLineRows(ctx: Ctx, note: CreditNoteRow, lines: CreditedLine[]): CreditNoteLineRow[] {
  return lines.map(({ line, split }, i) => ({
    tenant_id: ctx.tenantId,
    id: newId(),
    credit_note_id: note.id,
    invoice_id: note.invoice_id!,
    invoice_line_id: line.invoice_line_id,
    position: i + 1,
    hsn_code: line.hsn_code,
    rate_bp: line.rate_bp,
    amount: split.total,
    subtotal: split.subtotal,
    cgst_amount: split.cgst_amount,
    sgst_amount: split.sgst_amount,
    igst_amount: split.igst_amount,
    tax_amount: split.tax_amount,
  }));
}

/** A refund's note: paid out as money at once, its refund_status following the gateway. */
export type RefundNoteOptions = { type: 'refund'; refundStatus: 'pending' | 'manual_required' };

/**
 * A refund note's refund_status follows the gateway (pending → processed | refund_failed). When the
 * refund failed the money stays with the customer as spendable credit: the note is issued again
 * with its whole balance.
 */
export async function setCreditNoteRefundStatus(ctx: Ctx, id: string, refundStatus: 'processed' | 'refund_failed'): Promise<CreditNoteRow> {
  const row = await updateRefundStatus(ctx.tx, ctx.tenantId, id, refundStatus, ctx.now);
  if (!row) throw errors.notFound('credit note');
  return row;
}

/** A refund note that never paid out (its approval was refused, or it was voided while waiting): refund_status refund_failed, status unchanged. */
export async function markRefundNoteUnpaid(ctx: Ctx, id: string): Promise<void> {
  await ctx.tx
    .updateTable('credit_notes')
    .set({ refund_status: 'refund_failed', updated_at: ctx.now })
    .where('tenant_id', '=', ctx.tenantId)
    .where('id', '=', id)
    .where('type', '=', 'refund')
    .execute();
}

/** What a credit note is worth and what it reverses: its invoice (if tied), entity, currency and the tax it credits. */
type NoteBasis = {
  invoice: InvoiceRow | undefined;
  entity: EntityRow;
  currency: string;
  taxReversal: boolean;
  tax: Pick<CreditNoteRow, 'subtotal' | 'cgst_amount' | 'sgst_amount' | 'igst_amount' | 'tax_amount'>;
  creditedLines: CreditedLine[];
  taxType: string;
  hsnCode: string;
};

const noTax = { subtotal: 0, cgst_amount: 0, sgst_amount: 0, igst_amount: 0, tax_amount: 0 };

/** The note's amount: the sum of its lines (which a given amount must equal), else the amount given. */
function noteAmount(input: CreateCreditNoteBody): number {
  const amount = input.lines ? input.lines.reduce((sum, l) => sum + l.amount, 0) : input.amount!;
  if (input.lines && input.amount !== undefined && input.amount !== amount) {
    throw errors.invalidField('amount', `must equal the sum of lines[].amount (${amount})`);
  }
  if (!Number.isSafeInteger(amount)) throw errors.invalidField('lines', 'the lines add up to more than the largest amount');
  return amount;
}

/** A note tied to an invoice: the invoice's entity, currency and tax type; with tax reversal, the tax of the lines it credits. */
async function tiedNoteBasis(ctx: Ctx, input: CreateCreditNoteBody, invoiceId: string, customerId: string, amount: number): Promise<NoteBasis> {
  const taxReversal = input.tax_reversal ?? true;
  const invoice = await getInvoiceRow(ctx, invoiceId, true);
  if (invoice.customer_id !== customerId) throw errors.invalidField('invoice_id', 'the invoice belongs to another customer');
  if (invoice.status === 'draft' || invoice.status === 'void') {
    throw errors.conflict(`cannot credit an invoice whose status is ${invoice.status}`, 'invalid_invoice_state');
  }
  if (input.currency && input.currency !== invoice.currency) throw errors.invalidField('currency', `the invoice is in ${invoice.currency}`);
  const entity = await entityOf(ctx, invoice.entity_id);
  const basis: NoteBasis = { invoice, entity, currency: invoice.currency, taxReversal, tax: noTax, creditedLines: [], taxType: '', hsnCode: '' };
  if (!taxReversal) {
    await assertCommercialCredit(ctx, invoice, amount, input.lines);
    return basis;
  }
  assertTaxCreditInTime(invoice, await postingDate(ctx, entity.id), entity.time_zone);
  const split = await splitCredit(ctx, invoice, amount, input.lines);
  const { subtotal, cgst_amount, sgst_amount, igst_amount, tax_amount } = split.tax;
  const creditedLines = split.lines;
  const hsnCode = creditedLines[0]?.line.hsn_code ?? (await linesOfInvoices(ctx.tx, ctx.tenantId, [invoice.id]))[0]?.hsn_code ?? '';
  return { ...basis, tax: { subtotal, cgst_amount, sgst_amount, igst_amount, tax_amount }, creditedLines, taxType: invoice.tax_type, hsnCode };
}

/** A standalone (goodwill) note: the primary entity's, no tax. */
async function standaloneNoteBasis(ctx: Ctx, input: CreateCreditNoteBody): Promise<NoteBasis> {
  const currency = input.currency ?? 'INR';
  const entity = await findPrimaryEntity(ctx.tx, ctx.tenantId);
  if (!entity) throw errors.notFound('entity');
  return { invoice: undefined, entity, currency, taxReversal: input.tax_reversal ?? true, tax: noTax, creditedLines: [], taxType: '', hsnCode: '' };
}

/** The new note's row, before it is issued (or left waiting for approval). */
function newNoteRow(
  ctx: Ctx,
  input: CreateCreditNoteBody,
  customerId: string,
  amount: number,
  basis: NoteBasis,
  rate: CreditNoteRow['exchange_rate'],
  pending: boolean,
  refund: RefundNoteOptions | undefined,
): CreditNoteRow {
  return {
    tenant_id: ctx.tenantId,
    id: newId(),
    customer_id: customerId,
    invoice_id: basis.invoice?.id ?? null,
    entity_id: basis.entity.id,
    number: null,
    reference: input.reference ?? null,
    type: refund?.type ?? 'adjustment',
    status: pending ? 'pending_approval' : 'issued',
    refund_status: refund?.refundStatus ?? 'none',
    currency: basis.currency,
    amount,
    ...basis.tax,
    tax_type: basis.taxType,
    hsn_code: basis.hsnCode,
    tax_reversal: basis.taxReversal,
    exchange_rate: rate,
    ...noInr,
    balance: amount,
    reason: input.reason,
    expires_at: input.expires_at ? new Date(input.expires_at) : null,
    issued_at: null,
    approved_at: null,
    rejected_at: null,
    voided_at: null,
    expired_at: null,
    ...requesterOf(ctx),
    created_at: ctx.now,
    updated_at: ctx.now,
  };
}

/** An Indian entity keeping its books in INR values a foreign-currency note in INR too (DESIGN §19). */
async function addInrValues(ctx: Ctx, row: CreditNoteRow, basis: NoteBasis): Promise<void> {
  const { invoice, entity, creditedLines } = basis;
  const rate = row.exchange_rate;
  if (!rate || entity.country_code !== 'IN' || entity.functional_currency !== 'INR') return;
  const withLines = invoice && basis.taxReversal ? { ...invoice, lines: await linesOfInvoices(ctx.tx, ctx.tenantId, [invoice.id]) } : null;
  const credited = creditedLines.map((l) => ({ invoice_line_id: l.line.invoice_line_id, ...l.split }));
  Object.assign(row, creditNoteInr(row, rate, credited, withLines));
}

/**
 * Creates a credit note. Tied to an invoice, it inherits the invoice's entity, currency and tax
 * type, and reverses the tax of the lines it credits (see splitCredit), carrying the HSN of its
 * first credited line; standalone (goodwill) it carries no tax (subtotal 0). With approval
 * governance on it waits in `pending_approval`; otherwise it is issued at once — and a tied note
 * settles what its own invoice still owes first (settleOwnInvoice).
 */
export async function createCreditNote(ctx: Ctx, input: CreateCreditNoteBody, refund?: RefundNoteOptions): Promise<CreditNoteRow> {
  const customer = await getCustomer(ctx, input.customer_id);
  const amount = noteAmount(input);
  const basis = input.invoice_id ? await tiedNoteBasis(ctx, input, input.invoice_id, customer.id, amount) : await standaloneNoteBasis(ctx, input);
  const { invoice, entity } = basis;
  // The rate the note is valued at (DESIGN §19): its invoice's; a note on no invoice, the entity's of today.
  const rate = invoice ? invoice.exchange_rate : await entityRateAt(ctx, entity.id, entity.functional_currency, basis.currency, ctx.now);
  const settings = await readSettings(ctx);
  // Governance applies to refund notes too (docs/decisions/0140): under it the note, and the
  // refund with it, wait for approval; nothing is booked and no money moves until then.
  const pending = settings.credit_note_approval_required;
  const row = newNoteRow(ctx, input, customer.id, amount, basis, rate, pending, refund);
  await addInrValues(ctx, row, basis);
  let final = pending ? row : await issue(ctx, row, entity);
  // A refund note's credit is paid out as money at once (the refund's entry spends it), never spendable.
  if (refund && !pending) final = { ...final, status: 'used', balance: 0 };
  await insertCreditNote(ctx.tx, final);
  const lineRows = noteLineRows(ctx, final, basis.creditedLines);
  await insertCreditNoteLines(ctx.tx, lineRows);
  await emitEvent(ctx, 'credit_note.created', toCreditNote(final, lineRows));
  return pending ? final : settleOwnInvoice(ctx, final);
}

/**
 * A tied note pays what its own invoice still owes before anything else: only what is left
 * becomes general customer credit (spent on the next invoice). Runs when the note is issued.
 * Only adjustment notes: a note of another type (a refund's) is spent by the flow that made it.
 */
async function settleOwnInvoice(ctx: Ctx, note: CreditNoteRow): Promise<CreditNoteRow> {
  if (note.type !== 'adjustment') return note;
  return spendOnOwnInvoice(ctx, note);
}

/**
 * Credit that a refund meant to pay out and did not (the gateway refused it, or an offline refund
 * was marked failed) is the customer's again: like any tied note's credit it settles what the
 * note's own invoice still owes first, whatever the note's type.
 */
export async function settleOwnInvoiceWithReturnedCredit(ctx: Ctx, noteId: string): Promise<void> {
  const note = await findCreditNote(ctx.tx, ctx.tenantId, noteId);
  if (note && note.balance > 0) await spendOnOwnInvoice(ctx, note);
}

async function spendOnOwnInvoice(ctx: Ctx, note: CreditNoteRow): Promise<CreditNoteRow> {
  if (!note.invoice_id || note.status !== 'issued') return note;
  const invoice = await getInvoiceRow(ctx, note.invoice_id, true);
  if ((invoice.status !== 'open' && invoice.status !== 'uncollectible') || invoice.amount_due <= 0) return note;
  return spendOn(ctx, note, invoice, Math.min(note.balance, invoice.amount_due));
}

/** The API key or operator asking for this action; the worker's own notes have no requester. */
function requesterOf(ctx: Ctx): Pick<CreditNoteRow, 'requested_by_type' | 'requested_by_id'> {
  const actor = ctx.actor;
  if (!actor || actor.type === 'system') return { requested_by_type: null, requested_by_id: null };
  return { requested_by_type: actor.type, requested_by_id: actor.id };
}

/**
 * Four eyes (DESIGN §21, decision 0221): a note waiting for approval is approved by another actor
 * than the one who asked for it — else one finance operator both requests a refund and sends the
 * money. An operator and an API key are different actors.
 */
function assertSecondPerson(ctx: Ctx, note: CreditNoteRow): void {
  const approver = requesterOf(ctx);
  if (note.requested_by_id === null || approver.requested_by_id === null) return;
  if (note.requested_by_type === approver.requested_by_type && note.requested_by_id === approver.requested_by_id) {
    throw errors.conflict('the approval of a credit note needs someone other than who asked for it', 'approval_requires_second_person');
  }
}

export async function approveCreditNote(ctx: Ctx, id: string): Promise<CreditNoteRow> {
  const current = await findCreditNote(ctx.tx, ctx.tenantId, id);
  if (!current) throw errors.notFound('credit note');
  if (current.status === 'pending_approval') assertSecondPerson(ctx, current);
  if (current.invoice_id) {
    // Locked, so a void of the invoice cannot slip in between (it voids its pending notes).
    const invoice = await getInvoiceRow(ctx, current.invoice_id, true);
    if (invoice.status === 'void') throw errors.conflict('cannot approve a credit note whose invoice is void', 'invoice_void');
  }
  const entity = await entityOf(ctx, current.entity_id);
  // The guarded update runs first so that two approvals cannot both take a number.
  const approved = await transitionCreditNote(ctx.tx, ctx.tenantId, id, 'approve', { approved_at: ctx.now, updated_at: ctx.now });
  const issued = await issue(ctx, approved, entity);
  // A refund note's credit is spent on its refund as it is issued (the refund flow books that on credit_note.approved).
  const row = await saveIssueDetails(ctx, issued.type === 'refund' ? { ...issued, status: 'used', balance: 0 } : issued);
  await emitEvent(ctx, 'credit_note.approved', toCreditNote(row));
  return settleOwnInvoice(ctx, row);
}

async function saveIssueDetails(ctx: Ctx, row: CreditNoteRow): Promise<CreditNoteRow> {
  return ctx.tx
    .updateTable('credit_notes')
    .set({ number: row.number, issued_at: row.issued_at, status: row.status, balance: row.balance })
    .where('tenant_id', '=', ctx.tenantId)
    .where('id', '=', row.id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function rejectCreditNote(ctx: Ctx, id: string): Promise<CreditNoteRow> {
  const row = await transitionCreditNote(ctx.tx, ctx.tenantId, id, 'reject', { rejected_at: ctx.now, updated_at: ctx.now });
  await emitEvent(ctx, 'credit_note.rejected', toCreditNote(row));
  return row;
}

/** Void while unspent: the issue entry is reversed in full. */
export async function voidCreditNote(ctx: Ctx, id: string): Promise<CreditNoteRow> {
  // Dated in the first open period, as its entry is (DESIGN §18).
  const note = await findCreditNote(ctx.tx, ctx.tenantId, id);
  const voidedAt = note ? await postingDate(ctx, note.entity_id) : ctx.now;
  const row = await transitionCreditNote(ctx.tx, ctx.tenantId, id, 'void', { balance: 0, voided_at: voidedAt, updated_at: ctx.now }, { unspentOnly: true });
  const entity = await entityOf(ctx, row.entity_id);
  await postEntry(ctx, {
    ledgerId: entity.tb_ledger_id,
    entityId: entity.id,
    kind: 'credit_note.voided',
    referenceType: 'credit_note',
    referenceId: row.id,
    currency: row.currency,
    description: `Void of credit note ${row.number}`,
    rate: row.exchange_rate,
    // The exact mirror of the issue entry, in both currencies.
    lines: issueLines(row).map((l) => ({ ...l, debit: l.credit, credit: l.debit })),
  });
  await emitEvent(ctx, 'credit_note.voided', toCreditNote(row));
  return row;
}

/**
 * Before its invoice is voided (docs/decisions/0020): the notes tied to it go with it, so the
 * void reverses the invoice once and nothing else stays reversed. A pending note is voided
 * without an entry (nothing was booked); an issued, unspent one is voided with the mirror of its
 * issue entry. A note that was spent or has expired has already moved money: the invoice cannot be
 * voided (409; the void flow refuses an invoice with credit applied before it gets here).
 * The caller holds the invoice's row lock.
 */
export async function voidCreditNotesOfInvoice(ctx: Ctx, invoiceId: string): Promise<CreditNoteRow[]> {
  const notes = await liveNotesOfInvoice(ctx.tx, ctx.tenantId, invoiceId);
  const spent = notes.find((n) => n.status !== 'pending_approval' && !(n.status === 'issued' && n.balance === n.amount));
  if (spent) {
    throw errors.conflict(
      `cannot void the invoice: credit note ${spent.number ?? spent.id} against it is ${spent.status === 'issued' ? 'partly spent' : spent.status}`,
      'invoice_has_credit_notes',
    );
  }
  const voided: CreditNoteRow[] = [];
  for (const note of notes) {
    if (note.status === 'issued') {
      voided.push(await voidCreditNote(ctx, note.id));
      continue;
    }
    const row = await transitionCreditNote(ctx.tx, ctx.tenantId, note.id, 'void_pending', { balance: 0, voided_at: ctx.now, updated_at: ctx.now });
    await emitEvent(ctx, 'credit_note.voided', toCreditNote(row));
    voided.push(row);
  }
  return voided;
}

/**
 * Spends credit on an open invoice of the same customer, currency and entity: the note's balance
 * and the invoice's amount due fall together (Dr customer credit; Cr receivables).
 */
export async function applyCreditNote(ctx: Ctx, id: string, invoiceId: string, amount: number): Promise<CreditNoteRow> {
  const note = await findCreditNote(ctx.tx, ctx.tenantId, id);
  if (!note) throw errors.notFound('credit note');
  const invoice = await getInvoiceRow(ctx, invoiceId, true);
  if (invoice.customer_id !== note.customer_id) throw errors.invalidField('invoice_id', 'the invoice belongs to another customer');
  if (invoice.currency !== note.currency) throw errors.invalidField('invoice_id', `the invoice is in ${invoice.currency}, the credit in ${note.currency}`);
  if (invoice.entity_id !== note.entity_id) throw errors.invalidField('invoice_id', 'the invoice was issued by another legal entity than the credit note');
  if (invoice.status !== 'open' && invoice.status !== 'uncollectible') {
    throw errors.conflict(`cannot apply credit to an invoice whose status is ${invoice.status}`, 'invalid_invoice_state');
  }
  if (note.expires_at && note.expires_at <= ctx.now) throw errors.conflict('the credit note has expired', 'credit_note_expired');
  if (amount > invoice.amount_due) {
    throw errors.conflict(`${amount} exceeds the invoice's amount due of ${invoice.amount_due}`, 'amount_exceeds_due');
  }
  return spendOn(ctx, note, invoice, amount);
}

/** The application itself, once checked: balance and amount due fall together, one entry. */
async function spendOn(ctx: Ctx, note: CreditNoteRow, invoice: InvoiceRow, amount: number): Promise<CreditNoteRow> {
  const id = note.id;
  const spent = await spendCreditBalance(ctx.tx, ctx.tenantId, id, amount, ctx.now);
  await applyToInvoice(ctx, invoice.id, { credited: amount });
  const applicationId = newId();
  await insertApplication(ctx.tx, { tenant_id: ctx.tenantId, id: applicationId, credit_note_id: id, invoice_id: invoice.id, amount, created_at: ctx.now });
  const entity = await entityOf(ctx, note.entity_id);
  await postEntry(ctx, {
    ledgerId: entity.tb_ledger_id,
    entityId: entity.id,
    kind: 'credit_note.applied',
    referenceType: 'credit_note_application',
    referenceId: applicationId,
    currency: note.currency,
    description: `Credit note ${note.number} applied to invoice ${invoice.number}`,
    // Both sides leave their document's carried value; a note and an invoice booked at different
    // rates leave a realized exchange difference.
    exchangeDifference: 'realized',
    rate: note.exchange_rate,
    lines: [
      { account: Account.CUSTOMER_CREDIT, debit: amount, creditNoteId: id, customerId: note.customer_id },
      { account: Account.RECEIVABLES, credit: amount, invoiceId: invoice.id, customerId: note.customer_id },
    ],
  });
  await emitEvent(ctx, 'credit_note.applied', { ...toCreditNote(spent), applied_amount: amount, applied_invoice_id: invoice.id });
  return spent;
}

/**
 * Spends the customer's available credit on a just-finalized invoice, soonest-expiring first.
 * Answers how much was applied.
 */
export async function applyAvailableCredit(ctx: Ctx, invoice: InvoiceRow): Promise<number> {
  let due = invoice.amount_due;
  if (due <= 0 || invoice.status !== 'open') return 0;
  const notes = await spendableCreditNotes(ctx.tx, ctx.tenantId, {
    customerId: invoice.customer_id,
    currency: invoice.currency,
    entityId: invoice.entity_id,
    now: ctx.now,
  });
  for (const note of notes) {
    if (due <= 0) break;
    const amount = Math.min(note.balance, due);
    await applyCreditNote(ctx, note.id, invoice.id, amount);
    due -= amount;
  }
  return invoice.amount_due - due;
}

/**
 * At expires_at the unspent balance is written off to income: Dr customer credit / Cr
 * expired-credit income, the whole balance (decision 0620). A tied note's tax reduction stands:
 * the note adjusted the value of its supply under CGST Act s.34(1)–(2) when it was issued, and the
 * customer's unused claim lapsing does not make that value higher (s.34(3) asks for a debit note
 * only then), nor is the lapsed balance consideration for a supply — so no return declares it and
 * no output tax is posted back.
 */
export async function expireCreditNote(ctx: Ctx, id: string): Promise<CreditNoteRow | null> {
  const current = await findCreditNote(ctx.tx, ctx.tenantId, id);
  if (!current || current.status !== 'issued' || !current.expires_at || current.expires_at > ctx.now) return null;
  const row = await transitionCreditNote(ctx.tx, ctx.tenantId, id, 'expire', {
    balance: 0,
    // Dated in the first open period, as its entry is (DESIGN §18).
    expired_at: await postingDate(ctx, current.entity_id),
    updated_at: ctx.now,
  });
  const entity = await entityOf(ctx, row.entity_id);
  await postEntry(ctx, {
    ledgerId: entity.tb_ledger_id,
    entityId: entity.id,
    kind: 'credit_note.expired',
    referenceType: 'credit_note',
    referenceId: row.id,
    currency: row.currency,
    description: `Expiry of credit note ${row.number}`,
    rate: row.exchange_rate,
    lines: [
      { account: Account.CUSTOMER_CREDIT, debit: current.balance, creditNoteId: row.id, customerId: row.customer_id },
      { account: Account.EXPIRED_CREDIT_INCOME, credit: current.balance, creditNoteId: row.id },
    ],
  });
  // tax_owed_again stays in the payload (0) for subscribers written before decision 0620.
  await emitEvent(ctx, 'credit_note.expired', { ...toCreditNote(row), expired_balance: current.balance, tax_owed_again: 0 });
  return row;
}

export async function getCreditNote(ctx: ReadCtx, id: string, expandCustomer = false): Promise<CreditNote> {
  const row = await findCreditNote(ctx.tx, ctx.tenantId, id);
  if (!row) throw errors.notFound('credit note');
  const note = await renderCreditNote(ctx, row);
  return expandCustomer ? { ...note, customer: await getCustomer(ctx, row.customer_id) } : note;
}

export async function listCreditNotes(
  ctx: ReadCtx,
  filter: { customer_id?: string; invoice_id?: string; status?: CreditNoteStatus },
  page: Page,
): Promise<{ notes: CreditNote[]; total: number }> {
  const { rows, total } = await listCreditNoteRows(ctx.tx, ctx.tenantId, filter, page);
  const lines = await linesOfCreditNotes(
    ctx.tx,
    ctx.tenantId,
    rows.map((r) => r.id),
  );
  return {
    notes: rows.map((r) =>
      toCreditNote(
        r,
        lines.filter((l) => l.credit_note_id === r.id),
      ),
    ),
    total,
  };
}

/** What an invoice has left to credit (gross): its total less what its live notes credited. */
export async function creditableOnInvoice(ctx: Ctx, invoice: InvoiceRow): Promise<number> {
  const credited = await creditedAgainstInvoice(ctx.tx, ctx.tenantId, invoice.id);
  return Math.max(0, invoice.total - credited.amount);
}

/**
 * What each line of the invoice has left to credit (gross), by line id — or null when earlier
 * notes credited the invoice without line detail (then a note can only credit it pro rata).
 */
export async function creditableByLine(ctx: Ctx, invoice: InvoiceRow): Promise<Map<string, number> | null> {
  const credited = await creditedAgainstInvoice(ctx.tx, ctx.tenantId, invoice.id);
  const invoiceLines = await linesOfInvoices(ctx.tx, ctx.tenantId, [invoice.id]);
  const perLine = await creditedPerInvoiceLine(ctx.tx, ctx.tenantId, invoice.id);
  const lineCredited = [...perLine.values()].reduce((sum, c) => sum + c.amount, 0);
  if (lineCredited !== credited.amount - credited.commercial || invoiceLines.reduce((sum, l) => sum + l.total, 0) !== invoice.total) return null;
  return new Map(invoiceLines.map((l) => [l.id, l.total - (perLine.get(l.id)?.amount ?? 0)]));
}

/**
 * Reads and writes of this module's own tables that flows and other modules call; the repository
 * itself is private to the module (index.ts exports operations and types only).
 */
export { customersWithSpendableCredit, creditedSubtotalsOfLines, expirableCreditNotesInClockScope } from './credit-notes.repository.js';
