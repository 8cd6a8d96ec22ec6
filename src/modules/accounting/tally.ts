import type { ReadCtx } from '../../platform/context.js';
import { errors } from '../../platform/errors.js';
import { getCreditNote } from '../credit-notes/index.js';
import { customerStateCode, findCustomers, type Customer } from '../customers/index.js';
import { findEntity, findPrimaryEntity, type EntityRow } from '../entities/index.js';
import { getInvoiceRows, type InvoiceRow } from '../invoices/index.js';
import { ACCOUNT_NAMES, exportPage, type AccountCode, type ExportRow } from '../ledger/index.js';
import { gstState, localDay, startOfLocalDay } from '../tax/index.js';
import { majorUnitsText } from './amounts.js';

/**
 * Tally XML for TallyPrime's import (Gateway of Tally → Import → Transactions, or a POST to its
 * XML port), one legal entity per file: the ledgers the vouchers use, then **one voucher per
 * journal entry** Kosh posted in the range — Sales, Receipt, Credit Note, Contra (a gateway payout),
 * Payment (a refund) and Journal (everything else: voids, TDS certified later, credit applied,
 * expiries, exchange differences, revenue deferral). Amounts are the entries' functional-currency
 * (INR) amounts (DESIGN §19); a foreign entry's currency amount and rate are in the narration.
 * So the export, summed per ledger, is the entity's functional trial balance over the range.
 * Tally signs amounts from the ledger's side: a debit is negative with ISDEEMEDPOSITIVE Yes, a
 * credit positive with No; a voucher balances when its amounts sum to zero. Each voucher has a
 * REMOTEID (`kosh-<document id>` for the document's own voucher, else `kosh-<entry id>`), so
 * importing the same range twice alters the vouchers instead of duplicating them.
 */
export const TALLY_LEDGERS = {
  sales: { name: 'Sales', parent: 'Sales Accounts' },
  cgst: { name: 'Output CGST', parent: 'Duties & Taxes', dutyHead: 'Central Tax' },
  sgst: { name: 'Output SGST', parent: 'Duties & Taxes', dutyHead: 'State Tax' },
  utgst: { name: 'Output UTGST', parent: 'Duties & Taxes', dutyHead: 'UT Tax' },
  igst: { name: 'Output IGST', parent: 'Duties & Taxes', dutyHead: 'Integrated Tax' },
  tds: { name: 'TDS Receivable', parent: 'Current Assets' },
  bank: { name: 'Bank', parent: 'Bank Accounts' },
  clearing: { name: 'Gateway Clearing', parent: 'Current Assets' },
  refunds: { name: 'Refunds Payable', parent: 'Current Liabilities' },
  deferred: { name: 'Deferred Revenue', parent: 'Current Liabilities' },
  expired: { name: 'Expired Credit Income', parent: 'Indirect Incomes' },
  exchange: { name: 'Exchange Gain/Loss', parent: 'Indirect Incomes' },
  unrealized: { name: 'Unrealized Exchange Gain/Loss', parent: 'Indirect Incomes' },
  rounding: { name: 'Exchange Rounding', parent: 'Indirect Expenses' },
} as const;

type TallyLedger = { name: string; parent: string; dutyHead?: string };

/** The Tally ledger of each account; the party's own ledger holds receivables, credit and advances. */
const LEDGER_OF: Partial<Record<number, TallyLedger>> = {
  1000: TALLY_LEDGERS.bank,
  1050: TALLY_LEDGERS.clearing,
  1200: TALLY_LEDGERS.tds,
  2100: TALLY_LEDGERS.cgst,
  2110: TALLY_LEDGERS.sgst,
  2120: TALLY_LEDGERS.igst,
  2320: TALLY_LEDGERS.refunds,
  2400: TALLY_LEDGERS.deferred,
  // Sales returns are booked against the sales ledger, as Tally's credit notes do.
  4000: TALLY_LEDGERS.sales,
  4900: TALLY_LEDGERS.sales,
  4100: TALLY_LEDGERS.expired,
  4300: TALLY_LEDGERS.exchange,
  4310: TALLY_LEDGERS.unrealized,
  4390: TALLY_LEDGERS.rounding,
};
const PARTY_ACCOUNTS = new Set([1100, 2300, 2310]);

/** An account no fixed ledger names (one a later chart adds): its own ledger, by its chart name. */
function otherLedger(code: number): TallyLedger {
  const name = ACCOUNT_NAMES[code as AccountCode] ?? `Account ${code}`;
  const parent = code < 2000 ? 'Current Assets' : code < 4000 ? 'Current Liabilities' : 'Indirect Incomes';
  return { name, parent };
}

const VOUCHER_TYPE: Record<string, 'Sales' | 'Receipt' | 'Credit Note' | 'Contra' | 'Payment'> = {
  'invoice.finalized': 'Sales',
  'payment.recorded': 'Receipt',
  'credit_note.issued': 'Credit Note',
  'payment.settled': 'Contra',
  'refund.created': 'Payment',
  'refund.paid': 'Payment',
};

const PAGE_SIZE = 2_000;

export function xmlEscape(value: string): string {
  return (
    value
      // eslint-disable-next-line no-control-regex
      .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F]/g, '')
      .replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]!)
  );
}

function tag(name: string, value: string): string {
  return `<${name}>${xmlEscape(value)}</${name}>`;
}

/** A voucher's date: the entry's date in the entity's zone. */
function tallyDate(iso: string, timeZone: string): string {
  return localDay(new Date(iso), timeZone).replace(/-/g, '');
}

export function partyLedgerName(customer: Pick<Customer, 'name' | 'email'>): string {
  return customer.name ? `${customer.name} (${customer.email})` : customer.email;
}

type Entry = { ledger: string; debit: number } | { ledger: string; credit: number };

function entry(e: Entry, currency: string, bill?: { name: string; type: 'New Ref' | 'Agst Ref' }): string {
  const debit = 'debit' in e;
  const amount = debit ? -e.debit : e.credit;
  const allocation = bill
    ? `<BILLALLOCATIONS.LIST>${tag('NAME', bill.name)}${tag('BILLTYPE', bill.type)}${tag('AMOUNT', majorUnitsText(amount, currency))}</BILLALLOCATIONS.LIST>`
    : '';
  return `<ALLLEDGERENTRIES.LIST>${tag('LEDGERNAME', e.ledger)}${tag('ISDEEMEDPOSITIVE', debit ? 'Yes' : 'No')}${tag('ISPARTYLEDGER', bill ? 'Yes' : 'No')}${tag('AMOUNT', majorUnitsText(amount, currency))}${allocation}</ALLLEDGERENTRIES.LIST>`;
}

function voucher(
  type: string,
  remoteId: string,
  fields: { date: string; number: string; party?: string; reference?: string; narration: string; placeOfSupply?: string | null },
  entries: string[],
): string {
  const state = gstState(fields.placeOfSupply ?? null);
  return (
    `<TALLYMESSAGE xmlns:UDF="TallyUDF"><VOUCHER REMOTEID="${xmlEscape(remoteId)}" VCHTYPE="${type}" ACTION="Create" OBJVIEW="Accounting Voucher View">` +
    tag('DATE', fields.date) +
    tag('VOUCHERTYPENAME', type) +
    tag('VOUCHERNUMBER', fields.number) +
    (fields.party ? tag('PARTYLEDGERNAME', fields.party) : '') +
    (fields.reference ? tag('REFERENCE', fields.reference) : '') +
    (state ? tag('PLACEOFSUPPLY', state.name) : '') +
    tag('NARRATION', fields.narration) +
    tag('PERSISTEDVIEW', 'Accounting Voucher View') +
    entries.join('') +
    '</VOUCHER></TALLYMESSAGE>'
  );
}

function ledgerMaster(name: string, parent: string, extra = ''): string {
  return `<TALLYMESSAGE xmlns:UDF="TallyUDF"><LEDGER NAME="${xmlEscape(name)}" ACTION="Create">${tag('NAME', name)}${tag('PARENT', parent)}${extra}</LEDGER></TALLYMESSAGE>`;
}

/** Tax ledgers are GST duty heads, so Tally's GST reports read them. */
function fixedLedgerMaster(l: TallyLedger): string {
  return ledgerMaster(l.name, l.parent, l.dutyHead ? tag('TAXTYPE', 'GST') + tag('GSTDUTYHEAD', l.dutyHead) : '');
}

const REGION_NAMES = new Intl.DisplayNames(['en'], { type: 'region' });

/**
 * A customer's party ledger. GST registration as Tally records it: `Regular` with the GSTIN, an SEZ
 * unit or developer also `ISSEZPARTY` (TallyPrime's "Regular – SEZ"), so Tally's GSTR-1 puts its
 * invoices in the SEZ tables; without a GSTIN `Unregistered/Consumer`. An overseas customer has its
 * country by name (Tally's masters name countries, not ISO codes) and no Indian state.
 */
export function customerMaster(customer: Customer): string {
  const state = gstState(customerStateCode(customer));
  const code = customer.billing_address?.country;
  const country = code && code !== 'IN' ? (REGION_NAMES.of(code) ?? code) : 'India';
  const extra =
    tag('ISBILLWISEON', 'Yes') +
    (customer.gstin ? tag('PARTYGSTIN', customer.gstin) + tag('GSTREGISTRATIONTYPE', 'Regular') : tag('GSTREGISTRATIONTYPE', 'Unregistered/Consumer')) +
    tag('ISSEZPARTY', customer.sez ? 'Yes' : 'No') +
    (state ? tag('LEDSTATENAME', state.name) : '') +
    tag('COUNTRYNAME', country) +
    tag('COUNTRYOFRESIDENCE', country) +
    tag('EMAIL', customer.email);
  return ledgerMaster(partyLedgerName(customer), 'Sundry Debtors', extra);
}

/** The entity a Tally file is for: the one named, else the primary (404 for another tenant's or an unknown id). */
export async function tallyEntity(ctx: ReadCtx, entityId: string | undefined): Promise<EntityRow> {
  const entity = entityId ? await findEntity(ctx.tx, ctx.tenantId, entityId) : await findPrimaryEntity(ctx.tx, ctx.tenantId);
  if (!entity) throw errors.notFound('entity');
  return entity;
}

/** The entry's lines as Tally ledger entries: INR amounts, one per ledger (a ledger on both sides nets). */
type Posted = { ledger: TallyLedger | { party: string | null }; net: number; invoiceId: string | null };

function ledgerKey(l: Posted['ledger']): string {
  return 'party' in l ? `party:${l.party ?? ''}` : `ledger:${l.name}`;
}

/**
 * The export, page by page (a large range never sits in memory whole): the fixed ledgers, then for
 * each page of journal lines the customers first seen there and one voucher per entry. `from` and
 * `to` are inclusive dates in the entity's zone.
 */
export async function* tallyExport(ctx: ReadCtx, from: string, to: string, entity: EntityRow): AsyncGenerator<string> {
  yield (
    '<?xml version="1.0" encoding="UTF-8"?>\n<ENVELOPE><HEADER><TALLYREQUEST>Import Data</TALLYREQUEST></HEADER><BODY><IMPORTDATA>' +
    '<REQUESTDESC><REPORTNAME>Vouchers</REPORTNAME></REQUESTDESC><REQUESTDATA>\n'
  );
  for (const l of Object.values(TALLY_LEDGERS)) yield fixedLedgerMaster(l) + '\n';
  const zone = entity.time_zone;
  const [fy, fm, fd] = from.split('-').map(Number) as [number, number, number];
  const [ty, tm, td] = to.split('-').map(Number) as [number, number, number];
  const filter = { entityId: entity.id, from: startOfLocalDay(fy, fm, fd, zone), to: startOfLocalDay(ty, tm, td + 1, zone) };

  const parties = new Map<string, Customer>();
  const others = new Set<number>();
  const invoices = new Map<string, InvoiceRow>();
  const party = (customerId: string | null) => {
    const c = customerId ? parties.get(customerId) : undefined;
    return c ? partyLedgerName(c) : 'Sundry Debtors (no customer)';
  };

  let after: { postedAt: Date; entryId: string; lineId: string } | null = null;
  let pending: ExportRow[] = [];
  for (;;) {
    const page: ExportRow[] = await exportPage(ctx.tx, ctx.tenantId, filter, after, PAGE_SIZE);
    const done = page.length < PAGE_SIZE;
    const rows = [...pending, ...page];
    // The last entry of a full page may go on in the next one: keep it back.
    const lastId = rows.at(-1)?.id;
    pending = done ? [] : rows.filter((r) => r.id === lastId);
    const complete = done ? rows : rows.filter((r) => r.id !== lastId);

    const customerIds = [...new Set(complete.map((r) => r.customer_id).filter((id): id is string => id !== null && !parties.has(id)))];
    for (const c of customerIds.length ? await findCustomers(ctx.tx, ctx.tenantId, customerIds) : []) {
      parties.set(c.id, c);
      yield customerMaster(c) + '\n';
    }
    const invoiceIds = [...new Set(complete.map((r) => r.invoice_id).filter((id): id is string => id !== null && !invoices.has(id)))];
    for (const inv of invoiceIds.length ? await getInvoiceRows(ctx, invoiceIds) : []) invoices.set(inv.id, inv);

    for (let i = 0; i < complete.length;) {
      let j = i;
      while (j < complete.length && complete[j]!.id === complete[i]!.id) j += 1;
      const lines = complete.slice(i, j);
      i = j;
      for (const l of lines) {
        if (!LEDGER_OF[l.account_code] && !PARTY_ACCOUNTS.has(l.account_code) && !others.has(l.account_code)) {
          others.add(l.account_code);
          const o = otherLedger(l.account_code);
          yield ledgerMaster(o.name, o.parent) + '\n';
        }
      }
      const v = await entryVoucher(ctx, lines, zone, invoices, party);
      if (v) yield v + '\n';
    }
    if (done) break;
    const last = page.at(-1)!;
    after = { postedAt: last.posted_at, entryId: last.id, lineId: last.line_id };
  }
  yield '</REQUESTDATA></IMPORTDATA></BODY></ENVELOPE>\n';
}

/** The Tally ledger a journal line posts to: the party's, UTGST on a union-territory invoice, else the account's. */
function lineLedger(l: ExportRow, invoices: Map<string, InvoiceRow>, party: (customerId: string | null) => string): Posted['ledger'] {
  const invoice = l.invoice_id ? invoices.get(l.invoice_id) : undefined;
  if (PARTY_ACCOUNTS.has(l.account_code)) return { party: party(l.customer_id) };
  if (l.account_code === 2110 && invoice?.utgst) return TALLY_LEDGERS.utgst;
  return LEDGER_OF[l.account_code] ?? otherLedger(l.account_code);
}

/** The entry's lines netted per Tally ledger (INR amounts; an entry booked without a rate keeps its own currency's), zero nets left out. */
function netPerLedger(lines: ExportRow[], valued: boolean, invoices: Map<string, InvoiceRow>, party: (customerId: string | null) => string): Posted[] {
  const posted = new Map<string, Posted>();
  for (const l of lines) {
    const ledger = lineLedger(l, invoices, party);
    const net = valued ? Number(l.functional_debit) - Number(l.functional_credit) : Number(l.debit) - Number(l.credit);
    const key = ledgerKey(ledger);
    const p = posted.get(key) ?? { ledger, net: 0, invoiceId: null };
    p.net += net;
    p.invoiceId = p.invoiceId ?? (PARTY_ACCOUNTS.has(l.account_code) ? l.invoice_id : null);
    posted.set(key, p);
  }
  return [...posted.values()].filter((p) => p.net !== 0);
}

/** The voucher's number (its document's) and reference (the bill it settles, when that is another document). */
async function voucherNumbering(
  ctx: ReadCtx,
  e: ExportRow,
  documentInvoice: InvoiceRow | undefined,
  billInvoice: InvoiceRow | undefined,
): Promise<{ number: string; reference: string | undefined }> {
  let number = e.reference_id.slice(0, 18);
  let reference: string | undefined;
  if (documentInvoice?.number) number = documentInvoice.number;
  if (e.reference_type === 'credit_note') number = (await getCreditNote(ctx, e.reference_id)).number ?? number;
  if (billInvoice?.number && billInvoice.id !== documentInvoice?.id) reference = billInvoice.number;
  return { number, reference };
}

/** The entry's description, with its own currency's amount and rate when it is not booked in INR (or not valued). */
function narrationOf(e: ExportRow, lines: ExportRow[], currency: string, valued: boolean): string {
  const foreign = e.currency !== currency || !valued;
  if (!foreign) return e.description;
  const amountText = majorUnitsText(
    lines.reduce((sum, l) => sum + Number(l.debit), 0),
    e.currency,
  );
  return `${e.description} (${e.currency} ${amountText}${e.exchange_rate ? ` @ ${e.exchange_rate} ${currency}` : ', not valued'})`;
}

/** One journal entry as one voucher (null when its lines net to nothing per ledger, e.g. credit applied within one party). */
async function entryVoucher(
  ctx: ReadCtx,
  lines: ExportRow[],
  zone: string,
  invoices: Map<string, InvoiceRow>,
  party: (customerId: string | null) => string,
): Promise<string | null> {
  const e = lines[0]!;
  const currency = e.functional_currency ?? e.currency;
  const valued = lines.every((l) => l.functional_debit !== null && l.functional_credit !== null);
  const kept = netPerLedger(lines, valued, invoices, party);
  if (kept.length === 0) return null;
  const type = VOUCHER_TYPE[e.kind] ?? 'Journal';
  const documentInvoice = e.reference_type === 'invoice' ? invoices.get(e.reference_id) : undefined;
  const ownInvoice = kept.map((p) => p.invoiceId).find((id) => id !== null);
  const billInvoice = ownInvoice ? invoices.get(ownInvoice) : undefined;
  const entries = kept.map((p) => {
    const name = 'party' in p.ledger ? p.ledger.party! : p.ledger.name;
    const amount = p.net > 0 ? { ledger: name, debit: p.net } : { ledger: name, credit: -p.net };
    const bill =
      'party' in p.ledger && billInvoice?.number
        ? { name: billInvoice.number, type: type === 'Sales' ? ('New Ref' as const) : ('Agst Ref' as const) }
        : undefined;
    return entry(amount, currency, bill);
  });
  const { number, reference } = await voucherNumbering(ctx, e, documentInvoice, billInvoice);
  const partyName = kept.map((p) => ('party' in p.ledger ? p.ledger.party! : null)).find((n) => n !== null) ?? undefined;
  // A document's own voucher keeps the document's id (re-importing alters it); others the entry's.
  const ownVoucher = e.kind === 'invoice.finalized' || e.kind === 'payment.recorded' || e.kind === 'credit_note.issued';
  return voucher(
    type,
    `kosh-${ownVoucher ? e.reference_id : e.id}`,
    {
      date: tallyDate(e.posted_at.toISOString(), zone),
      number,
      party: partyName,
      reference,
      narration: narrationOf(e, lines, currency, valued),
      placeOfSupply: billInvoice?.place_of_supply ?? null,
    },
    entries,
  );
}
