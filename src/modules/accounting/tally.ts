import type { Ctx } from '../../platform/context.js';
import { listCreditNotes, type CreditNote } from '../credit-notes/index.js';
import { customerStateCode, findCustomers, type Customer } from '../customers/index.js';
import { listInvoices, type Invoice } from '../invoices/index.js';
import { listPayments, type Payment } from '../payments/index.js';
import { gstState } from '../tax/index.js';
import { majorUnitsText } from './amounts.js';
import { INDIA_TIME, localDate } from './dates.js';

/**
 * Tally XML for TallyPrime's import (Gateway of Tally → Import → Transactions, or a POST to its
 * XML port): one ENVELOPE whose TALLYMESSAGEs carry the ledgers the vouchers use, then Sales,
 * Receipt and Credit Note vouchers. Tally signs amounts from the ledger's side: a debit is
 * negative with ISDEEMEDPOSITIVE Yes, a credit positive with No; a voucher balances when its
 * amounts sum to zero. Each voucher has a REMOTEID (`kosh-<id>`), so importing the same range
 * twice alters the vouchers instead of duplicating them.
 */
export const TALLY_LEDGERS = {
  sales: { name: 'Sales', parent: 'Sales Accounts' },
  cgst: { name: 'Output CGST', parent: 'Duties & Taxes' },
  sgst: { name: 'Output SGST', parent: 'Duties & Taxes' },
  igst: { name: 'Output IGST', parent: 'Duties & Taxes' },
  tds: { name: 'TDS Receivable', parent: 'Current Assets' },
  bank: { name: 'Bank', parent: 'Bank Accounts' },
} as const;

const PAGE_SIZE = 200;

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

/** Tally books are Indian books: dates (and the export's range) are India dates. */
function tallyDate(iso: string): string {
  return localDate(iso, INDIA_TIME).replace(/-/g, '');
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
  type: 'Sales' | 'Receipt' | 'Credit Note',
  remoteId: string,
  fields: { date: string; number: string; party: string; reference?: string; narration: string; placeOfSupply?: string | null },
  entries: string[],
): string {
  const state = gstState(fields.placeOfSupply ?? null);
  return (
    `<TALLYMESSAGE xmlns:UDF="TallyUDF"><VOUCHER REMOTEID="${xmlEscape(remoteId)}" VCHTYPE="${type}" ACTION="Create" OBJVIEW="Accounting Voucher View">` +
    tag('DATE', tallyDate(fields.date)) +
    tag('VOUCHERTYPENAME', type) +
    tag('VOUCHERNUMBER', fields.number) +
    tag('PARTYLEDGERNAME', fields.party) +
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

function customerMaster(customer: Customer): string {
  const state = gstState(customerStateCode(customer));
  const extra =
    tag('ISBILLWISEON', 'Yes') +
    (customer.gstin ? tag('PARTYGSTIN', customer.gstin) + tag('GSTREGISTRATIONTYPE', 'Regular') : tag('GSTREGISTRATIONTYPE', 'Unregistered/Consumer')) +
    (state ? tag('LEDSTATENAME', state.name) : '') +
    tag('COUNTRYNAME', customer.billing_address?.country === 'IN' || !customer.billing_address ? 'India' : customer.billing_address.country) +
    tag('EMAIL', customer.email);
  return ledgerMaster(partyLedgerName(customer), 'Sundry Debtors', extra);
}

export function salesVoucher(invoice: Invoice, party: string): string {
  const c = invoice.currency;
  const entries = [
    entry({ ledger: party, debit: invoice.total }, c, { name: invoice.number!, type: 'New Ref' }),
    entry({ ledger: TALLY_LEDGERS.sales.name, credit: invoice.subtotal }, c),
  ];
  if (invoice.cgst_amount) entries.push(entry({ ledger: TALLY_LEDGERS.cgst.name, credit: invoice.cgst_amount }, c));
  if (invoice.sgst_amount) entries.push(entry({ ledger: TALLY_LEDGERS.sgst.name, credit: invoice.sgst_amount }, c));
  if (invoice.igst_amount) entries.push(entry({ ledger: TALLY_LEDGERS.igst.name, credit: invoice.igst_amount }, c));
  return voucher(
    'Sales',
    `kosh-${invoice.id}`,
    {
      date: invoice.issued_at ?? invoice.created_at,
      number: invoice.number!,
      party,
      narration: `Invoice ${invoice.number}`,
      placeOfSupply: invoice.place_of_supply,
    },
    entries,
  );
}

export function receiptVoucher(payment: Payment, party: string, invoiceNumber: string | undefined): string {
  const c = payment.currency;
  const entries: string[] = [];
  if (payment.amount) entries.push(entry({ ledger: TALLY_LEDGERS.bank.name, debit: payment.amount }, c));
  if (payment.tds_amount) entries.push(entry({ ledger: TALLY_LEDGERS.tds.name, debit: payment.tds_amount }, c));
  entries.push(entry({ ledger: party, credit: payment.amount + payment.tds_amount }, c, invoiceNumber ? { name: invoiceNumber, type: 'Agst Ref' } : undefined));
  const number = payment.reference_number || payment.id.slice(0, 18);
  return voucher(
    'Receipt',
    `kosh-${payment.id}`,
    {
      date: payment.recorded_at,
      number,
      party,
      reference: invoiceNumber,
      narration: `Payment ${number}${payment.tds_amount ? ` (TDS ${majorUnitsText(payment.tds_amount, c)})` : ''}`,
    },
    entries,
  );
}

export function creditNoteVoucher(note: CreditNote, party: string, invoiceNumber: string | undefined, placeOfSupply: string | null): string {
  const c = note.currency;
  const net = note.subtotal > 0 ? note.subtotal : note.amount;
  const entries = [entry({ ledger: TALLY_LEDGERS.sales.name, debit: net }, c)];
  if (note.cgst_amount) entries.push(entry({ ledger: TALLY_LEDGERS.cgst.name, debit: note.cgst_amount }, c));
  if (note.sgst_amount) entries.push(entry({ ledger: TALLY_LEDGERS.sgst.name, debit: note.sgst_amount }, c));
  if (note.igst_amount) entries.push(entry({ ledger: TALLY_LEDGERS.igst.name, debit: note.igst_amount }, c));
  entries.unshift(entry({ ledger: party, credit: note.amount }, c, invoiceNumber ? { name: invoiceNumber, type: 'Agst Ref' } : undefined));
  return voucher(
    'Credit Note',
    `kosh-${note.id}`,
    {
      date: note.issued_at ?? note.created_at,
      number: note.number!,
      party,
      reference: invoiceNumber,
      narration: note.reason || `Credit note ${note.number}`,
      placeOfSupply,
    },
    entries,
  );
}

function inRange(iso: string | null, from: string, to: string): boolean {
  if (!iso) return false;
  const d = localDate(iso, INDIA_TIME);
  return d >= from && d <= to;
}

/** Pages through a list, yielding only items in the date range. */
async function* inPages<T>(fetchPage: (page: { limit: number; page: number; offset: number }) => Promise<{ items: T[]; total: number }>): AsyncGenerator<T[]> {
  for (let n = 1; ; n++) {
    const { items, total } = await fetchPage({ limit: PAGE_SIZE, page: n, offset: (n - 1) * PAGE_SIZE });
    yield items;
    if (n * PAGE_SIZE >= total || items.length === 0) return;
  }
}

/**
 * The export, produced page by page (a large range never sits in memory whole): ledger masters
 * of the fixed ledgers, then per page of documents the customers first seen there and the
 * vouchers. Dates are India dates, `from` and `to` inclusive.
 */
export async function* tallyExport(ctx: Ctx, from: string, to: string): AsyncGenerator<string> {
  yield (
    '<?xml version="1.0" encoding="UTF-8"?>\n<ENVELOPE><HEADER><TALLYREQUEST>Import Data</TALLYREQUEST></HEADER><BODY><IMPORTDATA>' +
    '<REQUESTDESC><REPORTNAME>Vouchers</REPORTNAME></REQUESTDESC><REQUESTDATA>\n'
  );
  for (const l of Object.values(TALLY_LEDGERS)) yield ledgerMaster(l.name, l.parent) + '\n';

  const parties = new Map<string, Customer>();
  const invoiceNumbers = new Map<string, string>();
  async function* partiesOf(customerIds: string[]): AsyncGenerator<string> {
    const missing = [...new Set(customerIds)].filter((id) => !parties.has(id));
    if (missing.length === 0) return;
    for (const c of await findCustomers(ctx.tx, ctx.tenantId, missing)) {
      parties.set(c.id, c);
      yield customerMaster(c) + '\n';
    }
  }
  const party = (customerId: string) => {
    const c = parties.get(customerId);
    return c ? partyLedgerName(c) : customerId;
  };

  for await (const page of inPages((p) =>
    listInvoices(ctx, { statuses: ['open', 'paid', 'uncollectible'] }, p).then((r) => ({ items: r.invoices, total: r.total })),
  )) {
    for (const inv of page) if (inv.number) invoiceNumbers.set(inv.id, inv.number);
    const selected = page.filter((inv) => inv.number && inRange(inv.issued_at, from, to));
    yield* partiesOf(selected.map((inv) => inv.customer_id));
    for (const inv of selected) yield salesVoucher(inv, party(inv.customer_id)) + '\n';
  }
  for await (const page of inPages((p) => listPayments(ctx, {}, p).then((r) => ({ items: r.payments, total: r.total })))) {
    const selected = page.filter((p) => inRange(p.recorded_at, from, to) && p.amount + p.tds_amount > 0);
    yield* partiesOf(selected.map((p) => p.customer_id));
    for (const p of selected) yield receiptVoucher(p, party(p.customer_id), p.invoice_id ? invoiceNumbers.get(p.invoice_id) : undefined) + '\n';
  }
  for await (const page of inPages((p) => listCreditNotes(ctx, {}, p).then((r) => ({ items: r.notes, total: r.total })))) {
    const selected = page.filter((n) => n.number && ['issued', 'used', 'expired'].includes(n.status) && inRange(n.issued_at, from, to));
    yield* partiesOf(selected.map((n) => n.customer_id));
    for (const n of selected) {
      const customer = parties.get(n.customer_id);
      yield (
        creditNoteVoucher(n, party(n.customer_id), n.invoice_id ? invoiceNumbers.get(n.invoice_id) : undefined, customer ? customerStateCode(customer) : null) +
        '\n'
      );
    }
  }
  yield '</REQUESTDATA></IMPORTDATA></BODY></ENVELOPE>\n';
}
