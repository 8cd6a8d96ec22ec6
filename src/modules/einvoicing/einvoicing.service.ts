import type { Ctx, ReadCtx } from '../../platform/context.js';
import { errors } from '../../platform/errors.js';
import type { EventPayload } from '../../platform/events/events.js';
import { emitEvent } from '../../platform/events/events.js';
import { newId } from '../../platform/ids.js';
import { enqueueJob } from '../../platform/jobs/jobs.js';
import { mulDivRoundHalfUp } from '../../platform/money.js';
import { toIso, toIsoOrNull } from '../../platform/time.js';
import { getCreditNote, type CreditNote } from '../credit-notes/index.js';
import { customerCountry, customerStateCode, getCustomer } from '../customers/index.js';
import { findEntity, type EntityRow } from '../entities/index.js';
import { getInvoice, type Invoice, type PartySnapshot } from '../invoices/index.js';
import { classifyZeroRatedSupply, gstRateBasisPoints } from '../tax/index.js';
import { lastReportableDay, reportDeadline } from './report-limit.js';
import { localDay } from '../tax/index.js';
import type { EinvoiceDocumentType, EinvoiceError } from './einvoicing.tables.js';
import {
  einvoicesNearReportLimit,
  einvoicesOfDocuments,
  entitiesWithEinvoicing,
  findEinvoiceOfDocument,
  insertPendingEinvoice,
  type EinvoiceRow,
} from './einvoicing.repository.js';
import type { ReportDue } from './einvoicing.schemas.js';
import { transitionEinvoice } from './einvoicing.states.js';
import { buildIrpDocument, validateIrpDocument, type IrpDocument, type IrpSource } from './irp-document.js';
import type { IrpRegistration } from './irp-client.js';

export const SUBMIT_JOB = 'einvoice.submit';
export const CANCEL_JOB = 'einvoice.cancel';
/** The IRP accepts a cancellation within 24 hours of generation. */
export const CANCEL_WINDOW_MS = 24 * 60 * 60 * 1000;

export type Einvoice = {
  id: string;
  document_type: EinvoiceDocumentType;
  document_id: string;
  entity_id: string;
  provider: string;
  status: EinvoiceRow['status'];
  irn: string | null;
  ack_no: string | null;
  ack_date: string | null;
  signed_qr_code: string | null;
  errors: EinvoiceError[];
  canceled_at: string | null;
  cancel_reason_code: number | null;
  cancel_remarks: string | null;
  irn_report_by: string | null;
  created_at: string;
  updated_at: string;
};

/** The record as answered; `timeZone` dates the last reportable day (the entity's zone). */
export function toEinvoice(row: EinvoiceRow, timeZone = 'Asia/Kolkata'): Einvoice {
  return {
    id: row.id,
    document_type: row.document_type,
    document_id: row.document_id,
    entity_id: row.entity_id,
    provider: row.provider,
    status: row.status,
    irn: row.irn,
    ack_no: row.ack_no,
    ack_date: toIsoOrNull(row.ack_date),
    signed_qr_code: row.signed_qr_code,
    errors: row.errors,
    canceled_at: toIsoOrNull(row.canceled_at),
    cancel_reason_code: row.cancel_reason_code,
    cancel_remarks: row.cancel_remarks,
    irn_report_by: row.report_deadline ? lastReportableDay(row.report_deadline, timeZone) : null,
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}

/**
 * Registered with the IRP: B2B supplies (the recipient has a GSTIN), exports and SEZ supplies —
 * of a supplier registered for GST. A document without GST (tax_type '', an unregistered entity's)
 * has no IRN (DESIGN §20).
 */
function isEinvoiceable(doc: { tax_type: string; igst_amount: number; customer_gstin: string | null | undefined }): boolean {
  if (doc.tax_type === '') return false;
  return Boolean(doc.customer_gstin) || classifyZeroRatedSupply(doc) !== null;
}

type QueuingEntity = { id: string; provider: string; aato_band: string; time_zone: string };

async function queueSubmission(ctx: Ctx, entity: QueuingEntity, type: EinvoiceDocumentType, documentId: string, documentDate: Date): Promise<void> {
  const id = newId();
  await insertPendingEinvoice(ctx.tx, {
    tenant_id: ctx.tenantId,
    id,
    entity_id: entity.id,
    document_type: type,
    document_id: documentId,
    status: 'pending',
    provider: entity.provider,
    errors: '[]',
    document: null,
    attempts: 0,
    report_deadline: reportDeadline(documentDate, entity.aato_band, entity.time_zone),
    report_alerted_days: null,
    created_at: ctx.now,
    updated_at: ctx.now,
  });
  await enqueueJob(ctx.tx, ctx.now, {
    kind: SUBMIT_JOB,
    tenantId: ctx.tenantId,
    payload: { document_type: type, document_id: documentId },
    uniqueKey: `einvoice:${ctx.tenantId}:${type}:${documentId}:submit`,
    // The job reschedules itself (RetryJobAt) on its own timetable; this only bounds crashes.
    maxAttempts: 12,
  });
}

type InvoiceObject = {
  id: string;
  entity_id: string;
  tax_type: string;
  igst_amount: number;
  customer_details: PartySnapshot | null;
  issued_at: string | null;
};
type CreditNoteObject = { id: string; entity_id: string | null; invoice_id: string | null; tax_type: string; igst_amount: number; issued_at: string | null };

/**
 * Listener on `invoice.finalized` and `credit_note.issued` (in the finalizing transaction, so the
 * submission is queued exactly when the document is issued). Which entities have e-invoicing on
 * is read once per batch of events, and only for documents that could need an IRN.
 */
export async function queueEinvoicesOfEvents(ctx: Ctx, events: EventPayload[]): Promise<void> {
  const invoices: InvoiceObject[] = [];
  const notes: CreditNoteObject[] = [];
  for (const event of events) {
    if (event.type === 'invoice.finalized') {
      const invoice = event.data.object as unknown as InvoiceObject;
      if (isEinvoiceable({ ...invoice, customer_gstin: invoice.customer_details?.gstin })) invoices.push(invoice);
    } else if (event.type === 'credit_note.issued') {
      const note = event.data.object as unknown as CreditNoteObject;
      if (note.invoice_id && note.entity_id && note.tax_type !== '') notes.push(note);
    }
  }
  if (invoices.length === 0 && notes.length === 0) return;
  const enabled = await entitiesWithEinvoicing(ctx.tx, ctx.tenantId, [...new Set([...invoices, ...notes].map((d) => d.entity_id!))]);
  if (enabled.size === 0) return;
  const providers = new Map<string, QueuingEntity>();
  for (const entityId of enabled) {
    const entity = await findEntity(ctx.tx, ctx.tenantId, entityId);
    providers.set(entityId, {
      id: entityId,
      provider: entity?.einvoicing_provider ?? 'sandbox',
      aato_band: entity?.aato_band ?? 'up_to_5_crore',
      time_zone: entity?.time_zone ?? 'Asia/Kolkata',
    });
  }
  const dated = (issuedAt: string | null) => (issuedAt ? new Date(issuedAt) : ctx.now);
  for (const invoice of invoices) {
    if (enabled.has(invoice.entity_id)) await queueSubmission(ctx, providers.get(invoice.entity_id)!, 'invoice', invoice.id, dated(invoice.issued_at));
  }
  for (const note of notes) {
    if (!enabled.has(note.entity_id!)) continue;
    const original = await getInvoice(ctx, note.invoice_id!);
    if (!isEinvoiceable({ ...note, customer_gstin: original.customer_details?.gstin })) continue;
    await queueSubmission(ctx, providers.get(note.entity_id!)!, 'credit_note', note.id, dated(note.issued_at));
  }
}

export const queueEinvoicesOnIssue = Object.assign((ctx: Ctx, event: EventPayload) => queueEinvoicesOfEvents(ctx, [event]), {
  batch: queueEinvoicesOfEvents,
});

/** `part` of `whole` of `value`, rounded half-up (0 when the whole is 0). */
function share(value: number, part: number, whole: number): number {
  return whole > 0 ? mulDivRoundHalfUp(value, part, whole) : 0;
}

/**
 * An invoice's lines in rupees. A foreign-currency invoice carries its INR values (taxable value
 * and taxes at the invoice's exchange rate, CGST Rules rule 34): those are what the IRP registers.
 */
function linesOfInvoice(invoice: Invoice, inr: boolean): IrpSource['lines'] {
  return invoice.lines.map((line) => {
    if (!inr) return { ...line, rate_bp: line.tax_rate_bp };
    const amount = line.inr_amount ?? 0;
    const [cgst, sgst, igst] = [line.inr_cgst_amount ?? 0, line.inr_sgst_amount ?? 0, line.inr_igst_amount ?? 0];
    return {
      description: line.description,
      quantity: line.quantity,
      unit_amount: line.quantity > 0 ? amount / line.quantity : amount,
      amount,
      hsn_code: line.hsn_code,
      rate_bp: line.tax_rate_bp,
      cgst_amount: cgst,
      sgst_amount: sgst,
      igst_amount: igst,
      total: amount + cgst + sgst + igst,
    };
  });
}

/**
 * A credit note's items: one per invoice line it credits (Rule 53(1A): each with that line's HSN,
 * rate and tax), in rupees for a foreign-currency invoice — each component the same share of the
 * invoice line's INR value as the note takes of its value in the invoice currency, so a note
 * crediting a whole line reverses exactly the rupees the invoice charged (the original invoice's
 * rate, not the day's). A note from before notes carried lines is one item (its HSN and split).
 */
export function linesOfCreditNote(note: CreditNote, invoice: Invoice, inr: boolean): IrpSource['lines'] {
  const description = note.reason ? `Credit: ${note.reason}` : `Credit against invoice ${invoice.number}`;
  const noteLines = note.lines ?? [];
  if (noteLines.length === 0) {
    const hsn = note.hsn_code || invoice.lines[0]?.hsn_code || '998314';
    const scale = (v: number, field: 'subtotal' | 'cgst_amount' | 'sgst_amount' | 'igst_amount') =>
      inr ? share((invoice[`inr_${field}`] as number | null) ?? 0, v, invoice[field]) : v;
    const amount = scale(note.subtotal, 'subtotal');
    const [cgst, sgst, igst] = [scale(note.cgst_amount, 'cgst_amount'), scale(note.sgst_amount, 'sgst_amount'), scale(note.igst_amount, 'igst_amount')];
    // The invoice's rate (a credit note keeps its invoice's rates): its line of that HSN, else the
    // rate in force on the invoice's date.
    const invoiceLine = invoice.lines.find((l) => l.hsn_code === hsn);
    const rateBp =
      note.subtotal > 0
        ? (invoiceLine?.tax_rate_bp ?? gstRateBasisPoints(hsn, null, undefined, invoice.issued_at ? new Date(invoice.issued_at) : undefined))
        : 0;
    return [
      {
        description,
        quantity: 1,
        unit_amount: amount,
        amount,
        hsn_code: hsn,
        rate_bp: rateBp,
        cgst_amount: cgst,
        sgst_amount: sgst,
        igst_amount: igst,
        total: amount + cgst + sgst + igst,
      },
    ];
  }
  const byId = new Map(invoice.lines.map((l) => [l.id, l]));
  return noteLines.map((nl) => {
    const il = byId.get(nl.invoice_line_id);
    const text = il ? `${description.slice(0, 200)} (${il.description})`.slice(0, 300) : description;
    let [amount, cgst, sgst, igst] = [nl.subtotal, nl.cgst_amount, nl.sgst_amount, nl.igst_amount];
    if (inr && il) {
      amount = share(il.inr_amount ?? 0, nl.subtotal, il.amount);
      cgst = share(il.inr_cgst_amount ?? 0, nl.cgst_amount, il.cgst_amount);
      sgst = share(il.inr_sgst_amount ?? 0, nl.sgst_amount, il.sgst_amount);
      igst = share(il.inr_igst_amount ?? 0, nl.igst_amount, il.igst_amount);
    }
    const quantity = il ? unitsCredited(il, nl.subtotal) : 1;
    return {
      description: text,
      quantity,
      unit_amount: amount / quantity,
      amount,
      hsn_code: nl.hsn_code,
      rate_bp: nl.tax_rate_bp,
      cgst_amount: cgst,
      sgst_amount: sgst,
      igst_amount: igst,
      total: amount + cgst + sgst + igst,
    };
  });
}

/**
 * How many units of an invoice line a credit takes back: a credit that is exactly k of the line's
 * units (k × its net value per unit, 1 ≤ k ≤ its quantity) is a return of k units — a goods return
 * of 3 units goes to the IRP as quantity 3, not 1. Any other amount (a price reduction, a part of a
 * unit) is one item of that value.
 */
function unitsCredited(line: { quantity: number; amount: number }, credited: number): number {
  if (line.quantity <= 1 || line.amount <= 0 || credited <= 0) return 1;
  const scaled = credited * line.quantity;
  if (!Number.isSafeInteger(scaled) || scaled % line.amount !== 0) return 1;
  const units = scaled / line.amount;
  return units <= line.quantity ? units : 1;
}

/** Totals of IRP lines (summed in paise, so ValDtls equals the sum of its items exactly). */
function totalsOf(lines: IrpSource['lines']): Pick<IrpSource, 'subtotal' | 'cgst_amount' | 'sgst_amount' | 'igst_amount' | 'total'> {
  const t = { subtotal: 0, cgst_amount: 0, sgst_amount: 0, igst_amount: 0, total: 0 };
  for (const l of lines) {
    t.subtotal += l.amount;
    t.cgst_amount += l.cgst_amount;
    t.sgst_amount += l.sgst_amount;
    t.igst_amount += l.igst_amount;
    t.total += l.total;
  }
  return t;
}

/** A document in a currency other than rupees needs the INR values its invoice determined. */
function inrProblem(invoice: Invoice): EinvoiceError[] {
  if (invoice.currency === 'INR' || invoice.inr_total !== null) return [];
  return [
    {
      code: 'document.exchange_rate',
      field: 'exchange_rate',
      message: `the ${invoice.currency} invoice ${invoice.number ?? invoice.id} has no INR values (no exchange rate): the IRP registers amounts in rupees`,
    },
  ];
}

/** Assembles the IRP source of a document from the issued records (frozen party snapshots). */
export async function irpSourceOf(ctx: ReadCtx, entity: EntityRow, type: EinvoiceDocumentType, documentId: string): Promise<IrpSource> {
  if (type === 'invoice') {
    const invoice = await getInvoice(ctx, documentId);
    const inr = invoice.currency !== 'INR' && invoice.inr_total !== null;
    return {
      type: 'INV',
      number: invoice.number ?? '',
      issued_at: new Date(invoice.issued_at ?? ctx.now),
      time_zone: entity.time_zone,
      currency: invoice.currency,
      tax_type: invoice.tax_type,
      place_of_supply: invoice.place_of_supply,
      supplier: invoice.supplier ?? partyOfEntity(entity),
      buyer: invoice.customer_details ?? (await partyOfCustomer(ctx, invoice.customer_id)),
      lines: linesOfInvoice(invoice, inr),
      subtotal: inr ? invoice.inr_subtotal! : invoice.subtotal,
      cgst_amount: inr ? invoice.inr_cgst_amount! : invoice.cgst_amount,
      sgst_amount: inr ? invoice.inr_sgst_amount! : invoice.sgst_amount,
      igst_amount: inr ? invoice.inr_igst_amount! : invoice.igst_amount,
      total: inr ? invoice.inr_total! : invoice.total,
      foreign: invoice.currency !== 'INR' ? { currency: invoice.currency, total: invoice.total, exchange_rate: invoice.exchange_rate } : null,
      problems: inrProblem(invoice),
      refund_claim: entity.export_refund_claim,
    };
  }
  const note = await getCreditNote(ctx, documentId);
  const invoice = await getInvoice(ctx, note.invoice_id!);
  const inr = invoice.currency !== 'INR' && invoice.inr_total !== null;
  const lines = linesOfCreditNote(note, invoice, inr);
  return {
    type: 'CRN',
    number: note.number ?? '',
    issued_at: new Date(note.issued_at ?? ctx.now),
    time_zone: entity.time_zone,
    currency: note.currency,
    tax_type: note.tax_type,
    place_of_supply: invoice.place_of_supply,
    supplier: invoice.supplier ?? partyOfEntity(entity),
    buyer: invoice.customer_details ?? (await partyOfCustomer(ctx, invoice.customer_id)),
    lines,
    ...totalsOf(lines),
    foreign: note.currency !== 'INR' ? { currency: note.currency, total: note.amount, exchange_rate: invoice.exchange_rate } : null,
    problems: inrProblem(invoice),
    refund_claim: entity.export_refund_claim,
    original: { number: invoice.number ?? '', issued_at: new Date(invoice.issued_at ?? ctx.now) },
  };
}

/** The IRP document of an issued invoice or credit note, as the submission job would build it. */
export async function irpDocumentOf(ctx: ReadCtx, type: EinvoiceDocumentType, documentId: string): Promise<IrpDocument> {
  const entityId = type === 'invoice' ? (await getInvoice(ctx, documentId)).entity_id : (await getCreditNote(ctx, documentId)).entity_id;
  const entity = await findEntity(ctx.tx, ctx.tenantId, entityId ?? '');
  if (!entity) throw errors.notFound('entity');
  return buildIrpDocument(await irpSourceOf(ctx, entity, type, documentId));
}

function partyOfEntity(entity: EntityRow): PartySnapshot {
  return {
    name: entity.name,
    legal_name: entity.legal_name,
    gstin: entity.gstin,
    state_code: entity.state_code,
    country_code: entity.country_code,
    address: entity.address ?? null,
  };
}

async function partyOfCustomer(ctx: ReadCtx, customerId: string): Promise<PartySnapshot> {
  const customer = await getCustomer(ctx, customerId);
  return {
    name: customer.name ?? customer.email,
    email: customer.email,
    gstin: customer.gstin,
    state_code: customerStateCode(customer),
    country_code: customerCountry(customer),
    address: customer.billing_address ?? null,
  };
}

function reportLimitMessage(row: EinvoiceRow, timeZone: string): string {
  return `the IRP accepts a document of an entity with turnover of ₹10 crore or more only within 30 days of its date; the last day for this one was ${lastReportableDay(row.report_deadline!, timeZone)}, so Kosh does not send it (the IRP would refuse it)`;
}

/** A submission after the IRP's 30-day limit: 409 `irn_reporting_limit_passed`, never sent. */
function assertReportable(row: EinvoiceRow, now: Date): void {
  if (row.report_deadline && now >= row.report_deadline) {
    throw errors.conflict(reportLimitMessage(row, 'Asia/Kolkata'), 'irn_reporting_limit_passed');
  }
}

/**
 * Builds and checks the document. A document that fails the schema is never sent: the record
 * turns `failed` with the schema's errors, and `einvoice.failed` is emitted.
 */
export async function prepareSubmission(ctx: Ctx, row: EinvoiceRow, entity: EntityRow): Promise<IrpDocument | null> {
  if (row.report_deadline && ctx.now >= row.report_deadline) {
    // Never sent to fail at the IRP: Kosh refuses it itself (decision 0363).
    await failEinvoice(ctx, row, [{ code: 'irp.reporting_limit', message: reportLimitMessage(row, entity.time_zone) }]);
    return null;
  }
  const source = await irpSourceOf(ctx, entity, row.document_type, row.document_id);
  const document = buildIrpDocument(source);
  const problems = [...(source.problems ?? []), ...validateIrpDocument(document)];
  if (problems.length > 0) {
    await failEinvoice(ctx, row, problems, document);
    return null;
  }
  return document;
}

export async function failEinvoice(ctx: Ctx, row: EinvoiceRow, problems: EinvoiceError[], document?: IrpDocument): Promise<EinvoiceRow> {
  const failed = await transitionEinvoice(ctx.tx, ctx.tenantId, row.id, 'fail', {
    errors: JSON.stringify(problems),
    ...(document ? { document: JSON.stringify(document) } : {}),
    attempts: row.attempts + 1,
    updated_at: ctx.now,
  });
  await emitEvent(ctx, 'einvoice.failed', toEinvoice(failed));
  return failed;
}

export async function recordRegistration(ctx: Ctx, row: EinvoiceRow, registration: IrpRegistration, document: IrpDocument): Promise<EinvoiceRow> {
  const generated = await transitionEinvoice(ctx.tx, ctx.tenantId, row.id, 'generate', {
    irn: registration.irn,
    ack_no: registration.ack_no,
    ack_date: registration.ack_date,
    signed_invoice: registration.signed_invoice,
    signed_qr_code: registration.signed_qr_code,
    document: JSON.stringify(document),
    errors: '[]',
    attempts: row.attempts + 1,
    generated_at: ctx.now,
    updated_at: ctx.now,
  });
  await emitEvent(ctx, 'einvoice.generated', toEinvoice(generated));
  return generated;
}

async function ensureDocument(ctx: ReadCtx, type: EinvoiceDocumentType, documentId: string): Promise<void> {
  // The document's own 404 (another tenant's id included) before the e-invoice's.
  if (type === 'invoice') await getInvoice(ctx, documentId);
  else await getCreditNote(ctx, documentId);
}

export async function getEinvoice(ctx: ReadCtx, type: EinvoiceDocumentType, documentId: string): Promise<Einvoice> {
  await ensureDocument(ctx, type, documentId);
  const row = await findEinvoiceOfDocument(ctx.tx, ctx.tenantId, type, documentId);
  if (!row) throw errors.notFound('einvoice');
  const entity = await findEntity(ctx.tx, ctx.tenantId, row.entity_id);
  return toEinvoice(row, entity?.time_zone);
}

/** The IRN records of several documents (PDFs, GST returns). */
export async function einvoicesOf(ctx: ReadCtx, type: EinvoiceDocumentType, documentIds: string[]): Promise<Map<string, Einvoice>> {
  const rows = await einvoicesOfDocuments(ctx.tx, ctx.tenantId, type, documentIds);
  return new Map(rows.map((r) => [r.document_id, toEinvoice(r)]));
}

/**
 * Cancels a generated IRN (reason codes 1 duplicate, 2 data entry mistake, 3 order cancelled,
 * 4 others) within 24 hours of generation. The record turns `canceled` in this transaction; the
 * IRP is told by a job (no network call inside a transaction).
 */
export async function cancelEinvoice(ctx: Ctx, type: EinvoiceDocumentType, documentId: string, reasonCode: number, remarks: string): Promise<Einvoice> {
  await ensureDocument(ctx, type, documentId);
  const row = await findEinvoiceOfDocument(ctx.tx, ctx.tenantId, type, documentId, true);
  if (!row || row.status !== 'generated') {
    throw errors.conflict(`the e-invoice is ${row?.status ?? 'not generated'}; only a generated IRN can be canceled`, 'einvoice_not_generated');
  }
  if (ctx.now.getTime() - row.generated_at!.getTime() > CANCEL_WINDOW_MS) {
    throw errors.conflict('an IRN can be canceled only within 24 hours of its generation; issue a credit note instead', 'einvoice_cancel_window_closed');
  }
  const canceled = await transitionEinvoice(ctx.tx, ctx.tenantId, row.id, 'cancel', {
    canceled_at: ctx.now,
    cancel_reason_code: reasonCode,
    cancel_remarks: remarks,
    updated_at: ctx.now,
  });
  await enqueueJob(ctx.tx, ctx.now, {
    kind: CANCEL_JOB,
    tenantId: ctx.tenantId,
    payload: { einvoice_id: row.id },
    uniqueKey: `einvoice:${ctx.tenantId}:${row.id}:cancel`,
  });
  await emitEvent(ctx, 'einvoice.canceled', toEinvoice(canceled));
  return toEinvoice(canceled);
}

/**
 * An invoice's IRN as a void sees it (locked): none, or its status and whether the IRP still
 * accepts its cancellation (24 hours from generation).
 */
export async function irnOfInvoiceForVoid(ctx: Ctx, invoiceId: string): Promise<{ status: EinvoiceRow['status']; cancelable: boolean } | null> {
  const row = await findEinvoiceOfDocument(ctx.tx, ctx.tenantId, 'invoice', invoiceId, true);
  if (!row) return null;
  return { status: row.status, cancelable: row.status === 'generated' && ctx.now.getTime() - row.generated_at!.getTime() <= CANCEL_WINDOW_MS };
}

/** The record of a document, locked (the retry and its checks run on the current row). */
export async function einvoiceOfDocumentForUpdate(ctx: Ctx, type: EinvoiceDocumentType, documentId: string): Promise<Einvoice | null> {
  await ensureDocument(ctx, type, documentId);
  const row = await findEinvoiceOfDocument(ctx.tx, ctx.tenantId, type, documentId, true);
  return row ? toEinvoice(row) : null;
}

/**
 * Resubmits a failed registration: the record turns `pending` again (attempts from zero, the
 * last errors kept until the next answer) and the submission job is queued; the job rebuilds the
 * document from the records as they are now. Any failure can be retried — schema errors and IRP
 * refusals once the data is fixed, an exhausted retry timetable or bad credentials as they are;
 * should the IRP have registered the document after all, its duplicate-IRN answer (2150) makes
 * the job fetch the existing IRN. A record that is not `failed` → 409.
 */
export async function retryEinvoice(ctx: Ctx, type: EinvoiceDocumentType, documentId: string): Promise<Einvoice> {
  await ensureDocument(ctx, type, documentId);
  const row = await findEinvoiceOfDocument(ctx.tx, ctx.tenantId, type, documentId, true);
  if (!row || row.status !== 'failed') {
    throw errors.conflict(`the e-invoice is ${row?.status ?? 'not requested'}; only a failed registration can be resubmitted`, 'einvoice_not_failed');
  }
  assertReportable(row, ctx.now);
  const pending = await transitionEinvoice(ctx.tx, ctx.tenantId, row.id, 'retry', { attempts: 0, updated_at: ctx.now });
  await enqueueJob(ctx.tx, ctx.now, {
    kind: SUBMIT_JOB,
    tenantId: ctx.tenantId,
    payload: { document_type: type, document_id: documentId },
    uniqueKey: `einvoice:${ctx.tenantId}:${type}:${documentId}:retry:${newId()}`,
    maxAttempts: 12,
  });
  return toEinvoice(pending);
}

const REPORT_DUE_LIMIT = 200;

/**
 * The tenant's documents still unreported (pending or failed) whose IRP limit (decision 0363) ends
 * within `days` days, soonest first, at most 200: what the dashboard's overview warns about before
 * the IRP would refuse them.
 */
export async function einvoicesDueForReport(ctx: ReadCtx, days: number): Promise<ReportDue[]> {
  const until = new Date(ctx.now.getTime() + (days + 1) * 86_400_000);
  const rows = await einvoicesNearReportLimit(ctx.tx, ctx.tenantId, ctx.now, until, REPORT_DUE_LIMIT);
  const zones = new Map<string, string>();
  for (const id of new Set(rows.map((r) => r.entity_id))) zones.set(id, (await findEntity(ctx.tx, ctx.tenantId, id))?.time_zone ?? 'Asia/Kolkata');
  const due: ReportDue[] = [];
  for (const row of rows) {
    const zone = zones.get(row.entity_id)!;
    const einvoice = toEinvoice(row, zone);
    const daysLeft = daysBetween(localDay(ctx.now, zone), einvoice.irn_report_by!);
    if (daysLeft > days) continue;
    const doc = row.document as { DocDtls?: { No?: string }; BuyerDtls?: { LglNm?: string } } | null;
    due.push({ einvoice, document_number: doc?.DocDtls?.No ?? null, buyer_name: doc?.BuyerDtls?.LglNm ?? null, days_left: daysLeft });
  }
  return due;
}

/** Whole days from one YYYY-MM-DD to another. */
function daysBetween(from: string, to: string): number {
  return Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000);
}
