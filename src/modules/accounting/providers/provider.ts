import type { AccountingProviderConfig } from '../../../platform/config.js';
import type { AccountingProvider, SyncRecordType, TaxMapping } from '../accounting.tables.js';

/** What Kosh pushes, already shaped from its own records (sync.ts builds these). */
export type Address = {
  line1: string | null;
  line2: string | null;
  city: string | null;
  state_code: string | null;
  postal_code: string | null;
  country: string;
};

export type CustomerDoc = {
  id: string;
  name: string;
  email: string;
  phone: string | null;
  gstin: string | null;
  /** Place of supply: the GST state code (GSTIN first, else billing address); null abroad. */
  place_of_supply: string | null;
  country: string;
  address: Address | null;
};

export type TaxedLine = {
  description: string;
  quantity: number;
  /** Minor units. */
  unit_amount: number;
  amount: number;
  hsn_code: string;
  rate_bp: number;
  cgst_amount: number;
  sgst_amount: number;
  igst_amount: number;
  tax_amount: number;
};

export type InvoiceDoc = {
  id: string;
  number: string;
  customer_external_id: string;
  date: string;
  due_date: string | null;
  currency: string;
  tax_type: string;
  place_of_supply: string | null;
  customer_gstin: string | null;
  lines: TaxedLine[];
  subtotal: number;
  tax_amount: number;
  total: number;
};

export type PaymentDoc = {
  id: string;
  customer_external_id: string;
  invoice_external_id: string;
  date: string;
  currency: string;
  /** Cash received, minor units. */
  amount: number;
  /** TDS the customer withheld against the invoice, minor units. */
  tds_amount: number;
  reference: string;
};

export type CreditNoteDoc = {
  id: string;
  number: string;
  customer_external_id: string;
  invoice_number: string | null;
  date: string;
  currency: string;
  tax_type: string;
  place_of_supply: string | null;
  customer_gstin: string | null;
  reason: string;
  line: TaxedLine;
  total: number;
};

/**
 * A refund that went through: the money that left. Either it issued its own refund credit note
 * (DESIGN §11) — QuickBooks books that as a RefundReceipt carrying the note's lines (the note itself
 * is not sent as a CreditMemo) — or it paid out the unspent balance of notes already booked
 * (`pays_out`, DESIGN §20) — QuickBooks books that as an Expense paid to the customer linked to
 * their CreditMemos by a Payment (decision 0530), never a second document that reverses income.
 * Xero and Zoho Books book both as a refund of the synced credit note.
 */
export type RefundDoc = {
  id: string;
  customer_external_id: string;
  /** The refund credit note at the provider (Xero, Zoho Books); '' until it is synced. */
  credit_note_external_id: string;
  date: string;
  currency: string;
  amount: number;
  /** The gateway's refund id, else Kosh's. */
  reference: string;
  note: CreditNoteDoc;
  /**
   * The notes whose balances the refund paid out, and how much of each (empty when it issued its
   * own note: then absent, so the versions of refunds synced before it existed do not change);
   * `external_id` is '' until the note is synced.
   */
  pays_out?: { credit_note_id: string; external_id: string; amount: number }[];
};

export type SyncDoc =
  | { type: 'customer'; doc: CustomerDoc }
  | { type: 'invoice'; doc: InvoiceDoc }
  | { type: 'payment'; doc: PaymentDoc }
  | { type: 'payment_tds'; doc: PaymentDoc }
  | { type: 'credit_note'; doc: CreditNoteDoc }
  | { type: 'refund'; doc: RefundDoc };

/** An authorised session against one company at the provider. */
export type ProviderSession = {
  config: AccountingProviderConfig;
  accessToken: string;
  externalTenantId: string;
  nowMs: number;
};

/** What a record is known as at the provider after a push. */
export type ExternalRef = { external_id: string; external_version: string | null };

export type TokenSet = { access_token: string; refresh_token: string; expires_in: number };

/** Provider-specific ids resolved from the mapping's names once per sync run. */
export type ResolvedRefs = {
  taxCodes: Record<string, string>;
  item: string;
  accounts: TaxMapping['accounts'];
  /** QuickBooks: the company's Accounts Receivable account (a refund of a credit memo pays it out of A/R). */
  receivable?: string;
};

export interface AccountingAdapter {
  provider: AccountingProvider;
  /** The scopes asked for at the authorize endpoint. */
  scopes: string;
  /** Extra authorize parameters (Zoho: `access_type=offline`, `prompt=consent`). */
  authorizeParams: Record<string, string>;
  /** How the client authenticates at the token endpoint. */
  tokenAuth: 'basic' | 'body';
  /** The mapping a connection starts with (India defaults). */
  defaultMapping: TaxMapping;
  /** The company this connection books into, from the callback and the new tokens. */
  pickCompany(
    config: AccountingProviderConfig,
    accessToken: string,
    callback: Record<string, string | undefined>,
    nowMs: number,
  ): Promise<{ id: string; name: string | null }>;
  revoke(config: AccountingProviderConfig, refreshToken: string, nowMs: number): Promise<void>;
  resolveRefs(session: ProviderSession, mapping: TaxMapping): Promise<ResolvedRefs>;
  /** Which record types it keeps separately (QuickBooks and Xero book TDS as its own payment). */
  recordTypes: SyncRecordType[];
  /**
   * How a refund is booked: `receipt` — one document with the refund note's lines (QuickBooks
   * RefundReceipt; the note is then not pushed on its own); `credit_note` — a refund of the synced
   * credit note (Xero, Zoho Books).
   */
  refundAs: 'receipt' | 'credit_note';
  /**
   * For providers without an idempotency key (Zoho Books): finds a record an earlier create may
   * have made without Kosh recording its id, by the document's own unique mark (decision 0160).
   */
  findExisting?(session: ProviderSession, item: SyncDoc, refs: ResolvedRefs): Promise<ExternalRef | null>;
  /**
   * Creates the record, or updates it when `existing` is given — never a second copy.
   * `idempotencyKey` is stable for one version of one record.
   */
  push(session: ProviderSession, item: SyncDoc, refs: ResolvedRefs, existing: ExternalRef | null, idempotencyKey: string): Promise<ExternalRef>;
  /**
   * Takes back a refund `push` booked (`existing`) whose money never reached the customer after all
   * (the gateway failed it later, decision 0860): QuickBooks deletes the RefundReceipt (or the
   * Payment and Expense of a payout of credit memos), Xero deletes the payments on the credit
   * notes, Zoho Books deletes the credit-note refunds. The notes stay, their credit spendable
   * again. A document already gone counts as done, so a retry after a lost answer is harmless;
   * `idempotencyKey` is stable for the refund.
   */
  voidRefund(session: ProviderSession, doc: RefundDoc, existing: ExternalRef, idempotencyKey: string): Promise<void>;
}

/** The mapping key of a line: `intra_state:18`, `inter_state:18`, `export:0`, or `none:0`. */
export function taxKey(taxType: string, rateBp: number): string {
  if (taxType === 'export') return 'export:0';
  if (taxType === '' || rateBp === 0) return `${taxType || 'none'}:0`;
  return `${taxType}:${rateBp / 100}`;
}

/** The code for a key, or an error that names the missing mapping. */
export function taxCodeFor(refs: ResolvedRefs, key: string): string {
  const code = refs.taxCodes[key];
  if (code === undefined) throw new Error(`no tax code mapped for '${key}' (PUT /v1/accounting/connections/{id}/tax-mapping)`);
  return code;
}

/** Default tax-code keys for the GST rates SaaS and most goods use. */
export function gstKeys(intra: (rate: string) => string, inter: (rate: string) => string, zeroRated: string): Record<string, string> {
  const map: Record<string, string> = { 'export:0': zeroRated, 'intra_state:0': zeroRated, 'inter_state:0': zeroRated, 'none:0': zeroRated };
  for (const rate of ['0.25', '3', '5', '12', '18', '28', '40']) {
    map[`intra_state:${rate}`] = intra(rate);
    map[`inter_state:${rate}`] = inter(rate);
  }
  return map;
}
