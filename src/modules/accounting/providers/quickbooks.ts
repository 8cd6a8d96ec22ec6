import { createHash } from 'node:crypto';
import { gstState } from '../../tax/index.js';
import { majorUnits } from '../amounts.js';
import { basicAuth, bearer, callProvider, ProviderError } from './http.js';
import {
  gstKeys,
  taxCodeFor,
  taxKey,
  type AccountingAdapter,
  type CreditNoteDoc,
  type ExternalRef,
  type ProviderSession,
  type RefundDoc,
  type ResolvedRefs,
  type SyncDoc,
  type TaxedLine,
} from './provider.js';

/**
 * QuickBooks Online Accounting API v3 (`/v3/company/{realmId}/{entity}`). Updates carry the
 * entity's `Id` and current `SyncToken` with `sparse: true`; a stale SyncToken (fault 5010) is
 * re-read once. Every write carries `requestid`, QuickBooks' own idempotency key, so a retried
 * create after a lost answer does not book twice.
 */
const MINOR_VERSION = '75';

type QboFault = { Fault?: { Error?: { Message?: string; Detail?: string; code?: string }[]; type?: string } };

function describeFault(_status: number, body: unknown): { message: string; code?: string } {
  const error = (body as QboFault).Fault?.Error?.[0];
  if (!error) return { message: JSON.stringify(body).slice(0, 300) };
  return { message: [error.Message, error.Detail].filter(Boolean).join(': '), code: error.code };
}

const ENTITY: Record<SyncDoc['type'], { path: string; key: string }> = {
  customer: { path: 'customer', key: 'Customer' },
  invoice: { path: 'invoice', key: 'Invoice' },
  payment: { path: 'payment', key: 'Payment' },
  payment_tds: { path: 'payment', key: 'Payment' },
  credit_note: { path: 'creditmemo', key: 'CreditMemo' },
  refund: { path: 'refundreceipt', key: 'RefundReceipt' },
};

function companyUrl(session: ProviderSession, path: string, query: Record<string, string> = {}): string {
  const url = new URL(`${session.config.apiUrl}/v3/company/${encodeURIComponent(session.externalTenantId)}/${path}`);
  url.searchParams.set('minorversion', MINOR_VERSION);
  for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
  return url.toString();
}

async function query(session: ProviderSession, statement: string): Promise<Record<string, unknown>> {
  const res = await callProvider(companyUrl(session, 'query', { query: statement }), { headers: bearer(session.accessToken) }, describeFault, session.nowMs);
  return ((res.body as { QueryResponse?: Record<string, unknown> }).QueryResponse ?? {}) as Record<string, unknown>;
}

type NamedRow = { Id: string; Name: string; AccountType?: string };

/** Names (the defaults) resolve to ids by a query; a value that is already an id is kept. */
async function resolveByName(
  session: ProviderSession,
  entity: 'TaxCode' | 'Item' | 'Account',
  names: string[],
  rowsSeen?: (rows: NamedRow[]) => void,
): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  const wanted = [...new Set(names)].filter((n) => n !== '');
  if (wanted.length === 0) return found;
  const fields = entity === 'Account' ? 'Id, Name, AccountType' : 'Id, Name';
  const rows = ((await query(session, `select ${fields} from ${entity} maxresults 1000`))[entity] ?? []) as NamedRow[];
  rowsSeen?.(rows);
  for (const name of wanted) {
    const row = rows.find((r) => r.Name === name || r.Id === name);
    if (row) found.set(name, row.Id);
  }
  return found;
}

function registrationType(gstin: string | null, country: string): string {
  if (country !== 'IN') return 'OVERSEAS';
  return gstin ? 'GST_REG_REG' : 'CONSUMER';
}

function salesLine(line: TaxedLine, currency: string, taxType: string, refs: ResolvedRefs) {
  return {
    DetailType: 'SalesItemLineDetail',
    Amount: majorUnits(line.amount, currency),
    Description: line.description,
    SalesItemLineDetail: {
      ItemRef: { value: refs.item },
      Qty: line.quantity,
      UnitPrice: majorUnits(line.unit_amount, currency),
      TaxCodeRef: { value: taxCodeFor(refs, taxKey(taxType, line.rate_bp)) },
    },
  };
}

function creditMemoBody(doc: CreditNoteDoc, refs: ResolvedRefs) {
  return {
    CustomerRef: { value: doc.customer_external_id },
    DocNumber: doc.number,
    TxnDate: doc.date,
    CurrencyRef: { value: doc.currency },
    GlobalTaxCalculation: 'TaxExcluded',
    PrivateNote: doc.reason || undefined,
    Line: [salesLine(doc.line, doc.currency, doc.tax_type, refs)],
    TxnTaxDetail: { TotalTax: majorUnits(doc.line.tax_amount, doc.currency) },
  };
}

export function quickbooksBody(item: SyncDoc, refs: ResolvedRefs): Record<string, unknown> {
  switch (item.type) {
    case 'customer': {
      const c = item.doc;
      const state = gstState(c.place_of_supply);
      return {
        DisplayName: `${c.name} (${c.email})`.slice(0, 500),
        CompanyName: c.name,
        PrimaryEmailAddr: { Address: c.email },
        ...(c.phone ? { PrimaryPhone: { FreeFormNumber: c.phone } } : {}),
        GSTIN: c.gstin ?? undefined,
        GSTRegistrationType: registrationType(c.gstin, c.country),
        BillAddr: {
          Line1: c.address?.line1 ?? undefined,
          Line2: c.address?.line2 ?? undefined,
          City: c.address?.city ?? undefined,
          CountrySubDivisionCode: state?.name ?? c.address?.state_code ?? undefined,
          PostalCode: c.address?.postal_code ?? undefined,
          Country: c.country,
        },
      };
    }
    case 'invoice': {
      const d = item.doc;
      return {
        CustomerRef: { value: d.customer_external_id },
        DocNumber: d.number,
        TxnDate: d.date,
        ...(d.due_date ? { DueDate: d.due_date } : {}),
        CurrencyRef: { value: d.currency },
        GlobalTaxCalculation: 'TaxExcluded',
        Line: d.lines.map((l) => salesLine(l, d.currency, d.tax_type, refs)),
        TxnTaxDetail: { TotalTax: majorUnits(d.tax_amount, d.currency) },
      };
    }
    case 'payment':
    case 'payment_tds': {
      const p = item.doc;
      const tds = item.type === 'payment_tds';
      const amount = majorUnits(tds ? p.tds_amount : p.amount, p.currency);
      return {
        CustomerRef: { value: p.customer_external_id },
        TxnDate: p.date,
        CurrencyRef: { value: p.currency },
        TotalAmt: amount,
        PaymentRefNum: (tds ? `TDS ${p.reference}` : p.reference).slice(0, 21),
        // TDS settles the invoice like cash but lands in the TDS receivable account.
        DepositToAccountRef: { value: tds ? refs.accounts.tds_receivable : refs.accounts.bank },
        Line: [{ Amount: amount, LinkedTxn: [{ TxnId: p.invoice_external_id, TxnType: 'Invoice' }] }],
      };
    }
    case 'credit_note':
      return creditMemoBody(item.doc, refs);
    case 'refund': {
      // A RefundReceipt is the credit note and the money out in one: it reverses the income and
      // the GST of the refund note's lines and is paid from the bank (deposit-to) account.
      const r = item.doc;
      return {
        ...creditMemoBody({ ...r.note, date: r.date }, refs),
        PaymentRefNum: r.reference.slice(0, 21),
        DepositToAccountRef: { value: refs.accounts.bank },
      };
    }
  }
}

/** A second idempotency key derived from a record's key, for the second write of one record. */
function derivedKey(key: string, purpose: string): string {
  const h = createHash('sha256').update(`${key}:${purpose}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

async function create(session: ProviderSession, path: string, key: string, requestId: string, body: unknown): Promise<{ Id: string; SyncToken: string }> {
  const res = await callProvider(
    companyUrl(session, path, { requestid: requestId }),
    { method: 'POST', headers: { ...bearer(session.accessToken), 'content-type': 'application/json' }, body: JSON.stringify(body) },
    describeFault,
    session.nowMs,
  );
  const saved = (res.body as Record<string, { Id: string; SyncToken: string } | undefined>)[key];
  if (!saved?.Id) throw new ProviderError('invalid', `QuickBooks answered without ${key}.Id`, res.status);
  return saved;
}

/**
 * Money paid out of credit memos QuickBooks already holds (decision 0530). The memos reversed the
 * income and the GST when they were booked; a RefundReceipt would reverse them a second time. So,
 * as the Payment reference prescribes for linking a refund to a credit memo (`Line.LinkedTxn` of
 * type `Expense` — "reimbursement for expense paid by cash made on behalf of the customer" — and
 * `CreditMemo`): an Expense (Purchase, PaymentType Cash) paid to the customer from the bank
 * account into Accounts Receivable, then a Payment of 0 that sets it against the memos' credit.
 * The Expense raises the customer's balance by what left; the Payment uses up that much credit.
 * Each write carries its own requestid, so a retried run reuses both rather than booking twice.
 */
async function payOutCreditMemos(session: ProviderSession, r: RefundDoc, refs: ResolvedRefs, idempotencyKey: string): Promise<ExternalRef> {
  if (!refs.receivable) throw new ProviderError('invalid', 'the QuickBooks company has no Accounts Receivable account to pay the refund out of', 400);
  const amount = majorUnits(r.amount, r.currency);
  const expense = await create(session, 'purchase', 'Purchase', derivedKey(idempotencyKey, 'expense'), {
    PaymentType: 'Cash',
    AccountRef: { value: refs.accounts.bank },
    EntityRef: { value: r.customer_external_id, type: 'Customer' },
    TxnDate: r.date,
    CurrencyRef: { value: r.currency },
    DocNumber: r.reference.slice(0, 21),
    PrivateNote: `Refund of credit ${r.pays_out!.map((n) => n.credit_note_id).join(', ')}`.slice(0, 4000),
    Line: [
      {
        DetailType: 'AccountBasedExpenseLineDetail',
        Amount: amount,
        Description: r.note.reason || `Refund of credit note ${r.note.number}`,
        AccountBasedExpenseLineDetail: { AccountRef: { value: refs.receivable } },
      },
    ],
  });
  const payment = await create(session, 'payment', 'Payment', idempotencyKey, {
    CustomerRef: { value: r.customer_external_id },
    TxnDate: r.date,
    CurrencyRef: { value: r.currency },
    TotalAmt: 0,
    PaymentRefNum: r.reference.slice(0, 21),
    Line: [
      { Amount: amount, LinkedTxn: [{ TxnId: expense.Id, TxnType: 'Expense' }] },
      ...r.pays_out!.map((n) => ({ Amount: majorUnits(n.amount, r.currency), LinkedTxn: [{ TxnId: n.external_id, TxnType: 'CreditMemo' }] })),
    ],
  });
  return { external_id: payment.Id, external_version: payment.SyncToken ?? null };
}

/** QuickBooks' fault for an object that does not exist (or was deleted): what a repeated delete answers. */
const OBJECT_NOT_FOUND = '610';

const gone = (error: unknown) => error instanceof ProviderError && (error.code === OBJECT_NOT_FOUND || error.kind === 'not_found');

/**
 * Deletes one transaction (`POST /{entity}?operation=delete` with its Id and current SyncToken, as
 * the RefundReceipt, Payment and Purchase references document it; a RefundReceipt has no void
 * operation in the API). A stale SyncToken (5010) is read again once; a transaction already gone
 * (610) is done.
 */
async function deleteTransaction(session: ProviderSession, path: string, key: string, id: string, syncToken: string | null, requestId: string): Promise<void> {
  const send = (token: string) =>
    callProvider(
      companyUrl(session, path, { operation: 'delete', requestid: requestId }),
      { method: 'POST', headers: { ...bearer(session.accessToken), 'content-type': 'application/json' }, body: JSON.stringify({ Id: id, SyncToken: token }) },
      describeFault,
      session.nowMs,
    );
  try {
    await send(syncToken ?? '0');
  } catch (error) {
    if (gone(error)) return;
    if (!(error instanceof ProviderError && error.code === '5010')) throw error;
    let current: { SyncToken?: string } | undefined;
    try {
      const res = await callProvider(
        companyUrl(session, `${path}/${encodeURIComponent(id)}`),
        { headers: bearer(session.accessToken) },
        describeFault,
        session.nowMs,
      );
      current = (res.body as Record<string, { SyncToken?: string } | undefined>)[key];
    } catch (readError) {
      if (gone(readError)) return;
      throw readError;
    }
    try {
      await send(current?.SyncToken ?? '0');
    } catch (retryError) {
      if (!gone(retryError)) throw retryError;
    }
  }
}

/**
 * Takes back a payout of credit memos (decision 0530): the Payment that set the Expense against
 * the memos, then the Expense itself, found by its DocNumber (the refund's reference) and payee so
 * a retry that finds the Payment already deleted still finds the Expense. The memos' credit is
 * then open again, as it is in Kosh.
 */
async function undoCreditMemoPayout(session: ProviderSession, r: RefundDoc, existing: ExternalRef, idempotencyKey: string): Promise<void> {
  const docNumber = r.reference.slice(0, 21).replace(/'/g, "\\'");
  const found = ((await query(session, `select * from Purchase where DocNumber = '${docNumber}'`)).Purchase ?? []) as {
    Id: string;
    SyncToken?: string;
    EntityRef?: { value?: string };
  }[];
  const expenses = found.filter((p) => p.EntityRef?.value === r.customer_external_id);
  await deleteTransaction(session, 'payment', 'Payment', existing.external_id, existing.external_version, derivedKey(idempotencyKey, 'void-payment'));
  for (const expense of expenses)
    await deleteTransaction(session, 'purchase', 'Purchase', expense.Id, expense.SyncToken ?? null, derivedKey(idempotencyKey, `void-expense-${expense.Id}`));
}

export const quickbooks: AccountingAdapter = {
  provider: 'quickbooks',
  scopes: 'com.intuit.quickbooks.accounting',
  authorizeParams: {},
  tokenAuth: 'basic',
  recordTypes: ['customer', 'invoice', 'payment', 'payment_tds', 'credit_note', 'refund'],
  refundAs: 'receipt',
  // QuickBooks India's preset codes: "GST 18%" is the CGST 9% + SGST 9% group, "IGST 18%" the
  // integrated rate; exports and nil-rated supplies use "Exempt IGST".
  defaultMapping: {
    tax_codes: gstKeys(
      (r) => `GST ${r}%`,
      (r) => `IGST ${r}%`,
      'Exempt IGST',
    ),
    accounts: { income: 'Sales', bank: 'Undeposited Funds', tds_receivable: 'TDS Receivable' },
    item: 'Services',
  },

  async pickCompany(_config, _accessToken, callback) {
    const realmId = callback.realmId;
    if (!realmId) throw new ProviderError('invalid', 'the QuickBooks callback carried no realmId', 400);
    return { id: realmId, name: null };
  },

  async revoke(config, refreshToken, nowMs) {
    await callProvider(
      config.revokeUrl,
      {
        method: 'POST',
        headers: { authorization: basicAuth(config), accept: 'application/json', 'content-type': 'application/json' },
        body: JSON.stringify({ token: refreshToken }),
      },
      describeFault,
      nowMs,
    );
  },

  async resolveRefs(session, mapping) {
    const taxIds = await resolveByName(session, 'TaxCode', Object.values(mapping.tax_codes));
    const items = await resolveByName(session, 'Item', [mapping.item]);
    let receivable: string | undefined;
    const accounts = await resolveByName(session, 'Account', Object.values(mapping.accounts), (rows) => {
      receivable = rows.find((r) => r.AccountType === 'Accounts Receivable')?.Id;
    });
    const taxCodes: Record<string, string> = {};
    for (const [key, name] of Object.entries(mapping.tax_codes)) {
      const id = taxIds.get(name);
      if (id) taxCodes[key] = id;
    }
    const account = (name: string) => accounts.get(name) ?? name;
    return {
      taxCodes,
      item: items.get(mapping.item) ?? mapping.item,
      accounts: { income: account(mapping.accounts.income), bank: account(mapping.accounts.bank), tds_receivable: account(mapping.accounts.tds_receivable) },
      ...(receivable ? { receivable } : {}),
    };
  },

  async push(session, item, refs, existing, idempotencyKey) {
    if (item.type === 'refund' && item.doc.pays_out) {
      // A payout of credit memos' balances does not change once made (in Kosh either): not re-sent.
      if (existing) return existing;
      return payOutCreditMemos(session, item.doc, refs, idempotencyKey);
    }
    const entity = ENTITY[item.type];
    const body = quickbooksBody(item, refs);
    const send = async (syncToken: string | null): Promise<ExternalRef> => {
      const payload = existing ? { ...body, Id: existing.external_id, SyncToken: syncToken ?? '0', sparse: true } : body;
      const res = await callProvider(
        companyUrl(session, entity.path, { requestid: idempotencyKey }),
        { method: 'POST', headers: { ...bearer(session.accessToken), 'content-type': 'application/json' }, body: JSON.stringify(payload) },
        describeFault,
        session.nowMs,
      );
      const saved = (res.body as Record<string, { Id: string; SyncToken: string } | undefined>)[entity.key];
      if (!saved?.Id) throw new ProviderError('invalid', `QuickBooks answered without ${entity.key}.Id`, res.status);
      return { external_id: saved.Id, external_version: saved.SyncToken ?? null };
    };
    try {
      return await send(existing?.external_version ?? null);
    } catch (error) {
      // Someone edited it in QuickBooks since our last push: read the current SyncToken, retry once.
      if (!(existing && error instanceof ProviderError && error.code === '5010')) throw error;
      const current = await callProvider(
        companyUrl(session, `${entity.path}/${encodeURIComponent(existing.external_id)}`),
        { headers: bearer(session.accessToken) },
        describeFault,
        session.nowMs,
      );
      const token = (current.body as Record<string, { SyncToken?: string } | undefined>)[entity.key]?.SyncToken ?? null;
      return send(token);
    }
  },

  async voidRefund(session, doc, existing, idempotencyKey) {
    if (doc.pays_out) return undoCreditMemoPayout(session, doc, existing, idempotencyKey);
    await deleteTransaction(session, 'refundreceipt', 'RefundReceipt', existing.external_id, existing.external_version, derivedKey(idempotencyKey, 'void'));
  },
};
