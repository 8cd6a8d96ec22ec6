import { createHash } from 'node:crypto';
import { gstState } from '../../tax/index.js';
import { majorUnits } from '../amounts.js';
import { basicAuth, bearer, callProvider, ProviderError } from './http.js';
import { gstKeys, taxCodeFor, taxKey, type AccountingAdapter, type ProviderSession, type ResolvedRefs, type SyncDoc, type TaxedLine } from './provider.js';

/**
 * Xero Accounting API (`/api.xro/2.0`), one organisation per connection (`xero-tenant-id`).
 * Creates and updates are both POSTs; an update names the record's id in the body. Payments are
 * immutable in Xero (only deleted), and so are they in Kosh: a synced payment is never re-sent.
 * Every write carries an `Idempotency-Key`, which Xero honours for retried requests.
 */
type XeroError = {
  Message?: string;
  Detail?: string;
  Title?: string;
  ErrorNumber?: number;
  Elements?: { ValidationErrors?: { Message?: string }[] }[];
};

function describeError(_status: number, body: unknown): { message: string; code?: string } {
  const e = body as XeroError;
  const validation = (e.Elements ?? [])
    .flatMap((el) => el.ValidationErrors ?? [])
    .map((v) => v.Message)
    .filter(Boolean);
  const message = [e.Message ?? e.Title ?? e.Detail, ...validation].filter(Boolean).join(': ') || JSON.stringify(body).slice(0, 300);
  return { message, code: e.ErrorNumber !== undefined ? String(e.ErrorNumber) : undefined };
}

function headers(session: ProviderSession, idempotencyKey?: string): Record<string, string> {
  return {
    ...bearer(session.accessToken),
    'xero-tenant-id': session.externalTenantId,
    'content-type': 'application/json',
    ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
  };
}

function lineItem(line: TaxedLine, currency: string, taxType: string, refs: ResolvedRefs) {
  return {
    Description: line.description,
    Quantity: line.quantity,
    UnitAmount: majorUnits(line.unit_amount, currency),
    LineAmount: majorUnits(line.amount, currency),
    AccountCode: refs.accounts.income,
    TaxType: taxCodeFor(refs, taxKey(taxType, line.rate_bp)),
    // Kosh computed the GST (per line, half-up); Xero is told the amount rather than left to round.
    TaxAmount: majorUnits(line.tax_amount, currency),
  };
}

function placeOfSupplyText(code: string | null): string | undefined {
  const state = gstState(code);
  return state ? `Place of supply: ${state.code}-${state.name}` : undefined;
}

const COLLECTION: Record<SyncDoc['type'], { path: string; key: string; id: string; method: 'POST' | 'PUT' }> = {
  customer: { path: 'Contacts', key: 'Contacts', id: 'ContactID', method: 'POST' },
  invoice: { path: 'Invoices', key: 'Invoices', id: 'InvoiceID', method: 'POST' },
  payment: { path: 'Payments', key: 'Payments', id: 'PaymentID', method: 'PUT' },
  payment_tds: { path: 'Payments', key: 'Payments', id: 'PaymentID', method: 'PUT' },
  credit_note: { path: 'CreditNotes', key: 'CreditNotes', id: 'CreditNoteID', method: 'POST' },
  refund: { path: 'Payments', key: 'Payments', id: 'PaymentID', method: 'PUT' },
};

/** A customer as a Xero contact: name with e-mail (Xero names are unique), GSTIN, phone, postal address. */
function xeroContact(c: Extract<SyncDoc, { type: 'customer' }>['doc']): Record<string, unknown> {
  return {
    Name: `${c.name} (${c.email})`.slice(0, 255),
    EmailAddress: c.email,
    ...(c.gstin ? { TaxNumber: c.gstin } : {}),
    ...(c.phone ? { Phones: [{ PhoneType: 'DEFAULT', PhoneNumber: c.phone }] } : {}),
    Addresses: [
      {
        AddressType: 'POBOX',
        AddressLine1: c.address?.line1 ?? undefined,
        AddressLine2: c.address?.line2 ?? undefined,
        City: c.address?.city ?? undefined,
        Region: gstState(c.place_of_supply)?.name ?? c.address?.state_code ?? undefined,
        PostalCode: c.address?.postal_code ?? undefined,
        Country: c.country,
      },
    ],
  };
}

export function xeroBody(item: SyncDoc, refs: ResolvedRefs): Record<string, unknown> {
  switch (item.type) {
    case 'customer':
      return xeroContact(item.doc);
    case 'invoice': {
      const d = item.doc;
      return {
        Type: 'ACCREC',
        Contact: { ContactID: d.customer_external_id },
        InvoiceNumber: d.number,
        Reference: placeOfSupplyText(d.place_of_supply),
        Date: d.date,
        DueDate: d.due_date ?? d.date,
        CurrencyCode: d.currency,
        LineAmountTypes: 'Exclusive',
        Status: 'AUTHORISED',
        LineItems: d.lines.map((l) => lineItem(l, d.currency, d.tax_type, refs)),
      };
    }
    case 'payment':
    case 'payment_tds': {
      const p = item.doc;
      const tds = item.type === 'payment_tds';
      return {
        Invoice: { InvoiceID: p.invoice_external_id },
        // TDS is booked as a payment into the TDS receivable account (payments enabled on it).
        Account: { Code: tds ? refs.accounts.tds_receivable : refs.accounts.bank },
        Date: p.date,
        Amount: majorUnits(tds ? p.tds_amount : p.amount, p.currency),
        Reference: tds ? `TDS ${p.reference}` : p.reference,
      };
    }
    case 'credit_note': {
      const d = item.doc;
      return {
        Type: 'ACCRECCREDIT',
        Contact: { ContactID: d.customer_external_id },
        CreditNoteNumber: d.number,
        Reference: [d.invoice_number, placeOfSupplyText(d.place_of_supply)].filter(Boolean).join(' ') || undefined,
        Date: d.date,
        CurrencyCode: d.currency,
        LineAmountTypes: 'Exclusive',
        Status: 'AUTHORISED',
        LineItems: [lineItem(d.line, d.currency, d.tax_type, refs)],
      };
    }
    case 'refund':
      return xeroRefundPayments(item.doc, refs)[0]!;
  }
}

/**
 * Xero refunds a credit note with a payment on it (`PUT /Payments` naming `CreditNote`), out of
 * the bank account. A refund that paid out the balances of several notes (DESIGN §20) is one such
 * payment per note with that note's share, sent together in one request (Xero's Payments endpoint
 * takes several; one idempotency key covers them): each note's remaining credit falls by its own
 * share, never the whole refund on the first note (docs/decisions/0570).
 */
export function xeroRefundPayments(r: Extract<SyncDoc, { type: 'refund' }>['doc'], refs: ResolvedRefs): Record<string, unknown>[] {
  const shares =
    r.pays_out && r.pays_out.length > 0
      ? r.pays_out.map((n) => ({ note: n.external_id, amount: n.amount }))
      : [{ note: r.credit_note_external_id, amount: r.amount }];
  return shares.map((share) => ({
    CreditNote: { CreditNoteID: share.note },
    Account: { Code: refs.accounts.bank },
    Date: r.date,
    Amount: majorUnits(share.amount, r.currency),
    Reference: `Refund ${r.reference}`,
  }));
}

/**
 * Deletes one payment (`POST /Payments/{PaymentID}` with `Status: DELETED`, the Payments
 * reference's only change to a payment). Its Idempotency-Key replays a retried delete; a payment
 * found DELETED when Xero refuses the change was deleted by an earlier attempt.
 */
async function deletePayment(session: ProviderSession, paymentId: string, idempotencyKey: string): Promise<void> {
  const url = `${session.config.apiUrl}/Payments/${encodeURIComponent(paymentId)}`;
  try {
    await callProvider(
      url,
      { method: 'POST', headers: headers(session, idempotencyKey), body: JSON.stringify({ Status: 'DELETED' }) },
      describeError,
      session.nowMs,
    );
  } catch (error) {
    if (!(error instanceof ProviderError && (error.kind === 'invalid' || error.kind === 'not_found'))) throw error;
    if (error.kind === 'not_found') return;
    const res = await callProvider(url, { headers: headers(session) }, describeError, session.nowMs);
    const payment = ((res.body as { Payments?: { Status?: string }[] }).Payments ?? [])[0];
    if (payment?.Status !== 'DELETED') throw error;
  }
}

/** One key per payment of a refund, derived from the refund's. */
function paymentKey(key: string, paymentId: string): string {
  const h = createHash('sha256').update(`${key}:void:${paymentId}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

export const xero: AccountingAdapter = {
  provider: 'xero',
  scopes: 'openid offline_access accounting.transactions accounting.contacts accounting.settings.read',
  authorizeParams: {},
  tokenAuth: 'basic',
  recordTypes: ['customer', 'invoice', 'payment', 'payment_tds', 'credit_note', 'refund'],
  refundAs: 'credit_note',
  // Xero has no India edition: GST is booked with the organisation's standard output tax
  // (`OUTPUT`) and the amount Kosh computed; zero-rated supplies use `ZERORATEDOUTPUT`.
  defaultMapping: {
    tax_codes: gstKeys(
      () => 'OUTPUT',
      () => 'OUTPUT',
      'ZERORATEDOUTPUT',
    ),
    accounts: { income: '200', bank: '090', tds_receivable: '820' },
    item: '',
  },

  async pickCompany(config, accessToken, _callback, nowMs) {
    const res = await callProvider(config.connectionsUrl ?? 'https://api.xero.com/connections', { headers: bearer(accessToken) }, describeError, nowMs);
    const tenants = (Array.isArray(res.body) ? res.body : []) as { tenantId?: string; tenantType?: string; tenantName?: string }[];
    // The user picks the organisation on Xero's consent screen; a token can reach several, the
    // newest authorised one is first. Only organisations carry the accounting API.
    const org = tenants.find((t) => t.tenantType === 'ORGANISATION' && t.tenantId);
    if (!org?.tenantId) throw new ProviderError('invalid', 'the Xero token reaches no organisation', 400);
    return { id: org.tenantId, name: org.tenantName ?? null };
  },

  async revoke(config, refreshToken, nowMs) {
    await callProvider(
      config.revokeUrl,
      {
        method: 'POST',
        headers: { authorization: basicAuth(config), 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token: refreshToken }).toString(),
      },
      describeError,
      nowMs,
    );
  },

  async resolveRefs(_session, mapping) {
    // Xero addresses tax rates by TaxType and accounts by code: nothing to look up.
    return { taxCodes: mapping.tax_codes, item: mapping.item, accounts: mapping.accounts };
  },

  async push(session, item, refs, existing, idempotencyKey) {
    const c = COLLECTION[item.type];
    if (existing && c.method === 'PUT') return existing; // payments cannot be edited in Xero
    const records =
      item.type === 'refund' ? xeroRefundPayments(item.doc, refs) : [{ ...xeroBody(item, refs), ...(existing ? { [c.id]: existing.external_id } : {}) }];
    const res = await callProvider(
      `${session.config.apiUrl}/${c.path}`,
      { method: c.method, headers: headers(session, idempotencyKey), body: JSON.stringify({ [c.key]: records }) },
      describeError,
      session.nowMs,
    );
    const saved = ((res.body as Record<string, Record<string, string>[] | undefined>)[c.key] ?? []).slice(0, records.length);
    const ids = saved.map((r) => r[c.id]);
    if (saved.length < records.length || ids.some((id) => !id)) throw new ProviderError('invalid', `Xero answered without ${c.id}`, res.status);
    // A refund of several notes is several payments: their ids, comma-separated, in the order of the notes.
    return { external_id: ids.join(','), external_version: saved[0]!.UpdatedDateUTC ?? null };
  },

  async voidRefund(session, _doc, existing, idempotencyKey) {
    // The refund is a payment on each credit note it paid out of: deleting them gives the notes' credit back.
    for (const paymentId of existing.external_id.split(',').filter(Boolean)) await deletePayment(session, paymentId, paymentKey(idempotencyKey, paymentId));
  },
};
