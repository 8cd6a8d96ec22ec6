import type { ReadCtx } from '../../platform/context.js';
import { errors } from '../../platform/errors.js';
import { findEntity, type EntityRow } from '../entities/index.js';
import { filedReturn } from '../periods/index.js';
import { gstRateBasisPoints, localDate, returnPeriodBounds } from '../tax/index.js';
import {
  b2csSummary,
  creditNotesOfPeriod,
  documentSeries,
  invoiceHsnSummary,
  invoiceRatePage,
  listedInvoiceRates,
  type CreditNoteRow,
  type HsnRow,
  type Keyset,
} from './gst-returns.repository.js';
import { carryFromJson, countsInReturn, Gstr1Builder, GSTR1_FORMAT_VERSION, rupees, type Table31Carry } from './gstr1.js';
import { advanceSections, advancesNetOfAdjustments, voucherSeries } from './gstr1-advances.js';
import { amendmentSections, applyAmendments, changedDocuments, gstr1aSections, listedDocuments } from './amendments.js';
import type { Gstr1, Gstr1a, Gstr1Amendments, Gstr3b } from './gst-returns.schemas.js';

/** Invoices read per keyset page: bounded memory per round trip, few round trips. */
const PAGE = 5_000;

export const CSV_HEADER = [
  'section',
  'recipient_gstin',
  'document_number',
  'document_date',
  'place_of_supply',
  'rate',
  'taxable_value',
  'igst',
  'cgst',
  'sgst',
  'document_value',
];

/**
 * A return period `MMYYYY` of the entity: not in the future (in the entity's time zone), and the
 * entity registered for GST.
 */
async function resolvePeriod(ctx: ReadCtx, entityId: string, period: string): Promise<{ entity: EntityRow & { gstin: string }; from: Date; to: Date }> {
  const entity = await findEntity(ctx.tx, ctx.tenantId, entityId);
  if (!entity) throw errors.notFound('entity');
  const month = Number(period.slice(0, 2));
  const year = Number(period.slice(2));
  const today = localDate(ctx.now, entity.time_zone);
  if (year > today.year || (year === today.year && month > today.month)) throw errors.invalidField('period', 'is in the future');
  // Not registered for GST (DESIGN §20): it charged no GST, so it has no return to file. A 409
  // (the entity's state), not an empty return that could be mistaken for a nil filing.
  if (!entity.gstin) {
    throw errors.conflict('the entity has no GSTIN: it is not registered for GST, so it has no GST returns', 'entity_not_gst_registered');
  }
  return { entity: entity as EntityRow & { gstin: string }, ...returnPeriodBounds({ month, year }, entity.time_zone) };
}

/** A credited line's own rate; a note without lines: its HSN's rate (0 for an export under LUT). */
function rateOfNote(row: CreditNoteRow): number {
  if (row.rate_bp !== null) return row.rate_bp;
  return row.tax_type === 'export' && row.igst_amount === 0 ? 0 : rateOfHsn(row.hsn_code, row.invoice_issued_at);
}

/** The rate of the note's invoice: the one in force on the invoice's date (a note keeps its invoice's rates). */
function rateOfHsn(hsn: string, invoiceDate: Date | null): number {
  try {
    return gstRateBasisPoints(hsn, null, undefined, invoiceDate ?? undefined);
  } catch {
    return 1800;
  }
}

/**
 * Builds the month. The JSON return and 3B: set-based SQL per section (B2CS, doc_issue and HSN
 * summed in SQL; B2B, B2CL and exports one row per invoice and rate from one join). The CSV:
 * every invoice through keyset pages. Credit notes per HSN and rate from SQL.
 */
export async function buildGstr1(ctx: ReadCtx, entityId: string, period: string, options: { csv?: boolean } = {}): Promise<Gstr1Build> {
  // One snapshot for every page: a return read while invoices are being issued is still the
  // month as of one instant. A read outside a transaction (a route's pool) opens one.
  if (!ctx.tx.isTransaction) {
    return ctx.tx
      .transaction()
      .setIsolationLevel('repeatable read')
      .setAccessMode('read only')
      .execute((tx) => buildGstr1({ ...ctx, tx }, entityId, period, options));
  }
  const { entity, from, to } = await resolvePeriod(ctx, entityId, period);
  const builder = new Gstr1Builder(entity.time_zone, options);
  if (options.csv) {
    // CSV lists every document (B2CS ones too): invoices stream through keyset pages.
    let after: Keyset = null;
    for (;;) {
      const rows = await invoiceRatePage(ctx.tx, ctx.tenantId, entity.id, from, to, after, PAGE);
      if (rows.length === 0) break;
      // The SQL pages whole invoices (LIMIT applies before the join), so the last row closes its invoice.
      builder.addInvoiceRows(rows);
      const last = rows[rows.length - 1]!;
      after = { issued_at: last.issued_at, id: last.id };
      if (new Set(rows.map((r) => r.id)).size < PAGE) break;
    }
  } else {
    // The return itself, set-based: one aggregation per section. B2CS and doc_issue come summed
    // from SQL; only the documents GSTR-1 lists one by one (B2B, B2CL, exports) come as rows.
    builder.addSeries('invoice', await documentSeries(ctx.tx, 'invoices', ctx.tenantId, entity.id, from, to));
    builder.addB2csSummary(await b2csSummary(ctx.tx, ctx.tenantId, entity.id, from, to));
    builder.addInvoiceRows(await listedInvoiceRates(ctx.tx, ctx.tenantId, entity.id, from, to), false);
  }
  builder.addSeries('receipt_voucher', await voucherSeries(ctx.tx, 'receipt', ctx.tenantId, entity.id, from, to));
  builder.addSeries('refund_voucher', await voucherSeries(ctx.tx, 'refund', ctx.tenantId, entity.id, from, to));
  const notes = await creditNotesOfPeriod(ctx.tx, ctx.tenantId, entity.id, from, to);
  builder.addCreditNotes(notes, rateOfNote);
  const credits = new Map<string, HsnRow>();
  for (const n of notes) {
    if (!countsInReturn(n)) continue;
    const rate = rateOfNote(n);
    const b2b = Boolean(n.ctin) && n.tax_type !== 'export';
    const key = `${b2b}|${n.hsn_code}|${rate}`;
    const entry = credits.get(key) ?? { b2b, hsn_code: n.hsn_code, rate_bp: rate, qty: 0, txval: 0, iamt: 0, camt: 0, samt: 0 };
    entry.txval += n.subtotal;
    entry.iamt += n.igst_amount;
    entry.camt += n.cgst_amount;
    entry.samt += n.sgst_amount;
    credits.set(key, entry);
  }
  const hsnCredits = [...credits.values()];
  const hsn = await invoiceHsnSummary(ctx.tx, ctx.tenantId, entity.id, from, to);
  return { entity, builder, hsn, hsnCredits };
}

export type Gstr1Build = { entity: EntityRow & { gstin: string }; builder: Gstr1Builder; hsn: HsnRow[]; hsnCredits: HsnRow[] };

/** `MMYYYY` → the period's `YYYY-MM`. */
const monthOf = (period: string) => `${period.slice(2)}-${period.slice(0, 2)}`;

/** A return marked filed answers the figures stored at filing: what was filed never changes (DESIGN §18). */
export async function getGstr1(ctx: ReadCtx, entityId: string, period: string): Promise<Gstr1> {
  const filed = await filedReturn(ctx, entityId, monthOf(period), 'gstr1');
  if (filed) return filed as Gstr1;
  if (!ctx.tx.isTransaction) {
    return ctx.tx
      .transaction()
      .setIsolationLevel('repeatable read')
      .setAccessMode('read only')
      .execute((tx) => getGstr1({ ...ctx, tx }, entityId, period));
  }
  const { entity, builder, hsn, hsnCredits } = await buildGstr1(ctx, entityId, period);
  const json: Gstr1 = { ...builder.toJson(entity.gstin, period, hsn, hsnCredits), ...(await advancesOfPeriod(ctx, entityId, period)) };
  // Amendment tables only when they have rows (the offline tool writes none for an empty one).
  const amendments = await amendmentsFor(ctx, entity, period);
  return Object.assign(json, Object.fromEntries(Object.entries(amendments).filter(([, rows]) => rows.length > 0)) as Partial<Gstr1Amendments>);
}

/** Tables 11A/11B (gstr1-advances.ts) of the month. */
async function advancesOfPeriod(ctx: ReadCtx, entityId: string, period: string) {
  const { entity, from, to } = await resolvePeriod(ctx, entityId, period);
  return advanceSections(ctx.tx, ctx.tenantId, entity.id, from, to);
}

/** A month's listed documents as they are now (a fresh build, whatever was filed). */
async function currentDocuments(ctx: ReadCtx, entityId: string, period: string) {
  const { entity, builder, hsn, hsnCredits } = await buildGstr1(ctx, entityId, period);
  return listedDocuments(builder.toJson(entity.gstin, period, hsn, hsnCredits));
}

/** Amendments look back this many filed months (s.37(3): corrections until 30 November of the next year). */
const AMENDMENT_LOOKBACK = 20;

/**
 * The amendment tables of an unfiled GSTR-1 (decisions 0365, 0610): for each earlier month in the
 * run of filed GSTR-1s just before it whose GSTR-3B is filed too (GSTR-1A closed), the documents
 * (and B2CS places of supply) that now read differently from what was filed — the month's filed
 * return with the amendments the later filed returns declared.
 */
async function amendmentsFor(ctx: ReadCtx, entity: EntityRow & { gstin: string }, period: string): Promise<Gstr1Amendments> {
  const filedAfter: Record<string, unknown>[] = [];
  const changed: ReturnType<typeof changedDocuments> = [];
  let p = period;
  for (let i = 0; i < AMENDMENT_LOOKBACK; i++) {
    p = previousPeriod(p);
    if (monthOf(p) < monthOf(periodOfCreation(entity))) break;
    const filed = (await filedReturn(ctx, entity.id, monthOf(p), 'gstr1')) as Record<string, unknown> | null;
    if (!filed) break;
    if (await filedReturn(ctx, entity.id, monthOf(p), 'gstr3b')) {
      const known = listedDocuments(filed);
      // The later filed returns' amendments, oldest first.
      for (const later of [...filedAfter].reverse()) applyAmendments(known, later, p);
      const month = p;
      changed.push(...changedDocuments(known, await currentDocuments(ctx, entity.id, p)).map((d) => ({ ...d, period: month })));
    }
    filedAfter.push(filed);
  }
  return amendmentSections(changed);
}

/**
 * GSTR-1A of a month (DESIGN §25, decision 0365): after its GSTR-1 is marked filed and until its
 * GSTR-3B is, the documents that now read differently from the filed GSTR-1 (or were missed),
 * as they now are. 409 before the GSTR-1 is filed (correct GSTR-1 itself) and after the GSTR-3B
 * is (the next GSTR-1's amendment sections carry the correction).
 */
export async function getGstr1a(ctx: ReadCtx, entityId: string, period: string): Promise<Gstr1a> {
  if (!ctx.tx.isTransaction) {
    return ctx.tx
      .transaction()
      .setIsolationLevel('repeatable read')
      .setAccessMode('read only')
      .execute((tx) => getGstr1a({ ...ctx, tx }, entityId, period));
  }
  const { entity } = await resolvePeriod(ctx, entityId, period);
  const filed = (await filedReturn(ctx, entity.id, monthOf(period), 'gstr1')) as Record<string, unknown> | null;
  if (!filed) {
    throw errors.conflict(`the GSTR-1 of ${period} is not marked filed: its corrections go into GSTR-1 itself`, 'gstr1_not_filed');
  }
  if (await filedReturn(ctx, entity.id, monthOf(period), 'gstr3b')) {
    throw errors.conflict(
      `the GSTR-3B of ${period} is filed, which closes GSTR-1A: corrections appear in the next GSTR-1's amendment tables (b2ba, b2cla, b2csa, expa, cdnra, cdnura)`,
      'gstr1a_closed',
    );
  }
  const changed = changedDocuments(listedDocuments(filed), await currentDocuments(ctx, entity.id, period));
  return { gstin: entity.gstin, fp: period, version: GSTR1_FORMAT_VERSION, ...gstr1aSections(changed) };
}

function csvLine(cells: readonly string[]): string {
  return cells.map((c) => (/[",\n]/.test(c) ? `"${c.replace(/"/g, '""')}"` : c)).join(',');
}

/** GSTR-1 as CSV for accountants: one row per document and rate (credit notes negative in b2cs). */
export async function getGstr1Csv(ctx: ReadCtx, entityId: string, period: string): Promise<string> {
  const { builder } = await buildGstr1(ctx, entityId, period, { csv: true });
  return [CSV_HEADER, ...builder.csv!].map(csvLine).join('\n') + '\n';
}

/** How many unfiled months back a 3B looks for a carried reduction (a year). */
const CARRY_LOOKBACK = 12;

const previousPeriod = (period: string) => {
  const month = Number(period.slice(0, 2));
  const year = Number(period.slice(2));
  return month === 1 ? `12${year - 1}` : `${String(month - 1).padStart(2, '0')}${year}`;
};

/**
 * The reduction the month before `period` carried forward (decision 0362): a filed 3B's stored
 * carry; an unfiled month's computed from its own figures and its predecessor's carry, looking
 * back at most a year of unfiled months.
 */
async function carryInto(ctx: ReadCtx, entity: EntityRow & { gstin: string }, period: string, depth = 0): Promise<Table31Carry> {
  if (depth >= CARRY_LOOKBACK) return {};
  const before = previousPeriod(period);
  if (monthOf(before) < monthOf(periodOfCreation(entity))) return {};
  const filed = await filedReturn(ctx, entity.id, monthOf(before), 'gstr3b');
  if (filed) return carryFromJson(filed);
  const { builder } = await buildGstr1(ctx, entity.id, before);
  return builder.table31Net(await carryInto(ctx, entity, before, depth + 1)).carry;
}

/** `MMYYYY` of the entity's creation (no return before it). */
function periodOfCreation(entity: EntityRow): string {
  const d = localDate(entity.created_at, entity.time_zone);
  return `${String(d.month).padStart(2, '0')}${d.year}`;
}

export async function getGstr3b(ctx: ReadCtx, entityId: string, period: string): Promise<Gstr3b> {
  const filed = await filedReturn(ctx, entityId, monthOf(period), 'gstr3b');
  if (filed) return filed as Gstr3b;
  if (!ctx.tx.isTransaction) {
    return ctx.tx
      .transaction()
      .setIsolationLevel('repeatable read')
      .setAccessMode('read only')
      .execute((tx) => getGstr3b({ ...ctx, tx }, entityId, period));
  }
  const { entity, builder } = await buildGstr1(ctx, entityId, period);
  const table = builder.gstr3b(entity.gstin, period, await carryInto(ctx, entity, period)) as Gstr3b;
  // 3.1(a) includes the tax on advances of the month net of the advances adjusted (table 11).
  const net = advancesNetOfAdjustments(await advancesOfPeriod(ctx, entityId, period));
  const det = table.sup_details.osup_det;
  const plus = (a: number, b: number) => rupees(Math.round(a * 100) + b);
  table.sup_details.osup_det = {
    ...det,
    txval: plus(det.txval, net.ad_amt),
    iamt: plus(det.iamt, net.iamt),
    camt: plus(det.camt, net.camt),
    samt: plus(det.samt, net.samt),
  };
  return table;
}

/** GSTR-3B table 3.1 rows (a) to (e), in the form's order. */
const GSTR3B_ROWS = ['osup_det', 'osup_zero', 'osup_nil_exmp', 'isup_rev', 'osup_nongst'] as const;

export async function getGstr3bCsv(ctx: ReadCtx, entityId: string, period: string): Promise<string> {
  const table = (await getGstr3b(ctx, entityId, period)) as { sup_details: Record<string, Record<string, number>> };
  // Rows in the form's order (3.1 (a) to (e)), whatever order the stored figures list them in.
  const rows = GSTR3B_ROWS.filter((row) => table.sup_details[row]).map((row) => [
    row,
    ...['txval', 'iamt', 'camt', 'samt', 'csamt'].map((k) => (table.sup_details[row]![k] ?? 0).toFixed(2)),
  ]);
  return [['table_3_1_row', 'taxable_value', 'igst', 'cgst', 'sgst', 'cess'], ...rows].map(csvLine).join('\n') + '\n';
}
