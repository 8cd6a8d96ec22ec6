import { majorUnits } from '../amounts.js';
import { callProvider, ProviderError } from './http.js';
import {
  gstKeys,
  taxCodeFor,
  taxKey,
  type AccountingAdapter,
  type ExternalRef,
  type ProviderSession,
  type ResolvedRefs,
  type SyncDoc,
  type TaxedLine,
} from './provider.js';

/**
 * Zoho Books API v3 (`/books/v3/...?organization_id=`), authorised with `Zoho-oauthtoken`. Kosh's
 * document numbers are kept (`ignore_auto_number_generation=true`); updates are PUTs to the
 * record's id. Zoho does not rotate refresh tokens: a refresh answers an access token only.
 */
type ZohoError = { code?: number; message?: string };

function describeError(_status: number, body: unknown): { message: string; code?: string } {
  const e = body as ZohoError;
  return { message: e.message ?? JSON.stringify(body).slice(0, 300), code: e.code !== undefined ? String(e.code) : undefined };
}

/** GST state codes as Zoho Books writes places of supply (ISO 3166-2:IN subdivisions). */
const ZOHO_STATE: Record<string, string> = {
  '01': 'JK',
  '02': 'HP',
  '03': 'PB',
  '04': 'CH',
  '05': 'UT',
  '06': 'HR',
  '07': 'DL',
  '08': 'RJ',
  '09': 'UP',
  '10': 'BR',
  '11': 'SK',
  '12': 'AR',
  '13': 'NL',
  '14': 'MN',
  '15': 'MZ',
  '16': 'TR',
  '17': 'ML',
  '18': 'AS',
  '19': 'WB',
  '20': 'JH',
  '21': 'OR',
  '22': 'CG',
  '23': 'MP',
  '24': 'GJ',
  '26': 'DN',
  '27': 'MH',
  '29': 'KA',
  '30': 'GA',
  '31': 'LD',
  '32': 'KL',
  '33': 'TN',
  '34': 'PY',
  '35': 'AN',
  '36': 'TG',
  '37': 'AD',
  '38': 'LA',
  '97': 'OT',
};

export function zohoPlaceOfSupply(code: string | null): string | undefined {
  return code ? ZOHO_STATE[code] : undefined;
}

function gstTreatment(gstin: string | null, country: string): string {
  if (country !== 'IN') return 'overseas';
  return gstin ? 'business_gst' : 'consumer';
}

function url(session: ProviderSession, path: string, query: Record<string, string> = {}): string {
  const u = new URL(`${session.config.apiUrl}/${path}`);
  u.searchParams.set('organization_id', session.externalTenantId);
  for (const [k, v] of Object.entries(query)) u.searchParams.set(k, v);
  return u.toString();
}

function headers(accessToken: string): Record<string, string> {
  return { authorization: `Zoho-oauthtoken ${accessToken}`, accept: 'application/json', 'content-type': 'application/json' };
}

function lineItem(line: TaxedLine, currency: string, taxType: string, refs: ResolvedRefs) {
  return {
    description: line.description,
    quantity: line.quantity,
    rate: majorUnits(line.unit_amount, currency),
    hsn_or_sac: line.hsn_code || undefined,
    tax_id: taxCodeFor(refs, taxKey(taxType, line.rate_bp)),
    ...(refs.accounts.income ? { account_id: refs.accounts.income } : {}),
  };
}

type Resource = { path: string; key: string; id: string; numbered: boolean; list: string };

const RESOURCE: Record<Exclude<SyncDoc['type'], 'refund'>, Resource> = {
  customer: { path: 'contacts', key: 'contact', id: 'contact_id', numbered: false, list: 'contacts' },
  invoice: { path: 'invoices', key: 'invoice', id: 'invoice_id', numbered: true, list: 'invoices' },
  payment: { path: 'customerpayments', key: 'payment', id: 'payment_id', numbered: false, list: 'customerpayments' },
  payment_tds: { path: 'customerpayments', key: 'payment', id: 'payment_id', numbered: false, list: 'customerpayments' },
  credit_note: { path: 'creditnotes', key: 'creditnote', id: 'creditnote_id', numbered: true, list: 'creditnotes' },
};

/** A refund lives under its credit note: `/creditnotes/{creditnote_id}/refunds`. */
function refundResource(creditNoteId: string): Resource {
  return {
    path: `creditnotes/${encodeURIComponent(creditNoteId)}/refunds`,
    key: 'creditnote_refund',
    id: 'creditnote_refund_id',
    numbered: false,
    list: 'creditnote_refunds',
  };
}

function resourceOf(item: SyncDoc): Resource {
  return item.type === 'refund' ? refundResource(item.doc.credit_note_external_id) : RESOURCE[item.type];
}

/** Kosh's mark on payments and refunds, which carry no number of their own: how a lost create is found again. */
const koshMark = (kind: string, id: string) => `Kosh ${kind} ${id}`;

/**
 * The unique mark of a document and the list filter that finds it (decision 0160): contacts by
 * their display name (name and e-mail), invoices and credit notes by Kosh's number, payments by
 * reference number then Kosh's mark in the description, refunds by the mark among the note's refunds.
 */
function lookupOf(item: SyncDoc, body: Record<string, unknown>): { query: Record<string, string>; matches: (row: Record<string, unknown>) => boolean } {
  switch (item.type) {
    case 'customer':
      return { query: { contact_name: String(body.contact_name) }, matches: (row) => row.contact_name === body.contact_name };
    case 'invoice':
      return { query: { invoice_number: item.doc.number }, matches: (row) => row.invoice_number === item.doc.number };
    case 'credit_note':
      return { query: { creditnote_number: item.doc.number }, matches: (row) => row.creditnote_number === item.doc.number };
    case 'payment':
    case 'payment_tds':
      return { query: { reference_number: item.doc.reference }, matches: (row) => row.description === body.description };
    case 'refund':
      return { query: {}, matches: (row) => row.description === body.description };
  }
}

/** A customer as a Zoho Books contact: GST treatment and number, place of contact, billing address, primary contact person. */
function zohoContact(c: Extract<SyncDoc, { type: 'customer' }>['doc']): Record<string, unknown> {
  return {
    contact_name: `${c.name} (${c.email})`.slice(0, 200),
    company_name: c.name,
    contact_type: 'customer',
    gst_treatment: gstTreatment(c.gstin, c.country),
    ...(c.gstin ? { gst_no: c.gstin } : {}),
    ...(zohoPlaceOfSupply(c.place_of_supply) ? { place_of_contact: zohoPlaceOfSupply(c.place_of_supply) } : {}),
    billing_address: {
      address: c.address?.line1 ?? undefined,
      street2: c.address?.line2 ?? undefined,
      city: c.address?.city ?? undefined,
      state_code: zohoPlaceOfSupply(c.address?.state_code ?? null),
      zip: c.address?.postal_code ?? undefined,
      country: c.country,
    },
    contact_persons: [{ email: c.email, ...(c.phone ? { phone: c.phone } : {}), is_primary_contact: true }],
  };
}

export function zohoBody(item: SyncDoc, refs: ResolvedRefs): Record<string, unknown> {
  switch (item.type) {
    case 'customer':
      return zohoContact(item.doc);
    case 'invoice': {
      const d = item.doc;
      return {
        customer_id: d.customer_external_id,
        invoice_number: d.number,
        date: d.date,
        ...(d.due_date ? { due_date: d.due_date } : {}),
        currency_code: d.currency,
        ...(zohoPlaceOfSupply(d.place_of_supply) ? { place_of_supply: zohoPlaceOfSupply(d.place_of_supply) } : {}),
        gst_treatment: gstTreatment(d.customer_gstin, d.tax_type === 'export' ? 'XX' : 'IN'),
        ...(d.customer_gstin ? { gst_no: d.customer_gstin } : {}),
        is_inclusive_tax: false,
        line_items: d.lines.map((l) => lineItem(l, d.currency, d.tax_type, refs)),
      };
    }
    case 'payment':
    case 'payment_tds': {
      const p = item.doc;
      return {
        customer_id: p.customer_external_id,
        payment_mode: 'banktransfer',
        amount: majorUnits(p.amount, p.currency),
        date: p.date,
        reference_number: p.reference,
        description: koshMark('payment', p.id),
        ...(refs.accounts.bank ? { account_id: refs.accounts.bank } : {}),
        // TDS rides on the same payment as Zoho books it: withheld against the invoice, into the
        // tax (TDS receivable) account.
        invoices: [
          { invoice_id: p.invoice_external_id, amount_applied: majorUnits(p.amount, p.currency), tax_amount_withheld: majorUnits(p.tds_amount, p.currency) },
        ],
        ...(p.tds_amount > 0 && refs.accounts.tds_receivable ? { tax_account_id: refs.accounts.tds_receivable } : {}),
      };
    }
    case 'credit_note': {
      const d = item.doc;
      return {
        customer_id: d.customer_external_id,
        creditnote_number: d.number,
        date: d.date,
        currency_code: d.currency,
        ...(zohoPlaceOfSupply(d.place_of_supply) ? { place_of_supply: zohoPlaceOfSupply(d.place_of_supply) } : {}),
        gst_treatment: gstTreatment(d.customer_gstin, d.tax_type === 'export' ? 'XX' : 'IN'),
        ...(d.invoice_number ? { reference_number: d.invoice_number } : {}),
        notes: d.reason || undefined,
        is_inclusive_tax: false,
        line_items: [lineItem(d.line, d.currency, d.tax_type, refs)],
      };
    }
    case 'refund':
      return zohoRefundShares(item.doc, refs)[0]!.body;
  }
}

/**
 * Zoho records the money paid out of the bank account against a credit note
 * (`POST /creditnotes/{creditnote_id}/refunds`). A refund that paid out the balances of several
 * notes (DESIGN §20) is one such refund under each note with that note's share
 * (docs/decisions/0570); each carries Kosh's mark, so a lost create is found under its note.
 */
export function zohoRefundShares(
  r: Extract<SyncDoc, { type: 'refund' }>['doc'],
  refs: ResolvedRefs,
): { noteExternalId: string; body: Record<string, unknown> }[] {
  const shares =
    r.pays_out && r.pays_out.length > 0
      ? r.pays_out.map((n) => ({ note: n.external_id, amount: n.amount }))
      : [{ note: r.credit_note_external_id, amount: r.amount }];
  return shares.map((share) => ({
    noteExternalId: share.note,
    body: {
      date: r.date,
      refund_mode: 'banktransfer',
      reference_number: r.reference.slice(0, 100),
      amount: majorUnits(share.amount, r.currency),
      description: koshMark('refund', r.id),
      ...(refs.accounts.bank ? { from_account_id: refs.accounts.bank } : {}),
    },
  }));
}

/** The refund Kosh made under one note (found by its mark), or null. */
async function zohoRefundUnder(session: ProviderSession, noteExternalId: string, mark: unknown): Promise<ExternalRef | null> {
  const r = refundResource(noteExternalId);
  const res = await callProvider(url(session, r.path), { headers: headers(session.accessToken) }, describeError, session.nowMs);
  const rows = ((res.body as Record<string, unknown>)[r.list] ?? []) as Record<string, unknown>[];
  const found = Array.isArray(rows) ? rows.find((row) => row.description === mark) : undefined;
  const id = found?.[r.id];
  return typeof id === 'string' && id ? { external_id: id, external_version: (found!.last_modified_time as string | undefined) ?? null } : null;
}

/**
 * A refund of several notes: under each note, the refund Kosh made before (a create whose answer
 * was lost) or a new one. Ids comma-separated in the order of the notes.
 */
async function pushZohoRefundShares(session: ProviderSession, item: Extract<SyncDoc, { type: 'refund' }>, refs: ResolvedRefs): Promise<ExternalRef> {
  const made: ExternalRef[] = [];
  for (const share of zohoRefundShares(item.doc, refs)) {
    const before = await zohoRefundUnder(session, share.noteExternalId, share.body.description);
    if (before) {
      made.push(before);
      continue;
    }
    const r = refundResource(share.noteExternalId);
    const res = await callProvider(
      url(session, r.path),
      { method: 'POST', headers: headers(session.accessToken), body: JSON.stringify(share.body) },
      describeError,
      session.nowMs,
    );
    const saved = (res.body as Record<string, Record<string, string> | undefined>)[r.key];
    const id = saved?.[r.id];
    if (!id) throw new ProviderError('invalid', `Zoho Books answered without ${r.key}.${r.id}`, res.status);
    made.push({ external_id: id, external_version: saved.last_modified_time ?? null });
  }
  return { external_id: made.map((m) => m.external_id).join(','), external_version: made[0]?.external_version ?? null };
}

/**
 * Deletes Kosh's refunds of credit notes (`DELETE /creditnotes/{creditnote_id}/refunds/{creditnote_refund_id}`,
 * the credit-note reference's "Delete credit note refund"): each refund id pairs with its note in
 * the order the refund's shares were pushed. A refund already gone (404) is done; Zoho Books takes
 * no idempotency key.
 */
async function deleteZohoRefunds(session: ProviderSession, r: Extract<SyncDoc, { type: 'refund' }>['doc'], existing: ExternalRef): Promise<void> {
  const notes = r.pays_out && r.pays_out.length > 0 ? r.pays_out.map((n) => n.external_id) : [r.credit_note_external_id];
  const ids = existing.external_id.split(',').filter(Boolean);
  if (ids.length !== notes.length || notes.some((n) => !n))
    throw new ProviderError('invalid', 'the refund’s credit notes at Zoho Books are not known: the refund cannot be deleted', 400);
  for (const [i, id] of ids.entries()) {
    const path = `${refundResource(notes[i]!).path}/${encodeURIComponent(id)}`;
    try {
      await callProvider(url(session, path), { method: 'DELETE', headers: headers(session.accessToken) }, describeError, session.nowMs);
    } catch (error) {
      if (!(error instanceof ProviderError && error.kind === 'not_found')) throw error;
    }
  }
}

export const zohoBooks: AccountingAdapter = {
  provider: 'zoho_books',
  scopes: 'ZohoBooks.contacts.ALL,ZohoBooks.invoices.ALL,ZohoBooks.customerpayments.ALL,ZohoBooks.creditnotes.ALL,ZohoBooks.settings.READ',
  // Without these Zoho issues no refresh token (and only on the first consent).
  authorizeParams: { access_type: 'offline', prompt: 'consent' },
  tokenAuth: 'body',
  recordTypes: ['customer', 'invoice', 'payment', 'credit_note', 'refund'],
  refundAs: 'credit_note',
  // Zoho Books India's preset taxes: the "GST18" group (CGST 9% + SGST 9%) and "IGST18".
  defaultMapping: {
    tax_codes: gstKeys(
      (r) => `GST${r}`,
      (r) => `IGST${r}`,
      'IGST0',
    ),
    accounts: { income: '', bank: '', tds_receivable: '' },
    item: '',
  },

  async pickCompany(config, accessToken, _callback, nowMs) {
    const res = await callProvider(`${config.apiUrl}/organizations`, { headers: headers(accessToken) }, describeError, nowMs);
    const orgs = ((res.body as { organizations?: { organization_id?: string; name?: string; is_default_org?: boolean }[] }).organizations ?? []).filter(
      (o) => o.organization_id,
    );
    const org = orgs.find((o) => o.is_default_org) ?? orgs[0];
    if (!org?.organization_id) throw new ProviderError('invalid', 'the Zoho account has no Books organization', 400);
    return { id: org.organization_id, name: org.name ?? null };
  },

  async revoke(config, refreshToken, nowMs) {
    const u = new URL(config.revokeUrl);
    u.searchParams.set('token', refreshToken);
    await callProvider(u.toString(), { method: 'POST' }, describeError, nowMs);
  },

  async resolveRefs(session, mapping) {
    const res = await callProvider(url(session, 'settings/taxes'), { headers: headers(session.accessToken) }, describeError, session.nowMs);
    const taxes = ((res.body as { taxes?: { tax_id: string; tax_name: string }[] }).taxes ?? []) as { tax_id: string; tax_name: string }[];
    const taxCodes: Record<string, string> = {};
    for (const [key, name] of Object.entries(mapping.tax_codes)) {
      const tax = taxes.find((t) => t.tax_name === name || t.tax_id === name);
      if (tax) taxCodes[key] = tax.tax_id;
    }
    return { taxCodes, item: mapping.item, accounts: mapping.accounts };
  },

  async findExisting(session, item, refs) {
    if (item.type === 'refund' && (item.doc.pays_out?.length ?? 0) > 1) {
      // Found only when every note has its share; otherwise push completes the missing ones.
      const found = await Promise.all(zohoRefundShares(item.doc, refs).map((s) => zohoRefundUnder(session, s.noteExternalId, s.body.description)));
      return found.every((f) => f !== null) ? { external_id: found.map((f) => f!.external_id).join(','), external_version: found[0]!.external_version } : null;
    }
    const r = resourceOf(item);
    const lookup = lookupOf(item, zohoBody(item, refs));
    const res = await callProvider(url(session, r.path, lookup.query), { headers: headers(session.accessToken) }, describeError, session.nowMs);
    const rows = ((res.body as Record<string, unknown>)[r.list] ?? []) as Record<string, unknown>[];
    const found = Array.isArray(rows) ? rows.find(lookup.matches) : undefined;
    const id = found?.[r.id];
    return typeof id === 'string' && id ? { external_id: id, external_version: (found!.last_modified_time as string | undefined) ?? null } : null;
  },

  async push(session, item, refs, existing) {
    // A refund does not change once made (in Kosh either): a synced one is not re-sent.
    if (existing && item.type === 'refund') return existing;
    if (item.type === 'refund' && (item.doc.pays_out?.length ?? 0) > 1) return pushZohoRefundShares(session, item, refs);
    const r = resourceOf(item);
    const query: Record<string, string> = r.numbered ? { ignore_auto_number_generation: 'true' } : {};
    const res = await callProvider(
      existing ? url(session, `${r.path}/${encodeURIComponent(existing.external_id)}`, query) : url(session, r.path, query),
      { method: existing ? 'PUT' : 'POST', headers: headers(session.accessToken), body: JSON.stringify(zohoBody(item, refs)) },
      describeError,
      session.nowMs,
    );
    const saved = (res.body as Record<string, Record<string, string> | undefined>)[r.key];
    const id = saved?.[r.id];
    if (!id) throw new ProviderError('invalid', `Zoho Books answered without ${r.key}.${r.id}`, res.status);
    return { external_id: id, external_version: saved.last_modified_time ?? null };
  },

  async voidRefund(session, doc, existing) {
    await deleteZohoRefunds(session, doc, existing);
  },
};
