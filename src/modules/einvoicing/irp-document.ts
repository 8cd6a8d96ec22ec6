import { Ajv, type ErrorObject } from 'ajv';
import { currencyExponent } from '../../platform/money.js';
import { classifyZeroRatedSupply, gstDate } from '../tax/index.js';
import type { EinvoiceError } from './einvoicing.tables.js';
import irpSchema from './irp-schema-1.1.json' with { type: 'json' };

/**
 * The IRP e-invoice JSON (schema version 1.1) of an invoice or a credit note. Amounts are rupees
 * with two decimals (integer paise / 100, never a float sum: every total is summed in paise
 * first). Dates are the supplier's local dates (dd/mm/yyyy).
 */

export type IrpParty = {
  name: string;
  legal_name?: string | null;
  gstin: string | null;
  state_code: string | null;
  country_code: string | null;
  email?: string | null;
  address: Record<string, string | null | undefined> | null;
};

export type IrpLine = {
  description: string;
  quantity: number;
  unit_amount: number;
  /** Taken off quantity × unit_amount before GST (a coupon); `amount` is the assessable value. */
  discount_amount?: number;
  amount: number;
  hsn_code: string;
  rate_bp: number;
  cgst_amount: number;
  sgst_amount: number;
  igst_amount: number;
  total: number;
};

export type IrpSource = {
  type: 'INV' | 'CRN' | 'DBN';
  number: string;
  issued_at: Date;
  time_zone: string;
  currency: string;
  tax_type: string;
  place_of_supply: string | null;
  supplier: IrpParty;
  buyer: IrpParty;
  lines: IrpLine[];
  subtotal: number;
  cgst_amount: number;
  sgst_amount: number;
  igst_amount: number;
  total: number;
  /** Credit and debit notes: the invoice they adjust. */
  original?: { number: string; issued_at: Date } | null;
  /**
   * A document in another currency: its currency, total in that currency (minor units) and the
   * rate its INR values were determined at. Every amount above is then in paise.
   */
  foreign?: { currency: string; total: number; exchange_rate: string | null } | null;
  /** Why the document cannot be registered as it stands (stored with the schema's errors). */
  problems?: EinvoiceError[];
  /** Customers' SEZ flag, once customers carry one (see classifyZeroRatedSupply). */
  customer_sez?: boolean | null;
  /** The supplier claims back the IGST it paid on an export (the entity's `export_refund_claim`). */
  refund_claim?: boolean;
};

export type IrpDocument = Record<string, unknown>;

/** Paise → rupees with two decimals, as a JSON number. */
export function rupees(minor: number): number {
  return Number((minor / 100).toFixed(2));
}

const EXPORT_STATE = '96';
const EXPORT_PIN = 999999;

function supplyType(source: IrpSource): string {
  const zeroRated = classifyZeroRatedSupply(source);
  if (!zeroRated) return 'B2B';
  const prefix = zeroRated.kind === 'export' ? 'EXP' : 'SEZ';
  return `${prefix}${zeroRated.withPayment ? 'WP' : 'WOP'}`;
}

function pin(party: IrpParty): number | undefined {
  const digits = (party.address?.postal_code ?? '').replace(/\s/g, '');
  return /^[1-9][0-9]{5}$/.test(digits) ? Number(digits) : undefined;
}

/** Optional text fields are left out when empty: the IRP rejects empty strings against minLength. */
function compact<T extends Record<string, unknown>>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined && v !== null && v !== '')) as T;
}

function partyDetails(party: IrpParty, role: 'seller' | 'buyer', exported: boolean, placeOfSupply: string | null) {
  const a = party.address ?? {};
  const legalName = (role === 'seller' ? party.legal_name : null) || party.name;
  const base = {
    Gstin: exported && role === 'buyer' ? 'URP' : (party.gstin ?? ''),
    LglNm: legalName,
    TrdNm: party.name !== legalName ? party.name : undefined,
    Addr1: a.line1 ?? '',
    Addr2: a.line2,
    Loc: a.city ?? '',
    Pin: exported && role === 'buyer' ? EXPORT_PIN : pin(party),
    Stcd: exported && role === 'buyer' ? EXPORT_STATE : (party.state_code ?? party.gstin?.slice(0, 2) ?? ''),
    Em: party.email ?? undefined,
  };
  if (role === 'seller') return compact(base);
  return compact({ ...base, Pos: exported ? EXPORT_STATE : (placeOfSupply ?? party.gstin?.slice(0, 2) ?? '') });
}

function itemOf(line: IrpLine, index: number) {
  const service = line.hsn_code.startsWith('99');
  return compact({
    SlNo: String(index + 1),
    PrdDesc: line.description.length >= 3 ? line.description.slice(0, 300) : undefined,
    IsServc: service ? 'Y' : 'N',
    HsnCd: line.hsn_code,
    Qty: line.quantity,
    // "OTH" (others) is the unit the IRP's unit list gives services; goods are counted in NOS.
    Unit: service ? 'OTH' : 'NOS',
    UnitPrice: Number((line.unit_amount / 100).toFixed(3)),
    TotAmt: rupees(line.amount + (line.discount_amount ?? 0)),
    Discount: line.discount_amount ? rupees(line.discount_amount) : undefined,
    AssAmt: rupees(line.amount),
    GstRt: line.rate_bp / 100,
    IgstAmt: rupees(line.igst_amount),
    CgstAmt: rupees(line.cgst_amount),
    SgstAmt: rupees(line.sgst_amount),
    TotItemVal: rupees(line.total),
  });
}

export function buildIrpDocument(source: IrpSource): IrpDocument {
  const exported = source.tax_type === 'export';
  const document: IrpDocument = {
    Version: '1.1',
    TranDtls: { TaxSch: 'GST', SupTyp: supplyType(source), RegRev: 'N', IgstOnIntra: 'N' },
    DocDtls: { Typ: source.type, No: source.number, Dt: gstDate(source.issued_at, source.time_zone) },
    SellerDtls: partyDetails(source.supplier, 'seller', exported, null),
    BuyerDtls: partyDetails(source.buyer, 'buyer', exported, source.place_of_supply),
    ItemList: source.lines.map(itemOf),
    ValDtls: {
      AssVal: rupees(source.subtotal),
      CgstVal: rupees(source.cgst_amount),
      SgstVal: rupees(source.sgst_amount),
      IgstVal: rupees(source.igst_amount),
      TotInvVal: rupees(source.total),
      // The invoice value in its own currency (major units), for documents not in rupees.
      ...(source.foreign ? { TotInvValFc: Number((source.foreign.total / 10 ** currencyExponent(source.foreign.currency)).toFixed(2)) } : {}),
    },
  };
  if (source.original) {
    document.RefDtls = { PrecDocDtls: [{ InvNo: source.original.number, InvDt: gstDate(source.original.issued_at, source.time_zone) }] };
  }
  if (exported) {
    const country = (source.buyer.country_code ?? source.buyer.address?.country ?? '').toUpperCase();
    // RefClm: a refund of IGST is claimed only on an export that paid IGST (EXPWP), and only when
    // the entity says it claims it; under LUT there is no IGST to claim back.
    const refundClaimed = source.refund_claim === true && source.igst_amount > 0;
    document.ExpDtls = compact({
      ForCur: source.foreign?.currency ?? source.currency,
      CntCode: /^[A-Z]{2}$/.test(country) ? country : undefined,
      RefClm: refundClaimed ? 'Y' : 'N',
    });
  }
  return document;
}

const ajv = new Ajv({ allErrors: true, strict: false, multipleOfPrecision: 6 });
const validateSchema = ajv.compile(irpSchema);

function describe(error: ErrorObject): EinvoiceError {
  const path = error.instancePath.replace(/^\//, '').replace(/\//g, '.');
  const missing = error.keyword === 'required' ? String((error.params as { missingProperty?: string }).missingProperty) : null;
  const field = missing ? (path ? `${path}.${missing}` : missing) : path;
  const allowed = error.keyword === 'enum' ? `: ${(error.params as { allowedValues: unknown[] }).allowedValues.join(', ')}` : '';
  return { code: `schema.${error.keyword}`, field, message: `${field || 'document'} ${error.message ?? 'is invalid'}${allowed}` };
}

/** Every way the document breaks the IRP schema (empty: valid). Nothing that fails here is sent. */
export function validateIrpDocument(document: IrpDocument): EinvoiceError[] {
  if (validateSchema(document)) return [];
  return (validateSchema.errors ?? []).map(describe);
}
