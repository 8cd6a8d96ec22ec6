// pdfkit loads on the first PDF, not at start-up.
import type PDFKitDocument from 'pdfkit';
import type { Invoice, PartySnapshot } from '../invoices/index.js';
import { gstState } from '../tax/index.js';
import { formatAmount, formatDate, formatMoney, formatRate, rupeesInWords } from './format.js';
import { prepareUnicodeFonts, useUnicodeFonts } from './unicode-text.js';

/**
 * The invoice as a PDF (A4): a GST tax invoice with the particulars of CGST Rules, rule 46 —
 * supplier's name, address and GSTIN; number and date; recipient's name, address, GSTIN or
 * "Unregistered", state name and code; place of supply; HSN/SAC, quantity, value, taxable value,
 * and rate and amount of each tax per line; whether tax is payable on reverse charge. Parties
 * come from the snapshots frozen at finalization, so a reprint in a year shows what was issued.
 *
 * Text is set in embedded Noto Sans faces (Latin, Devanagari, Tamil; see unicode-text.ts), so any
 * customer name and the ₹ sign print as written. An e-invoiced document carries its IRN,
 * acknowledgement and the IRP's signed QR code. Dates are in the issuing entity's time zone.
 */

type Doc = PDFKit.PDFDocument;
type Line = Invoice['lines'][number];

export const MARGIN = 36;
const FOOTER_SPACE = 28;
export const REGULAR = 'regular';
export const BOLD = 'bold';
export const INK = '#111111';
export const MUTED = '#555555';
export const RULE = '#bbbbbb';
export const SHADE = '#eeeeee';

export type InvoiceHeading = { title: string; endorsement?: string };

/** The IRP registration printed on an e-invoiced document. */
export type PrintedEinvoice = { irn: string; ack_no: string | null; ack_date: string | null; signed_qr_code: string | null; status: string };

export type RenderOptions = { timeZone?: string; einvoice?: PrintedEinvoice | null };

/** ₹ for rupees (the embedded fonts have it); the ISO code for other currencies. */
export function pdfMoney(minor: number, currency: string): string {
  return currency === 'INR' ? `₹ ${formatAmount(minor, currency)}` : formatMoney(minor, currency);
}

/**
 * The IRN block: IRN, Ack No and date, and the signed QR code as a real QR image (the IRP's JWT,
 * which any e-invoice QR verifier app reads). Returns the y below it.
 */
export async function drawEinvoiceBlock(
  doc: PDFKit.PDFDocument,
  einvoice: PrintedEinvoice,
  left: number,
  y: number,
  width: number,
  timeZone: string,
): Promise<number> {
  const qrSize = 92;
  const height = einvoice.signed_qr_code ? qrSize + 8 : 44;
  doc.rect(left, y, width, height).lineWidth(0.6).strokeColor(RULE).stroke();
  if (einvoice.signed_qr_code) {
    // qrcode (and pngjs) load with the first e-invoice PDF, not at start-up.
    const { default: QRCode } = await import('qrcode');
    const png = await QRCode.toBuffer(einvoice.signed_qr_code, { errorCorrectionLevel: 'L', margin: 1, width: 368 });
    doc.image(png, left + width - qrSize - 4, y + 4, { width: qrSize, height: qrSize });
  }
  const textWidth = width - (einvoice.signed_qr_code ? qrSize + 16 : 12);
  doc
    .font(BOLD)
    .fontSize(8)
    .fillColor(INK)
    .text('E-invoice (IRN registered)', left + 6, y + 6, { width: textWidth });
  doc
    .font(REGULAR)
    .fontSize(7.5)
    .text(`IRN: ${einvoice.irn}`, left + 6, doc.y + 2, { width: textWidth });
  const ack = `Ack No: ${einvoice.ack_no ?? '—'}    Ack Date: ${einvoice.ack_date ? formatDate(einvoice.ack_date, timeZone) : '—'}`;
  doc.text(ack, left + 6, doc.y + 2, { width: textWidth });
  if (einvoice.status === 'canceled')
    doc
      .font(BOLD)
      .fillColor('#cc0000')
      .text('IRN CANCELLED', left + 6, doc.y + 2, { width: textWidth })
      .fillColor(INK);
  return y + height + 8;
}

/**
 * "Tax Invoice" under GST, "Invoice" where no GST applies, "Export Invoice" for exports; exports
 * and SEZ supplies carry the rule 46 endorsement, under LUT or on payment of IGST.
 */
export function invoiceHeading(invoice: Pick<Invoice, 'tax_type' | 'lut'>): InvoiceHeading {
  if (invoice.tax_type === '') return { title: 'Invoice' };
  const how = invoice.lut ? 'under Letter of Undertaking without payment of integrated tax (IGST)' : 'on payment of integrated tax (IGST)';
  if (invoice.tax_type === 'export') return { title: 'Export Invoice', endorsement: `Supply meant for export ${how}` };
  if (invoice.tax_type === 'sez') return { title: 'Tax Invoice', endorsement: `Supply meant for SEZ unit or SEZ developer for authorised operations ${how}` };
  return { title: 'Tax Invoice' };
}

/** IGST is levied on inter-state supplies, and on exports and SEZ supplies made without LUT. */
function leviesIgst(invoice: Pick<Invoice, 'tax_type' | 'lut'>): boolean {
  return invoice.tax_type === 'inter_state' || ((invoice.tax_type === 'export' || invoice.tax_type === 'sez') && !invoice.lut);
}

/** The file name a mail client or browser shows: the invoice number, "/" (allowed in GST numbers) made safe. */
export function invoiceFileName(invoice: Pick<Invoice, 'number' | 'id'>): string {
  return `${(invoice.number ?? `draft-${invoice.id}`).replace(/[^A-Za-z0-9._-]/g, '-')}.pdf`;
}

export function stateLabel(code: string | null | undefined): string | undefined {
  if (!code) return undefined;
  const state = gstState(code);
  return state ? `${state.name} (${code})` : code;
}

const regionNames = new Intl.DisplayNames(['en'], { type: 'region' });

function countryName(code: string): string {
  try {
    return regionNames.of(code.toUpperCase()) ?? code;
  } catch {
    return code;
  }
}

function isIndian(party: PartySnapshot): boolean {
  return (party.country_code ?? party.address?.country ?? 'IN').toUpperCase() === 'IN';
}

function addressLines(party: PartySnapshot): string[] {
  const a = party.address ?? {};
  const india = isIndian(party);
  const region = india ? gstState(party.state_code ?? a.state_code)?.name : a.state_code;
  const country = india ? 'India' : countryName(party.country_code ?? a.country ?? '');
  return [a.line1, a.line2, [a.city, a.postal_code].filter(Boolean).join(' '), [region, country].filter(Boolean).join(', ')].filter((l): l is string =>
    Boolean(l && l.trim()),
  );
}

export function partyLines(party: PartySnapshot | null, role: 'supplier' | 'customer', gstApplies: boolean): { name: string; lines: string[] } {
  if (!party) return { name: '—', lines: [] };
  const name = (role === 'supplier' ? party.legal_name : null) || party.name;
  const lines: string[] = [];
  if (role === 'supplier' && party.legal_name && party.name !== party.legal_name) lines.push(`Trade name: ${party.name}`);
  lines.push(...addressLines(party));
  const india = isIndian(party);
  if (gstApplies && india) {
    lines.push(`GSTIN: ${party.gstin ?? (role === 'customer' ? 'Unregistered' : 'not registered')}`);
    const state = stateLabel(party.state_code);
    if (state) lines.push(`State: ${state}`);
  } else if (party.gstin) {
    lines.push(`GSTIN: ${party.gstin}`);
  }
  if (role === 'customer' && party.email) lines.push(`Email: ${party.email}`);
  return { name, lines };
}

function placeOfSupply(invoice: Invoice): string | undefined {
  if (invoice.tax_type === 'export') return 'Outside India (96)';
  if (invoice.tax_type === '') return undefined;
  return stateLabel(invoice.place_of_supply) ?? '—';
}

/** Writes one line of text at a fixed place, shrinking the font so it fits the width (never wraps). */
export function cell(
  doc: Doc,
  text: string,
  x: number,
  y: number,
  width: number,
  options: { align?: 'left' | 'right' | 'center'; font?: string; size?: number; color?: string } = {},
): void {
  const font = options.font ?? REGULAR;
  let size = options.size ?? 8;
  doc.font(font).fontSize(size);
  while (size > 5 && doc.widthOfString(text) > width) {
    size -= 0.5;
    doc.fontSize(size);
  }
  doc.fillColor(options.color ?? INK).text(text, x, y, { width, align: options.align ?? 'left', lineBreak: false });
}

/**
 * The buyer under its heading in the left column beside the document's particulars (label, value)
 * in the right, from `y`; answers the y below the taller of the two.
 */
export function partyBesideParticulars(
  doc: Doc,
  at: { left: number; width: number; y: number },
  party: { heading: string; name: string; lines: string[] },
  particulars: [string, string][],
  labelWidth: number,
): number {
  const columnWidth = at.width / 2 - 8;
  const rightX = at.left + at.width / 2 + 8;
  let ry = at.y;
  for (const [label, value] of particulars) {
    cell(doc, label, rightX, ry, labelWidth, { color: MUTED, size: 8.5 });
    doc
      .font(BOLD)
      .fontSize(8.5)
      .fillColor(INK)
      .text(value, rightX + labelWidth + 2, ry, { width: columnWidth - labelWidth - 2 });
    ry = Math.max(doc.y, ry + 12) + 1;
  }
  doc.font(BOLD).fontSize(7.5).fillColor(MUTED).text(party.heading, at.left, at.y, { width: columnWidth });
  doc
    .font(BOLD)
    .fontSize(10)
    .fillColor(INK)
    .text(party.name, at.left, doc.y + 2, { width: columnWidth });
  doc.font(REGULAR).fontSize(8.5);
  for (const l of party.lines) doc.text(l, at.left, doc.y, { width: columnWidth });
  return Math.max(doc.y, ry);
}

type Column = { key: string; label: string; group?: string; width: number; align: 'left' | 'right' | 'center'; value: (line: Line, index: number) => string };

function columnsFor(invoice: Invoice, contentWidth: number): Column[] {
  const money = (v: number) => formatAmount(v, invoice.currency);
  const fixed: Column[] = [
    { key: 'no', label: '#', width: 16, align: 'left', value: (_l, i) => String(i + 1) },
    { key: 'description', label: 'Description', width: 0, align: 'left', value: (l) => l.description },
    { key: 'hsn', label: 'HSN/SAC', width: 44, align: 'left', value: (l) => l.hsn_code },
    { key: 'qty', label: 'Qty', width: 30, align: 'right', value: (l) => String(l.quantity) },
    { key: 'unit', label: 'Unit price', width: 58, align: 'right', value: (l) => money(l.unit_amount) },
    // A discount shown on the invoice reduces the value of supply: its own column, before the taxable value.
    ...(invoice.discount_amount > 0
      ? [
          {
            key: 'discount',
            label: 'Discount',
            width: 54,
            align: 'right' as const,
            value: (l: Line) => (l.discount_amount ? `-${money(l.discount_amount)}` : ''),
          },
        ]
      : []),
    { key: 'taxable', label: 'Taxable value', width: 62, align: 'right', value: (l) => money(l.amount) },
  ];
  const tax = (group: string, share: number, amount: (l: Line) => number): Column[] => [
    { key: `${group}-rate`, label: 'Rate', group, width: 32, align: 'right', value: (l) => formatRate(l.tax_rate_bp * share) },
    { key: `${group}-amount`, label: 'Amount', group, width: 54, align: 'right', value: (l) => money(amount(l)) },
  ];
  // Only the taxes the invoice's regime levies get columns; an IGST column of zeros on an
  // intra-state invoice would crowd the description and say nothing.
  if (invoice.tax_type === 'intra_state') {
    fixed.push(...tax('CGST', 0.5, (l) => l.cgst_amount), ...tax(invoice.utgst ? 'UTGST' : 'SGST', 0.5, (l) => l.sgst_amount));
  } else if (leviesIgst(invoice)) {
    fixed.push(...tax('IGST', 1, (l) => l.igst_amount));
  }
  const used = fixed.reduce((s, c) => s + c.width, 0);
  fixed[1]!.width = contentWidth - used;
  return fixed;
}

function lineDescription(line: Line, timeZone: string): string {
  if (!line.period_start || !line.period_end) return line.description;
  return `${line.description}\nPeriod: ${formatDate(line.period_start, timeZone)} – ${formatDate(line.period_end, timeZone)}`;
}

function drawTableHeader(doc: Doc, columns: Column[], x0: number, y: number, width: number): number {
  const grouped = columns.some((c) => c.group);
  const height = grouped ? 24 : 14;
  doc.rect(x0, y, width, height).fill(SHADE);
  let x = x0;
  for (let i = 0; i < columns.length; i++) {
    const c = columns[i]!;
    if (c.group) {
      if (columns[i - 1]?.group !== c.group) {
        const span = columns.filter((o) => o.group === c.group).reduce((s, o) => s + o.width, 0);
        cell(doc, c.group, x + 2, y + 3, span - 4, { align: 'center', font: BOLD, size: 7.5 });
      }
      cell(doc, c.label, x + 2, y + 14, c.width - 4, { align: c.align, font: BOLD, size: 7 });
    } else {
      cell(doc, c.label, x + 2, y + (grouped ? 8 : 3), c.width - 4, { align: c.align, font: BOLD, size: 7.5 });
    }
    x += c.width;
  }
  return y + height;
}

export function collectPdf(doc: Doc): Promise<Buffer> {
  const chunks: Buffer[] = [];
  return new Promise((resolve, reject) => {
    doc.on('data', (chunk: Buffer) => chunks.push(chunk));
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });
}

type Box = { left: number; width: number };
type Total = { label: string; value: string; strong?: boolean };

/** The invoice's particulars, printed beside the customer. */
function invoiceParticulars(invoice: Invoice, timeZone: string, gstApplies: boolean, foreign: boolean): [string, string][] {
  const particulars: [string, string][] = [
    ['Invoice number', invoice.number ?? 'Draft (not yet numbered)'],
    ['Invoice date', invoice.issued_at ? formatDate(invoice.issued_at, timeZone) : 'Not issued'],
    ['Due date', formatDate(invoice.due_date, timeZone)],
  ];
  const supply = placeOfSupply(invoice);
  if (supply) particulars.push(['Place of supply', supply]);
  if (gstApplies) particulars.push(['Tax payable on reverse charge', 'No']);
  particulars.push(['Currency', invoice.currency]);
  if (foreign) particulars.push(['Exchange rate', `1 ${invoice.currency} = INR ${invoice.exchange_rate}`]);
  if (invoice.status === 'paid') particulars.push(['Status', `Paid${invoice.paid_at ? ` on ${formatDate(invoice.paid_at, timeZone)}` : ''}`]);
  if (invoice.status === 'void') particulars.push(['Status', `Void${invoice.voided_at ? ` since ${formatDate(invoice.voided_at, timeZone)}` : ''}`]);
  return particulars;
}

/** The totals block: taxable value, the taxes levied, total, what was paid, withheld or credited, and what is due. */
function invoiceTotals(invoice: Invoice, foreign: boolean): Total[] {
  const money = (v: number) => formatAmount(v, invoice.currency);
  const totals: Total[] = [{ label: 'Taxable value', value: money(invoice.subtotal) }];
  if (invoice.tax_type === 'intra_state') {
    totals.push({ label: 'CGST', value: money(invoice.cgst_amount) });
    totals.push({ label: invoice.utgst ? 'UTGST' : 'SGST', value: money(invoice.sgst_amount) });
  } else if (leviesIgst(invoice)) {
    totals.push({ label: 'IGST', value: money(invoice.igst_amount) });
  }
  totals.push({ label: 'Total', value: pdfMoney(invoice.total, invoice.currency), strong: true });
  if (invoice.amount_paid > 0) totals.push({ label: 'Amount paid', value: money(invoice.amount_paid) });
  if (invoice.amount_tds > 0) totals.push({ label: 'TDS withheld by the customer', value: money(invoice.amount_tds) });
  if (invoice.amount_credited > 0) totals.push({ label: 'Credits applied', value: money(invoice.amount_credited) });
  totals.push({ label: 'Amount due', value: pdfMoney(invoice.amount_due, invoice.currency), strong: true });
  // GST is determined in INR (CGST Rules, rule 34): a foreign-currency invoice prints both.
  if (foreign) totals.push(...inrTotals(invoice));
  return totals;
}

function inrTotals(invoice: Invoice): Total[] {
  const inr = (v: number | null) => formatMoney(v ?? 0, 'INR');
  const totals: Total[] = [{ label: 'Taxable value in INR', value: inr(invoice.inr_subtotal) }];
  if (invoice.tax_type === 'intra_state') {
    totals.push({ label: 'CGST in INR', value: inr(invoice.inr_cgst_amount) });
    totals.push({ label: `${invoice.utgst ? 'UTGST' : 'SGST'} in INR`, value: inr(invoice.inr_sgst_amount) });
  } else if (leviesIgst(invoice)) {
    totals.push({ label: 'IGST in INR', value: inr(invoice.inr_igst_amount) });
  }
  totals.push({ label: 'Total in INR', value: inr(invoice.inr_total) });
  return totals;
}

/** The supplier on the left, the document title on the right, and the endorsement under them; answers where the page goes on. */
function drawInvoiceHeading(doc: Doc, heading: InvoiceHeading, supplier: { name: string; lines: string[] }, gstApplies: boolean, { left, width }: Box): number {
  let y = MARGIN;
  doc.font(BOLD).fontSize(18).fillColor(INK).text(heading.title, left, y, { width, align: 'right' });
  doc
    .font(REGULAR)
    .fontSize(7.5)
    .fillColor(MUTED)
    .text(gstApplies ? 'Original for recipient' : '', left, y + 22, { width, align: 'right' });
  doc
    .font(BOLD)
    .fontSize(13)
    .fillColor(INK)
    .text(supplier.name, left, y, { width: width * 0.6 });
  y = doc.y + 2;
  doc.font(REGULAR).fontSize(8.5).fillColor(INK);
  for (const l of supplier.lines) doc.text(l, left, doc.y, { width: width * 0.6 });
  y = Math.max(doc.y, MARGIN + 36) + 8;

  if (heading.endorsement) {
    doc.font(BOLD).fontSize(8.5);
    const h = doc.heightOfString(heading.endorsement.toUpperCase(), { width: width - 12 }) + 8;
    doc.rect(left, y, width, h).lineWidth(0.8).strokeColor(INK).stroke();
    doc.fillColor(INK).text(heading.endorsement.toUpperCase(), left + 6, y + 4, { width: width - 12, align: 'center' });
    y += h + 8;
  }
  return y;
}

/** The lines table, a new page (with the header again) whenever a row would not fit. */
function drawInvoiceLines(doc: Doc, invoice: Invoice, { left, width }: Box, startY: number, timeZone: string, bottom: () => number): number {
  const columns = columnsFor(invoice, width);
  doc
    .font(REGULAR)
    .fontSize(7.5)
    .fillColor(MUTED)
    .text(`Amounts in ${invoice.currency}`, left, startY - 10, { width, align: 'right' });
  let y = drawTableHeader(doc, columns, left, startY, width);
  invoice.lines.forEach((line, index) => {
    const descriptionColumn = columns[1]!;
    const description = lineDescription(line, timeZone);
    doc.font(REGULAR).fontSize(8);
    const rowHeight = Math.max(doc.heightOfString(description, { width: descriptionColumn.width - 4 }), 10) + 6;
    if (y + rowHeight > bottom()) {
      doc.addPage();
      y = drawTableHeader(doc, columns, left, MARGIN, width);
    }
    let x = left;
    for (const c of columns) {
      if (c.key === 'description') {
        doc
          .font(REGULAR)
          .fontSize(8)
          .fillColor(INK)
          .text(description, x + 2, y + 3, { width: c.width - 4 });
      } else {
        cell(doc, c.value(line, index), x + 2, y + 3, c.width - 4, { align: c.align });
      }
      x += c.width;
    }
    y += rowHeight;
    doc
      .moveTo(left, y)
      .lineTo(left + width, y)
      .lineWidth(0.4)
      .strokeColor(RULE)
      .stroke();
  });
  return y;
}

/** Totals, the total in words, the memo and the signature, kept together on one page. */
function drawInvoiceClosing(
  doc: Doc,
  invoice: Invoice,
  totals: Total[],
  supplierName: string,
  { left, width }: Box,
  startY: number,
  bottom: () => number,
): void {
  let y = startY;
  const words = rupeesInWords(invoice.total, invoice.currency);
  const blockHeight = totals.length * 13 + 10 + (words ? 24 : 0) + (invoice.memo ? 40 : 0) + 50;
  if (y + blockHeight > bottom()) {
    doc.addPage();
    y = MARGIN;
  }
  y += 8;
  const totalsX = left + width - 250;
  for (const t of totals) {
    const font = t.strong ? BOLD : REGULAR;
    cell(doc, t.label, totalsX, y, 140, { font, size: 8.5 });
    cell(doc, t.value, totalsX + 140, y, 108, { font, size: 8.5, align: 'right' });
    y += 13;
  }
  y += 6;
  if (words) {
    doc.font(REGULAR).fontSize(8).fillColor(MUTED).text('Total in words: ', left, y, { continued: true }).fillColor(INK).text(words, { width });
    y = doc.y + 8;
  }
  if (invoice.memo) {
    doc.font(BOLD).fontSize(8).fillColor(INK).text('Notes', left, y, { width });
    doc
      .font(REGULAR)
      .fontSize(8)
      .text(invoice.memo, left, doc.y + 1, { width });
    y = doc.y + 8;
  }
  doc
    .font(REGULAR)
    .fontSize(8.5)
    .fillColor(INK)
    .text(`For ${supplierName}`, left, y + 4, { width, align: 'right' });
  doc
    .fontSize(7.5)
    .fillColor(MUTED)
    .text('Authorised signatory', left, doc.y + 14, { width, align: 'right' });
}

/** On every page: the footer, and the DRAFT / VOID mark. */
function drawPageMarks(doc: Doc, invoice: Invoice, heading: InvoiceHeading, { left, width }: Box): void {
  const mark = invoice.status === 'draft' ? 'DRAFT' : invoice.status === 'void' ? 'VOID' : undefined;
  const range = doc.bufferedPageRange();
  for (let i = range.start; i < range.start + range.count; i++) {
    doc.switchToPage(i);
    // Writing inside the bottom margin would make pdfkit start a new page; lift the margin meanwhile.
    const savedBottom = doc.page.margins.bottom;
    doc.page.margins.bottom = 0;
    const footer = `${heading.title} ${invoice.number ?? '(draft)'} · Page ${i - range.start + 1} of ${range.count} · This is a computer-generated document.`;
    doc
      .font(REGULAR)
      .fontSize(7)
      .fillColor(MUTED)
      .text(footer, left, doc.page.height - MARGIN - 10, { width, align: 'center', lineBreak: false });
    if (mark) {
      doc.save();
      doc.rotate(-35, { origin: [doc.page.width / 2, doc.page.height / 2] });
      doc.font(BOLD).fontSize(110).fillColor('#cc0000').fillOpacity(0.12);
      doc.text(mark, 0, doc.page.height / 2 - 55, { width: doc.page.width, align: 'center', lineBreak: false });
      doc.restore();
    }
    doc.page.margins.bottom = savedBottom;
  }
}

/**
 * Renders the invoice. A draft has no number or parties yet: callers pass a preview with the live
 * parties filled in, and the page is marked DRAFT; a void invoice is marked VOID.
 */
export async function renderInvoicePdf(invoice: Invoice, options: RenderOptions = {}): Promise<Buffer> {
  const heading = invoiceHeading(invoice);
  const gstApplies = invoice.tax_type !== '';
  const supplierInIndia = !invoice.supplier || isIndian(invoice.supplier);
  const timeZone = options.timeZone ?? (supplierInIndia ? 'Asia/Kolkata' : 'UTC');
  const stampDate = new Date(invoice.issued_at ?? invoice.created_at);
  const supplier = partyLines(invoice.supplier, 'supplier', gstApplies);
  const customer = partyLines(invoice.customer_details, 'customer', gstApplies);

  const { default: PDFDocument } = (await import('pdfkit')) as { default: typeof PDFKitDocument };
  await prepareUnicodeFonts();
  const doc = useUnicodeFonts(
    new PDFDocument({
      size: 'A4',
      margin: MARGIN,
      bufferPages: true,
      info: {
        Title: `${heading.title} ${invoice.number ?? '(draft)'}`,
        Author: supplier.name,
        Subject: `${heading.title} ${invoice.number ?? '(draft)'} to ${customer.name}`,
        Creator: 'Kosh',
        Producer: 'Kosh',
        // A reprint of the same invoice yields the same metadata.
        CreationDate: stampDate,
        ModDate: stampDate,
      },
    }),
  );
  const pdf = collectPdf(doc);
  const box: Box = { left: MARGIN, width: doc.page.width - 2 * MARGIN };
  const { left, width } = box;
  const bottom = () => doc.page.height - MARGIN - FOOTER_SPACE;

  let y = drawInvoiceHeading(doc, heading, supplier, gstApplies, box);
  if (options.einvoice?.irn) y = await drawEinvoiceBlock(doc, options.einvoice, left, y, width, timeZone);

  doc
    .moveTo(left, y)
    .lineTo(left + width, y)
    .lineWidth(0.5)
    .strokeColor(RULE)
    .stroke();
  y += 8;

  // Bill to on the left; the invoice's particulars on the right.
  const foreign = invoice.currency !== 'INR' && invoice.exchange_rate !== null && invoice.inr_total !== null;
  const particulars = invoiceParticulars(invoice, timeZone, gstApplies, foreign);
  y = partyBesideParticulars(doc, { left, width, y }, { heading: 'BILL TO', ...customer }, particulars, 110) + 14;

  y = drawInvoiceLines(doc, invoice, box, y, timeZone, bottom);
  drawInvoiceClosing(doc, invoice, invoiceTotals(invoice, foreign), supplier.name, box, y, bottom);
  drawPageMarks(doc, invoice, heading, box);
  doc.end();
  return pdf;
}
