// pdfkit loads on the first PDF, not at start-up.
import type PDFKitDocument from 'pdfkit';
import type { CreditNote } from '../credit-notes/index.js';
import type { Invoice, PartySnapshot } from '../invoices/index.js';
import { formatAmount, formatDate, formatRate } from './format.js';
import {
  BOLD,
  INK,
  MARGIN,
  MUTED,
  REGULAR,
  RULE,
  SHADE,
  cell,
  collectPdf,
  drawEinvoiceBlock,
  partyLines,
  partyBesideParticulars,
  pdfMoney,
  stateLabel,
  type PrintedEinvoice,
} from './invoice-pdf.js';
import { prepareUnicodeFonts, useUnicodeFonts } from './unicode-text.js';

export type CreditNoteDocument = {
  note: CreditNote;
  invoice: Invoice | null;
  supplier: PartySnapshot;
  customer: PartySnapshot;
  timeZone: string;
  einvoice: PrintedEinvoice | null;
};

type Row = { description: string; hsn: string; taxable: number; rateBp: number; cgst: number; sgst: number; igst: number; total: number };

/**
 * One row per credited invoice line (each at its own rate and HSN/SAC, Rule 53(1A)); a goodwill
 * note without lines is one row.
 */
function rowsOf(note: CreditNote): Row[] {
  if (note.lines && note.lines.length > 0) {
    return note.lines.map((l) => ({
      description: `${note.reason || 'Credit'} (invoice line ${l.position})`,
      hsn: l.hsn_code,
      taxable: l.subtotal,
      rateBp: l.tax_rate_bp,
      cgst: l.cgst_amount,
      sgst: l.sgst_amount,
      igst: l.igst_amount,
      total: l.amount,
    }));
  }
  const rate = (taxable: number, tax: number) => (taxable > 0 ? Math.round((tax * 10000) / taxable / 50) * 50 : 0);
  return [
    {
      description: note.reason || 'Credit',
      hsn: note.hsn_code,
      taxable: note.subtotal,
      rateBp: rate(note.subtotal, note.tax_amount),
      cgst: note.cgst_amount,
      sgst: note.sgst_amount,
      igst: note.igst_amount,
      total: note.amount,
    },
  ];
}

type NoteColumn = { label: string; width: number; align: 'left' | 'right'; value: (r: Row) => string };

/** The note's particulars, printed beside the customer: its number and date, the original invoice, the reason, place of supply and currency. */
function noteParticulars(note: CreditNote, invoice: Invoice | null, timeZone: string, gstApplies: boolean): [string, string][] {
  const particulars: [string, string][] = [
    ['Credit note number', note.number ?? 'Not issued'],
    ['Credit note date', note.issued_at ? formatDate(note.issued_at, timeZone) : 'Not issued'],
    ['Original invoice', invoice?.number ?? '—'],
    ['Original invoice date', invoice?.issued_at ? formatDate(invoice.issued_at, timeZone) : '—'],
    ['Reason', note.reason || '—'],
  ];
  if (gstApplies) particulars.push(['Place of supply', note.tax_type === 'export' ? 'Outside India (96)' : (stateLabel(invoice?.place_of_supply) ?? '—')]);
  particulars.push(['Currency', note.currency]);
  if (note.status === 'void') particulars.push(['Status', 'Void']);
  return particulars;
}

/** The table's columns: CGST and SGST on an intra-state note, else IGST; the description takes the width left. */
function noteColumns(note: CreditNote, width: number): NoteColumn[] {
  const money = (v: number) => formatAmount(v, note.currency);
  const columns: NoteColumn[] = [
    { label: 'Description', width: 0, align: 'left', value: (r) => r.description },
    { label: 'HSN/SAC', width: 50, align: 'left', value: (r) => r.hsn },
    { label: 'Taxable value', width: 70, align: 'right', value: (r) => money(r.taxable) },
    { label: 'Rate', width: 36, align: 'right', value: (r) => formatRate(r.rateBp) },
    ...(note.tax_type === 'intra_state'
      ? [
          { label: 'CGST', width: 60, align: 'right' as const, value: (r: Row) => money(r.cgst) },
          { label: 'SGST', width: 60, align: 'right' as const, value: (r: Row) => money(r.sgst) },
        ]
      : [{ label: 'IGST', width: 60, align: 'right' as const, value: (r: Row) => money(r.igst) }]),
    { label: 'Total', width: 70, align: 'right', value: (r) => money(r.total) },
  ];
  columns[0]!.width = width - columns.reduce((s, c) => s + c.width, 0);
  return columns;
}

/** The totals block: taxable value, the taxes credited and the total credit. */
function noteTotals(note: CreditNote): [string, string, boolean][] {
  const money = (v: number) => formatAmount(v, note.currency);
  const totals: [string, string, boolean][] = [['Taxable value', money(note.subtotal), false]];
  if (note.tax_type === 'intra_state') totals.push(['CGST', money(note.cgst_amount), false], ['SGST', money(note.sgst_amount), false]);
  else if (note.tax_type === 'inter_state') totals.push(['IGST', money(note.igst_amount), false]);
  totals.push(['Total credit', pdfMoney(note.amount, note.currency), true]);
  return totals;
}

/** The lines table, one row per credited line; answers where the page goes on. */
function drawNoteRows(doc: PDFKit.PDFDocument, note: CreditNote, columns: NoteColumn[], left: number, width: number, startY: number): number {
  let y = startY;
  doc.rect(left, y, width, 14).fill(SHADE);
  let x = left;
  for (const c of columns) {
    cell(doc, c.label, x + 2, y + 3, c.width - 4, { align: c.align, font: BOLD, size: 7.5 });
    x += c.width;
  }
  y += 14;
  for (const row of rowsOf(note)) {
    x = left;
    for (const c of columns) {
      cell(doc, c.value(row), x + 2, y + 3, c.width - 4, { align: c.align });
      x += c.width;
    }
    y += 16;
    doc
      .moveTo(left, y)
      .lineTo(left + width, y)
      .lineWidth(0.4)
      .strokeColor(RULE)
      .stroke();
  }
  return y;
}

/** A GST credit note (CGST Rules, rule 53): supplier, recipient, original invoice, reason, lines and tax. */
export async function renderCreditNotePdf(input: CreditNoteDocument): Promise<Buffer> {
  const { note, invoice, timeZone } = input;
  const gstApplies = note.tax_type !== '';
  const title = gstApplies ? 'Credit Note (GST)' : 'Credit Note';
  const stamp = new Date(note.issued_at ?? note.created_at);
  const supplier = partyLines(input.supplier, 'supplier', gstApplies);
  const customer = partyLines(input.customer, 'customer', gstApplies);
  const { default: PDFDocument } = (await import('pdfkit')) as { default: typeof PDFKitDocument };
  await prepareUnicodeFonts();
  const doc = useUnicodeFonts(
    new PDFDocument({
      size: 'A4',
      margin: MARGIN,
      info: { Title: `${title} ${note.number ?? ''}`, Author: supplier.name, Creator: 'Kosh', Producer: 'Kosh', CreationDate: stamp, ModDate: stamp },
    }),
  );
  const pdf = collectPdf(doc);
  const left = MARGIN;
  const width = doc.page.width - 2 * MARGIN;
  let y = MARGIN;
  doc.font(BOLD).fontSize(18).fillColor(INK).text(title, left, y, { width, align: 'right' });
  doc
    .font(BOLD)
    .fontSize(13)
    .text(supplier.name, left, y, { width: width * 0.6 });
  doc.font(REGULAR).fontSize(8.5);
  for (const l of supplier.lines) doc.text(l, left, doc.y, { width: width * 0.6 });
  y = Math.max(doc.y, MARGIN + 36) + 8;
  if (input.einvoice?.irn) y = await drawEinvoiceBlock(doc, input.einvoice, left, y, width, timeZone);
  doc
    .moveTo(left, y)
    .lineTo(left + width, y)
    .lineWidth(0.5)
    .strokeColor(RULE)
    .stroke();
  y += 8;

  const particulars = noteParticulars(note, invoice, timeZone, gstApplies);
  y = partyBesideParticulars(doc, { left, width, y }, { heading: 'CREDITED TO', ...customer }, particulars, 100) + 14;

  y = drawNoteRows(doc, note, noteColumns(note, width), left, width, y);
  y += 8;
  const totalsX = left + width - 250;
  for (const [label, value, strong] of noteTotals(note)) {
    cell(doc, label, totalsX, y, 140, { font: strong ? BOLD : REGULAR, size: 8.5 });
    cell(doc, value, totalsX + 140, y, 108, { font: strong ? BOLD : REGULAR, size: 8.5, align: 'right' });
    y += 13;
  }
  doc
    .font(REGULAR)
    .fontSize(8.5)
    .fillColor(INK)
    .text(`For ${supplier.name}`, left, y + 16, { width, align: 'right' });
  doc
    .fontSize(7.5)
    .fillColor(MUTED)
    .text('Authorised signatory', left, doc.y + 14, { width, align: 'right' });
  doc.end();
  return pdf;
}
