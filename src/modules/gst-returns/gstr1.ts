import { classifyZeroRatedSupply, gstnOfflineDates } from '../tax/index.js';
import type { B2csRow, CreditNoteRow, HsnRow, InvoiceRateRow, SeriesRow } from './gst-returns.repository.js';
import type { Gstr1B2bInvoice, Gstr1B2clInvoice, Gstr1Built, Gstr1CdnrNote, Gstr1Cdnur, Gstr1ExpInvoice, Gstr1Nil } from './gst-returns.schemas.js';

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

/**
 * The GSTN offline tool's format the JSON follows (Phase III: HSN summary in B2B and B2C tables,
 * table 13 mandatory; decision 0361). Not confirmed from GSTN's own schema download; configurable
 * where the return is built.
 */
export const GSTR1_FORMAT_VERSION = 'GST3.2.3';

/** Table 8 rows: supply type × nil-rated, exempt and non-GST values. */
export type NilSupplyType = Gstr1Nil['inv'][number]['sply_ty'];
type NilRow = { nil_amt: number; expt_amt: number; ngsup_amt: number };

export type Amounts = { txval: number; iamt: number; camt: number; samt: number };
const zero = (): Amounts => ({ txval: 0, iamt: 0, camt: 0, samt: 0 });
function add(into: Amounts, a: Amounts, sign = 1): void {
  into.txval += sign * a.txval;
  into.iamt += sign * a.iamt;
  into.camt += sign * a.camt;
  into.samt += sign * a.samt;
}

type Item = { rate_bp: number; service?: boolean } & Amounts;
type Doc = {
  id: string;
  number: string;
  issued_at: Date;
  status: string;
  tax_type: string;
  place_of_supply: string | null;
  total: number;
  ctin: string | null;
  shipping_bill?: { port_code: string; number: string; date: string } | null;
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

export const TABLE31_ROWS = ['osup_det', 'osup_zero', 'osup_nil_exmp'] as const;
export type Table31Row = (typeof TABLE31_ROWS)[number];
/** A net reduction carried between months, per 3.1 row, in paise (positive = to be taken off). */
export type Table31Carry = Partial<Record<Table31Row, Amounts>>;

function carryOut(carry: Table31Carry): Record<string, { txval: number; iamt: number; camt: number; samt: number }> {
  return Object.fromEntries(
    Object.entries(carry).map(([row, a]) => [row, { txval: rupees(a.txval), iamt: rupees(a.iamt), camt: rupees(a.camt), samt: rupees(a.samt) }]),
  );
}

/** A stored 3B's carry (rupees) back to paise. */
export function carryFromJson(json: unknown): Table31Carry {
  const raw = (json as { carry_forward?: Record<string, Record<string, number>> } | null)?.carry_forward ?? {};
  const paise = (v: number | undefined) => Math.round((v ?? 0) * 100);
  const carry: Table31Carry = {};
  for (const row of TABLE31_ROWS) {
    const a = raw[row];
    if (a) carry[row] = { txval: paise(a.txval), iamt: paise(a.iamt), camt: paise(a.camt), samt: paise(a.samt) };
  }
  return carry;
}

export type Gstr1Totals = Record<'b2b' | 'b2cl' | 'b2cs' | 'exp' | 'cdnr' | 'cdnur', Amounts & { count: number }>;

/** Accumulates a month of documents into GSTR-1's sections. Feed invoice pages, then credit notes. */
export class Gstr1Builder {
  private readonly b2b = new Map<string, Gstr1B2bInvoice[]>();
  private readonly b2cl = new Map<string, Gstr1B2clInvoice[]>();
  private readonly b2cs = new Map<string, { sply_ty: 'INTRA' | 'INTER'; pos: string; rate_bp: number } & Amounts>();
  private readonly exp = new Map<'WPAY' | 'WOPAY', Gstr1ExpInvoice[]>();
  private readonly cdnr = new Map<string, Gstr1CdnrNote[]>();
  private readonly cdnur: Gstr1Cdnur[] = [];
  /** Table 8 (nil-rated, exempt, non-GST), in paise, per supply type. */
  private readonly nil = new Map<NilSupplyType, NilRow>();
  private readonly invoiceSeries = new Map<string, Series>();
  private readonly noteSeries = new Map<string, Series>();
  private readonly receiptVoucherSeries = new Map<string, Series>();
  private readonly refundVoucherSeries = new Map<string, Series>();
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

  /** Issue dates in the GSTN offline tool's format, in the supplier's zone (memoized for this return). */
  private readonly offlineDate: (instant: Date) => string;

  constructor(timeZone: string, options: { csv?: boolean } = {}) {
    this.offlineDate = gstnOfflineDates(timeZone);
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
          shipping_bill: row.shipping_bill,
          items: [],
        };
      }
      doc.items.push({ rate_bp: row.rate_bp, service: row.service, txval: row.txval, iamt: row.iamt, camt: row.camt, samt: row.samt });
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
          this.offlineDate(doc.issued_at),
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
      if (row.rate_bp === 0) {
        this.addNil(row.sply_ty === 'INTRA' ? 'INTRAB2C' : 'INTRB2C', row.service, amounts.txval);
        add(this.table31.osup_nil_exmp, amounts);
        this.nilTotal += amounts.txval;
        continue;
      }
      const key = `${row.sply_ty}|${row.pos}|${row.rate_bp}`;
      const entry = this.b2cs.get(key) ?? { sply_ty: row.sply_ty, pos: row.pos ?? '', rate_bp: row.rate_bp, ...zero() };
      add(entry, amounts);
      this.b2cs.set(key, entry);
      add(this.totals.b2cs, amounts);
      add(row.rate_bp === 0 ? this.table31.osup_nil_exmp : this.table31.osup_det, amounts);
    }
  }

  /** doc_issue series counted in SQL (documentSeries). */
  addSeries(kind: 'invoice' | 'credit_note' | 'receipt_voucher' | 'refund_voucher', rows: SeriesRow[]): void {
    const map = {
      invoice: this.invoiceSeries,
      credit_note: this.noteSeries,
      receipt_voucher: this.receiptVoucherSeries,
      refund_voucher: this.refundVoucherSeries,
    }[kind];
    for (const r of rows) {
      map.set(r.prefix, { prefix: r.prefix, first: r.first, last: r.last, firstSeq: 0, lastSeq: 0, total: Number(r.total), cancelled: Number(r.cancelled) });
    }
  }

  /**
   * A 0 % line of a domestic supply goes to table 8, not to b2b/b2cs at rate 0: services (SAC,
   * chapter 99) as exempt (12/2017-CT(Rate) exempts them), goods as nil-rated.
   */
  private addNil(type: NilSupplyType, service: boolean, txval: number): void {
    const row = this.nil.get(type) ?? { nil_amt: 0, expt_amt: 0, ngsup_amt: 0 };
    if (service) row.expt_amt += txval;
    else row.nil_amt += txval;
    this.nil.set(type, row);
  }

  private static nilType(taxType: string, registered: boolean): NilSupplyType {
    const inter = taxType !== 'intra_state';
    return registered ? (inter ? 'INTRB2B' : 'INTRAB2B') : inter ? 'INTRB2C' : 'INTRAB2C';
  }

  /** Splits off a document's 0 % items (domestic, not zero-rated) into table 8; answers the taxed ones. */
  private splitNil(doc: Doc, registered: boolean, sign = 1): Item[] {
    const taxed = doc.items.filter((i) => i.rate_bp !== 0);
    for (const item of doc.items) {
      if (item.rate_bp !== 0) continue;
      this.addNil(Gstr1Builder.nilType(doc.tax_type, registered), item.service ?? true, sign * item.txval);
      add(this.table31.osup_nil_exmp, item, sign);
      this.nilTotal += sign * item.txval;
      if (this.csv) {
        const at = this.offlineDate(doc.issued_at);
        this.csv.push([
          'nil',
          doc.ctin ?? '',
          doc.number,
          at,
          doc.place_of_supply ?? '',
          '0',
          ((sign * item.txval) / 100).toFixed(2),
          '0.00',
          '0.00',
          '0.00',
          (doc.total / 100).toFixed(2),
        ]);
      }
    }
    return taxed;
  }

  /** Table 8's taxable value in all (paise), for the sums the harness checks. */
  nilTotal = 0;

  private addInvoice(doc: Doc): void {
    if (this.trackInvoiceSeries) trackSeries(this.invoiceSeries, doc.number, doc.status === 'void');
    if (doc.status === 'void' || doc.tax_type === '') return;
    this.invoices += 1;
    const idt = this.offlineDate(doc.issued_at);
    const zeroRated = classifyZeroRatedSupply({ tax_type: doc.tax_type, igst_amount: doc.items.reduce((s, i) => s + i.iamt, 0) });
    if (zeroRated?.kind === 'export') {
      const typ = zeroRated.withPayment ? 'WPAY' : 'WOPAY';
      const list = this.exp.get(typ) ?? [];
      const sb = doc.shipping_bill;
      list.push({
        inum: doc.number,
        idt,
        val: rupees(doc.total),
        // The shipping bill once recorded (decision 0610): port code, number, date.
        ...(sb ? { sbpcode: sb.port_code, sbnum: sb.number, sbdt: sb.date.split('-').reverse().join('-') } : {}),
        itms: doc.items.map((i) => ({ txval: rupees(i.txval), rt: i.rate_bp / 100, iamt: rupees(i.iamt), csamt: 0 })),
      });
      this.exp.set(typ, list);
      this.count('exp', doc, 1, true);
      return;
    }
    if (!zeroRated) {
      const taxed = this.splitNil(doc, Boolean(doc.ctin));
      if (taxed.length === 0) return;
      doc = { ...doc, items: taxed };
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
    const taxed = this.splitNil(doc, false, sign);
    if (taxed.length === 0) return; // only 0 % lines: table 8 alone
    doc = { ...doc, items: taxed };
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
        const item = byRate.get(rate) ?? { rate_bp: rate, service: r.hsn_code.startsWith('99'), ...zero() };
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
    const ntDt = this.offlineDate(note.issued_at);
    const base = { ntty: 'C' as const, nt_num: note.number, nt_dt: ntDt, val: rupees(note.amount) };
    const zeroRated = classifyZeroRatedSupply({ tax_type: note.tax_type, igst_amount: igst });
    if (note.ctin && zeroRated?.kind !== 'export') {
      if (!zeroRated) {
        // A note's 0 % items reduce table 8 (as its invoice's did).
        const taxed = this.splitNil(doc, true, -1);
        if (taxed.length === 0) return;
        doc.items = taxed;
      }
      const list = this.cdnr.get(note.ctin) ?? [];
      // A note to an SEZ unit carries the SEZ type of its supply (SEWP with IGST, SEWOP under LUT).
      const invTyp = zeroRated?.kind === 'sez' ? (zeroRated.withPayment ? 'SEWP' : 'SEWOP') : 'R';
      list.push({ ...base, pos: note.place_of_supply ?? note.ctin.slice(0, 2), rchrg: 'N', inv_typ: invTyp, itms: numberedItems(doc.items) });
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

  /**
   * GSTR-3B table 3.1 (decision 0362). A row's value or tax never goes below zero: when a month's
   * credit notes exceed its supplies, the row shows 0 and the net reduction is carried forward to
   * the next month's same row (`carried_in` reduces it there, still not below 0), and the return
   * reports what it carried (`carry_forward`) and took in (`carried_in`).
   */
  gstr3b(gstin: string, period: string, carriedIn: Table31Carry = {}): Record<string, unknown> {
    const out = (a: Amounts) => ({ txval: rupees(a.txval), iamt: rupees(a.iamt), camt: rupees(a.camt), samt: rupees(a.samt), csamt: 0 });
    const none = { txval: 0, iamt: 0, camt: 0, samt: 0, csamt: 0 };
    const { reported, carry } = this.table31Net(carriedIn);
    return {
      gstin,
      ret_period: period,
      sup_details: {
        osup_det: out(reported.osup_det),
        osup_zero: out(reported.osup_zero),
        osup_nil_exmp: out(reported.osup_nil_exmp),
        isup_rev: none,
        osup_nongst: none,
      },
      carried_in: carryOut(carriedIn),
      carry_forward: carryOut(carry),
    };
  }

  /** 3.1 after the carry taken in, clamped at zero per row and head, and what is carried on. */
  table31Net(carriedIn: Table31Carry = {}): { reported: Record<Table31Row, Amounts>; carry: Table31Carry } {
    const reported = {} as Record<Table31Row, Amounts>;
    const carry: Table31Carry = {};
    for (const row of TABLE31_ROWS) {
      const net = { ...this.table31[row] };
      const inCarry = carriedIn[row];
      if (inCarry) add(net, inCarry, -1);
      const shown = zero();
      const left = zero();
      for (const k of ['txval', 'iamt', 'camt', 'samt'] as const) {
        shown[k] = Math.max(0, net[k]);
        left[k] = Math.max(0, -net[k]);
      }
      reported[row] = shown;
      if (left.txval || left.iamt || left.camt || left.samt) carry[row] = left;
    }
    return { reported, carry };
  }

  /** Table 8 as the offline tool writes it (supply types with no value left out). */
  nilSection(): Gstr1Nil {
    const order: NilSupplyType[] = ['INTRB2B', 'INTRAB2B', 'INTRB2C', 'INTRAB2C'];
    return {
      inv: order
        .filter((t) => this.nil.has(t))
        .map((t) => {
          const r = this.nil.get(t)!;
          return { sply_ty: t, nil_amt: rupees(r.nil_amt), expt_amt: rupees(r.expt_amt), ngsup_amt: rupees(r.ngsup_amt) };
        }),
    };
  }

  /**
   * The offline tool's JSON (`hsn` from the SQL summary; credit notes reduce it). Table 12 in two
   * tabs (Phase III, from the May 2025 period): `hsn_b2b` for supplies to registered persons,
   * `hsn_b2c` for the rest. Above ₹5 crore of turnover table 12 wants 6-digit HSN: the invoices
   * of such an entity already carry them (invoices.service refuses shorter codes).
   */
  toJson(gstin: string, period: string, hsn: HsnRow[], hsnCredits: HsnRow[]): Gstr1Built {
    const hsnMap = new Map<string, HsnRow>();
    for (const row of hsn) hsnMap.set(`${row.b2b}|${row.hsn_code}|${row.rate_bp}`, { ...row });
    for (const row of hsnCredits) {
      const key = `${row.b2b}|${row.hsn_code}|${row.rate_bp}`;
      const entry = hsnMap.get(key) ?? { b2b: row.b2b, hsn_code: row.hsn_code, rate_bp: row.rate_bp, qty: 0, txval: 0, iamt: 0, camt: 0, samt: 0 };
      entry.txval -= row.txval;
      entry.iamt -= row.iamt;
      entry.camt -= row.camt;
      entry.samt -= row.samt;
      hsnMap.set(key, entry);
    }
    const hsnTab = (b2b: boolean) =>
      [...hsnMap.values()]
        .filter((h) => h.b2b === b2b)
        .map((h, i) => ({
          num: i + 1,
          hsn_sc: h.hsn_code,
          uqc: h.hsn_code.startsWith('99') ? 'NA' : 'NOS',
          qty: h.hsn_code.startsWith('99') ? 0 : Number(h.qty),
          rt: h.rate_bp / 100,
          txval: rupees(h.txval),
          iamt: rupees(h.iamt),
          camt: rupees(h.camt),
          samt: rupees(h.samt),
          csamt: 0,
        }));
    const docs = (series: Map<string, Series>) =>
      [...series.values()].map((s, i) => ({ num: i + 1, from: s.first, to: s.last, totnum: s.total, cancel: s.cancelled, net_issue: s.total - s.cancelled }));
    return {
      gstin,
      fp: period,
      version: GSTR1_FORMAT_VERSION,
      b2b: [...this.b2b].map(([ctin, inv]) => ({ ctin, inv })),
      b2cl: [...this.b2cl].map(([pos, inv]) => ({ pos, inv })),
      b2cs: [...this.b2cs.values()].map((e) => ({
        sply_ty: e.sply_ty,
        pos: e.pos,
        typ: 'OE' as const,
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
      nil: this.nilSection(),
      hsn: { hsn_b2b: hsnTab(true), hsn_b2c: hsnTab(false) },
      doc_issue: {
        doc_det: [
          { doc_num: 1, doc_typ: 'Invoices for outward supply', docs: docs(this.invoiceSeries) },
          { doc_num: 5, doc_typ: 'Credit Note', docs: docs(this.noteSeries) },
          // Form GSTR-1 table 13, rows 6 and 8: receipt vouchers (rule 50) and refund vouchers (rule 51).
          { doc_num: 6, doc_typ: 'Receipt voucher', docs: docs(this.receiptVoucherSeries) },
          { doc_num: 8, doc_typ: 'Refund voucher', docs: docs(this.refundVoucherSeries) },
        ].filter((d) => d.docs.length > 0),
      },
    };
  }
}
