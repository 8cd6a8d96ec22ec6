import { classifyZeroRatedSupply, gstnOfflineDate } from '../tax/index.js';
import type { B2csRow, CreditNoteRow, HsnRow, InvoiceRateRow, SeriesRow } from './gst-returns.repository.js';

/**
 * GSTR-1 in the GSTN offline tool's JSON. Every amount is summed in paise (integers) and turned
 * into rupees with two decimals only when written, so a section's total is exactly the sum of
 * its documents' values.
 */

/** Paise → rupees (two decimals) as a JSON number. */
export function rupees(minor: number): number {
  return Number((minor / 100).toFixed(2));
}

/**
 * B2CL: an inter-state invoice to an unregistered recipient whose value exceeds the limit in
 * force — ₹1,00,000 for invoices from 1 August 2024 (Notification 12/2024-Central Tax), ₹2,50,000
 * before.
 */
export const B2CL_LIMIT_CHANGE = new Date('2024-07-31T18:30:00Z'); // 1 August 2024, 00:00 IST
export function b2clLimitPaise(issuedAt: Date): number {
  return issuedAt >= B2CL_LIMIT_CHANGE ? 1_00_000_00 : 2_50_000_00;
}

export type Amounts = { txval: number; iamt: number; camt: number; samt: number };
const zero = (): Amounts => ({ txval: 0, iamt: 0, camt: 0, samt: 0 });
function add(into: Amounts, a: Amounts, sign = 1): void {
  into.txval += sign * a.txval;
  into.iamt += sign * a.iamt;
  into.camt += sign * a.camt;
  into.samt += sign * a.samt;
}

type Item = { rate_bp: number } & Amounts;
type Doc = {
  id: string;
  number: string;
  issued_at: Date;
  status: string;
  tax_type: string;
  place_of_supply: string | null;
  total: number;
  ctin: string | null;
  items: Item[];
};

function itemDetail(item: Item) {
  return { txval: rupees(item.txval), rt: item.rate_bp / 100, iamt: rupees(item.iamt), camt: rupees(item.camt), samt: rupees(item.samt), csamt: 0 };
}

function numberedItems(items: Item[]) {
  return items.map((item, i) => ({ num: i + 1, itm_det: itemDetail(item) }));
}

const EXPORT_POS = '96';

function supplyKind(tax_type: string): 'INTRA' | 'INTER' {
  return tax_type === 'intra_state' ? 'INTRA' : 'INTER';
}

type Series = { prefix: string; first: string; last: string; firstSeq: number; lastSeq: number; total: number; cancelled: number };

function seriesKey(number: string): { prefix: string; seq: number } {
  const match = /^(.*?)(\d+)$/.exec(number);
  return match ? { prefix: match[1]!, seq: Number(match[2]) } : { prefix: number, seq: 0 };
}

function trackSeries(map: Map<string, Series>, number: string, cancelled: boolean): void {
  const { prefix, seq } = seriesKey(number);
  let s = map.get(prefix);
  if (!s) {
    s = { prefix, first: number, last: number, firstSeq: seq, lastSeq: seq, total: 0, cancelled: 0 };
    map.set(prefix, s);
  }
  if (seq < s.firstSeq) Object.assign(s, { first: number, firstSeq: seq });
  if (seq > s.lastSeq) Object.assign(s, { last: number, lastSeq: seq });
  s.total += 1;
  if (cancelled) s.cancelled += 1;
}

/** Notes that count in the return (issued ones of a GST supply; void notes count only in doc_issue). */
export function countsInReturn(note: Pick<CreditNoteRow, 'status' | 'tax_type'>): boolean {
  return note.status !== 'void' && note.status !== 'pending_approval' && note.status !== 'rejected' && note.tax_type !== '';
}

export type Gstr1Totals = Record<'b2b' | 'b2cl' | 'b2cs' | 'exp' | 'cdnr' | 'cdnur', Amounts & { count: number }>;

/** Accumulates a month of documents into GSTR-1's sections. Feed invoice pages, then credit notes. */
export class Gstr1Builder {
  private readonly b2b = new Map<string, unknown[]>();
  private readonly b2cl = new Map<string, unknown[]>();
  private readonly b2cs = new Map<string, { sply_ty: string; pos: string; rate_bp: number } & Amounts>();
  private readonly exp = new Map<'WPAY' | 'WOPAY', unknown[]>();
  private readonly cdnr = new Map<string, unknown[]>();
  private readonly cdnur: unknown[] = [];
  private readonly invoiceSeries = new Map<string, Series>();
  private readonly noteSeries = new Map<string, Series>();
  readonly totals: Gstr1Totals = {
    b2b: { ...zero(), count: 0 },
    b2cl: { ...zero(), count: 0 },
    b2cs: { ...zero(), count: 0 },
    exp: { ...zero(), count: 0 },
    cdnr: { ...zero(), count: 0 },
    cdnur: { ...zero(), count: 0 },
  };
  /** GSTR-3B table 3.1, net of credit notes: (a) taxable, (b) zero-rated, (c) nil-rated and exempt. */
  readonly table31 = { osup_det: zero(), osup_zero: zero(), osup_nil_exmp: zero() };
  invoices = 0;
  /** CSV rows, when asked for (one per document and rate). */
  readonly csv: string[][] | null;

  constructor(
    private readonly timeZone: string,
    options: { csv?: boolean } = {},
  ) {
    this.csv = options.csv ? [] : null;
  }

  /**
   * Rows of invoiceRatePage or listedInvoiceRates, in their order (one invoice's rates are
   * consecutive). `series: false` when doc_issue comes from documentSeries instead.
   */
  addInvoiceRows(rows: InvoiceRateRow[], series = true): void {
    this.trackInvoiceSeries = series;
    let doc: Doc | null = null;
    for (const row of rows) {
      if (!doc || doc.id !== row.id) {
        if (doc) this.addInvoice(doc);
        doc = {
          id: row.id,
          number: row.number,
          issued_at: row.issued_at,
          status: row.status,
          tax_type: row.tax_type,
          place_of_supply: row.place_of_supply,
          total: row.total,
          ctin: row.ctin,
          items: [],
        };
      }
      doc.items.push({ rate_bp: row.rate_bp, txval: row.txval, iamt: row.iamt, camt: row.camt, samt: row.samt });
    }
    if (doc) this.addInvoice(doc);
  }

  private count(section: keyof Gstr1Totals, doc: Doc, sign = 1, zeroRated = false): void {
    this.totals[section].count += 1;
    for (const item of doc.items) add(this.totals[section], item, sign);
    const net = section === 'cdnr' || section === 'cdnur' ? -1 : sign;
    for (const item of doc.items) {
      const row = zeroRated ? this.table31.osup_zero : item.rate_bp === 0 ? this.table31.osup_nil_exmp : this.table31.osup_det;
      add(row, item, net);
    }
    if (this.csv) {
      for (const item of doc.items) {
        this.csv.push([
          section,
          doc.ctin ?? '',
          doc.number,
          gstnOfflineDate(doc.issued_at, this.timeZone),
          doc.place_of_supply ?? EXPORT_POS,
          String(item.rate_bp / 100),
          ...[item.txval, item.iamt, item.camt, item.samt].map((v) => ((sign * v) / 100).toFixed(2)),
          (doc.total / 100).toFixed(2),
        ]);
      }
    }
  }

  private trackInvoiceSeries = true;

  /** B2CS summed in SQL (b2csSummary): the same entries, totals and 3B rows as per-invoice feeding gives. */
  addB2csSummary(rows: B2csRow[]): void {
    if (rows.length === 0) return;
    const invoices = Number(rows[0]!.invoices);
    this.invoices += invoices;
    this.totals.b2cs.count += invoices;
    for (const row of rows) {
      const amounts = { txval: Number(row.txval), iamt: Number(row.iamt), camt: Number(row.camt), samt: Number(row.samt) };
      const key = `${row.sply_ty}|${row.pos}|${row.rate_bp}`;
      const entry = this.b2cs.get(key) ?? { sply_ty: row.sply_ty, pos: row.pos ?? '', rate_bp: row.rate_bp, ...zero() };
      add(entry, amounts);
      this.b2cs.set(key, entry);
      add(this.totals.b2cs, amounts);
      add(row.rate_bp === 0 ? this.table31.osup_nil_exmp : this.table31.osup_det, amounts);
    }
  }

  /** doc_issue series counted in SQL (documentSeries). */
  addSeries(kind: 'invoice' | 'credit_note', rows: SeriesRow[]): void {
    const map = kind === 'invoice' ? this.invoiceSeries : this.noteSeries;
    for (const r of rows) {
      map.set(r.prefix, { prefix: r.prefix, first: r.first, last: r.last, firstSeq: 0, lastSeq: 0, total: Number(r.total), cancelled: Number(r.cancelled) });
    }
  }

  private addInvoice(doc: Doc): void {
    if (this.trackInvoiceSeries) trackSeries(this.invoiceSeries, doc.number, doc.status === 'void');
    if (doc.status === 'void' || doc.tax_type === '') return;
    this.invoices += 1;
    const idt = gstnOfflineDate(doc.issued_at, this.timeZone);
    const zeroRated = classifyZeroRatedSupply({ tax_type: doc.tax_type, igst_amount: doc.items.reduce((s, i) => s + i.iamt, 0) });
    if (zeroRated?.kind === 'export') {
      const typ = zeroRated.withPayment ? 'WPAY' : 'WOPAY';
      const list = this.exp.get(typ) ?? [];
      list.push({
        inum: doc.number,
        idt,
        val: rupees(doc.total),
        itms: doc.items.map((i) => ({ txval: rupees(i.txval), rt: i.rate_bp / 100, iamt: rupees(i.iamt), csamt: 0 })),
      });
      this.exp.set(typ, list);
      this.count('exp', doc, 1, true);
      return;
    }
    if (doc.ctin) {
      const list = this.b2b.get(doc.ctin) ?? [];
      const invTyp = zeroRated?.kind === 'sez' ? (zeroRated.withPayment ? 'SEWP' : 'SEWOP') : 'R';
      list.push({
        inum: doc.number,
        idt,
        val: rupees(doc.total),
        pos: doc.place_of_supply ?? doc.ctin.slice(0, 2),
        rchrg: 'N',
        inv_typ: invTyp,
        itms: numberedItems(doc.items),
      });
      this.b2b.set(doc.ctin, list);
      this.count('b2b', doc, 1, zeroRated?.kind === 'sez');
      return;
    }
    const pos = doc.place_of_supply ?? '';
    if (doc.tax_type === 'inter_state' && doc.total > b2clLimitPaise(doc.issued_at)) {
      const list = this.b2cl.get(pos) ?? [];
      list.push({ inum: doc.number, idt, val: rupees(doc.total), itms: numberedItems(doc.items) });
      this.b2cl.set(pos, list);
      this.count('b2cl', doc);
      return;
    }
    this.addB2cs(doc, 1);
  }

  private addB2cs(doc: Doc, sign: number): void {
    for (const item of doc.items) {
      const sply = supplyKind(doc.tax_type);
      const key = `${sply}|${doc.place_of_supply}|${item.rate_bp}`;
      const entry = this.b2cs.get(key) ?? { sply_ty: sply, pos: doc.place_of_supply ?? '', rate_bp: item.rate_bp, ...zero() };
      add(entry, item, sign);
      this.b2cs.set(key, entry);
    }
    this.count('b2cs', doc, sign);
  }

  /**
   * Credit notes (rows of creditNotesOfPeriod, a note's rows consecutive), one item per rate they
   * credit: registered recipients → cdnr; B2CL and export originals → cdnur; other B2C → b2cs
   * (reduces it).
   */
  addCreditNotes(rows: CreditNoteRow[], rateOf: (row: CreditNoteRow) => number): void {
    for (let i = 0; i < rows.length;) {
      const note = rows[i]!;
      const byRate = new Map<number, Item>();
      for (; i < rows.length && rows[i]!.id === note.id; i++) {
        const r = rows[i]!;
        const rate = rateOf(r);
        const item = byRate.get(rate) ?? { rate_bp: rate, ...zero() };
        add(item, { txval: r.subtotal, iamt: r.igst_amount, camt: r.cgst_amount, samt: r.sgst_amount });
        byRate.set(rate, item);
      }
      this.addCreditNote(
        note,
        [...byRate.values()].sort((a, b) => a.rate_bp - b.rate_bp),
      );
    }
  }

  private addCreditNote(note: CreditNoteRow, items: Item[]): void {
    trackSeries(this.noteSeries, note.number, note.status === 'void');
    if (!countsInReturn(note)) return;
    const doc: Doc = {
      id: note.id,
      number: note.number,
      issued_at: note.issued_at,
      status: note.status,
      tax_type: note.tax_type,
      place_of_supply: note.place_of_supply,
      total: note.amount,
      ctin: note.ctin,
      items,
    };
    const igst = items.reduce((a, it) => a + it.iamt, 0);
    const ntDt = gstnOfflineDate(note.issued_at, this.timeZone);
    const base = { ntty: 'C', nt_num: note.number, nt_dt: ntDt, val: rupees(note.amount) };
    const zeroRated = classifyZeroRatedSupply({ tax_type: note.tax_type, igst_amount: igst });
    if (note.ctin && zeroRated?.kind !== 'export') {
      const list = this.cdnr.get(note.ctin) ?? [];
      list.push({ ...base, pos: note.place_of_supply ?? note.ctin.slice(0, 2), rchrg: 'N', inv_typ: 'R', itms: numberedItems(doc.items) });
      this.cdnr.set(note.ctin, list);
      this.count('cdnr', doc, 1, zeroRated?.kind === 'sez');
    } else if (zeroRated?.kind === 'export') {
      this.cdnur.push({ ...base, typ: zeroRated.withPayment ? 'EXPWP' : 'EXPWOP', pos: EXPORT_POS, itms: numberedItems(doc.items) });
      this.count('cdnur', doc, 1, true);
    } else if (
      note.tax_type === 'inter_state' &&
      note.invoice_total !== null &&
      note.invoice_issued_at &&
      note.invoice_total > b2clLimitPaise(note.invoice_issued_at)
    ) {
      this.cdnur.push({ ...base, typ: 'B2CL', pos: note.place_of_supply, itms: numberedItems(doc.items) });
      this.count('cdnur', doc);
    } else {
      this.addB2cs(doc, -1);
    }
  }

  gstr3b(gstin: string, period: string): Record<string, unknown> {
    const out = (a: Amounts) => ({ txval: rupees(a.txval), iamt: rupees(a.iamt), camt: rupees(a.camt), samt: rupees(a.samt), csamt: 0 });
    const none = { txval: 0, iamt: 0, camt: 0, samt: 0, csamt: 0 };
    return {
      gstin,
      ret_period: period,
      sup_details: {
        osup_det: out(this.table31.osup_det),
        osup_zero: out(this.table31.osup_zero),
        osup_nil_exmp: out(this.table31.osup_nil_exmp),
        isup_rev: none,
        osup_nongst: none,
      },
    };
  }

  /** The offline tool's JSON (`hsn` from the SQL summary; credit notes reduce it). */
  toJson(gstin: string, period: string, hsn: HsnRow[], hsnCredits: HsnRow[]): Record<string, unknown> {
    const hsnMap = new Map<string, HsnRow>();
    for (const row of hsn) hsnMap.set(`${row.hsn_code}|${row.rate_bp}`, { ...row });
    for (const row of hsnCredits) {
      const key = `${row.hsn_code}|${row.rate_bp}`;
      const entry = hsnMap.get(key) ?? { hsn_code: row.hsn_code, rate_bp: row.rate_bp, qty: 0, txval: 0, iamt: 0, camt: 0, samt: 0 };
      entry.txval -= row.txval;
      entry.iamt -= row.iamt;
      entry.camt -= row.camt;
      entry.samt -= row.samt;
      hsnMap.set(key, entry);
    }
    const docs = (series: Map<string, Series>) =>
      [...series.values()].map((s, i) => ({ num: i + 1, from: s.first, to: s.last, totnum: s.total, cancel: s.cancelled, net_issue: s.total - s.cancelled }));
    return {
      gstin,
      fp: period,
      b2b: [...this.b2b].map(([ctin, inv]) => ({ ctin, inv })),
      b2cl: [...this.b2cl].map(([pos, inv]) => ({ pos, inv })),
      b2cs: [...this.b2cs.values()].map((e) => ({
        sply_ty: e.sply_ty,
        pos: e.pos,
        typ: 'OE',
        rt: e.rate_bp / 100,
        txval: rupees(e.txval),
        iamt: rupees(e.iamt),
        camt: rupees(e.camt),
        samt: rupees(e.samt),
        csamt: 0,
      })),
      cdnr: [...this.cdnr].map(([ctin, nt]) => ({ ctin, nt })),
      cdnur: this.cdnur,
      exp: [...this.exp].map(([exp_typ, inv]) => ({ exp_typ, inv })),
      hsn: {
        data: [...hsnMap.values()].map((h, i) => ({
          num: i + 1,
          hsn_sc: h.hsn_code,
          uqc: h.hsn_code.startsWith('99') ? 'NA' : 'NOS',
          qty: h.hsn_code.startsWith('99') ? 0 : h.qty,
          rt: h.rate_bp / 100,
          txval: rupees(h.txval),
          iamt: rupees(h.iamt),
          camt: rupees(h.camt),
          samt: rupees(h.samt),
          csamt: 0,
        })),
      },
      doc_issue: {
        doc_det: [
          { doc_num: 1, doc_typ: 'Invoices for outward supply', docs: docs(this.invoiceSeries) },
          { doc_num: 5, doc_typ: 'Credit Note', docs: docs(this.noteSeries) },
        ].filter((d) => d.docs.length > 0),
      },
    };
  }
}
