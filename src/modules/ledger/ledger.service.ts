import type { Ctx, ReadCtx } from '../../platform/context.js';
import { errors } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import { assertMinorUnits, convertMinorUnits, mulDivRoundHalfUp } from '../../platform/money.js';
import { entityRateAt } from '../entities/index.js';
import { toIso } from '../../platform/time.js';
import { postingTerms } from '../periods/index.js';
import { Account, ACCOUNT_NAMES, type AccountCode } from './accounts.js';
import type { JournalEntry } from './ledger.schemas.js';
import {
  carriedBalances,
  carriedKey,
  creditedByEntry,
  entriesOfInvoice,
  findEntry,
  insertEntries,
  linesOfEntries,
  type CarriedKey,
  type EntryRow,
  type LineRow,
} from './ledger.repository.js';

export type PostingLine = {
  account: AccountCode;
  debit?: number;
  credit?: number;
  customerId?: string | null;
  invoiceId?: string | null;
  creditNoteId?: string | null;
  /**
   * The line's value in the entity's functional currency when the caller knows it (an invoice's
   * INR amounts, CGST Rules rule 34). Otherwise a line that reduces a document's carried balance
   * takes its share of that balance's functional value, and any other line is valued at the
   * posting's rate (DESIGN §19).
   */
  functional?: number;
  /** Takes the functional value of the line just before it (the other half of a pair of equal amounts). */
  mirror?: boolean;
};

export type Posting = {
  /** The entity's ledger (tb_ledger_id) and the entity itself. */
  ledgerId: number;
  entityId: string;
  /** The business event, e.g. 'invoice.finalized'. With referenceId it is unique: no event is booked twice. */
  kind: string;
  referenceType: string;
  referenceId: string;
  currency: string;
  description?: string;
  lines: PostingLine[];
  /**
   * Functional currency per one unit of `currency` for the lines valued at the transaction's rate
   * (a payment's rate of its date). Default: the entity's rate table at the posting date.
   */
  rate?: string | null;
  /**
   * Where a difference between the functional debits and credits goes: `realized` exchange gain
   * or loss (the entry settles a foreign balance at another rate: a receipt, a refund, credit
   * applied), else `rounding` (amounts converted line by line).
   */
  exchangeDifference?: 'realized' | 'rounding';
  /**
   * The entry's date when it is not the action's (a month-end revaluation is dated at the month's
   * last instant, its reversal at the next month's first). The caller makes sure that month is
   * open; otherwise the posting is dated as any other (DESIGN §18).
   */
  postedAt?: Date;
  /**
   * Every line is valued in the functional currency only (no transaction-currency amount): a
   * revaluation of foreign balances at the closing rate (decision 0450).
   */
  functionalOnly?: boolean;
};

/**
 * Posts one balanced journal entry in the caller's transaction. Zero-amount lines are dropped;
 * an entry with nothing left is not posted (returns null). Balance is asserted here and enforced
 * again by the database at commit.
 */
export async function postEntry(ctx: Ctx, posting: Posting): Promise<string | null> {
  const [id] = await postEntries(ctx, [posting]);
  return id ?? null;
}

/**
 * Posts many balanced entries at once (the billing run books a batch of invoices): per entry, zero
 * lines are dropped, an empty entry is skipped (null) and debits must equal credits; then two
 * INSERTs for the lot. The database checks each entry's balance at commit as always.
 */
export async function postEntries(ctx: Ctx, postings: Posting[]): Promise<(string | null)[]> {
  // Nothing posts into a closed period: a posting made while this month is closed is dated in
  // the first open month after it (DESIGN §18).
  const entityIds = [...new Set(postings.map((p) => p.entityId))];
  const terms = await postingTerms(ctx, entityIds);
  const postedAt = new Map([...terms].map(([id, t]) => [id, t.at]));
  const functional = new Map([...terms].map(([id, t]) => [id, t.functionalCurrency]));
  const valuation = await valuationOf(ctx, postings, functional, postedAt);
  const entries: Parameters<typeof insertEntries>[1] = [];
  const rows: Parameters<typeof insertEntries>[2] = [];
  const ids = postings.map((posting) => {
    const lines = checkedLines(posting);
    if (lines === null) return null;
    const id = newId();
    const functionalCurrency = functional.get(posting.entityId) ?? posting.currency;
    const valued = valuation.value(posting, lines, functionalCurrency);
    entries.push({
      tenant_id: ctx.tenantId,
      id,
      ledger_id: posting.ledgerId,
      entity_id: posting.entityId,
      kind: posting.kind,
      reference_type: posting.referenceType,
      reference_id: posting.referenceId,
      currency: posting.currency,
      description: posting.description ?? '',
      posted_at: posting.postedAt ?? postedAt.get(posting.entityId) ?? ctx.now,
      functional_currency: functionalCurrency,
      exchange_rate: valued.rate,
    });
    for (const [i, l] of valued.lines.entries()) {
      const value = valued.values?.[i] ?? null;
      rows.push({
        tenant_id: ctx.tenantId,
        id: newId(),
        entry_id: id,
        account_code: l.account,
        debit: l.debit ?? 0,
        credit: l.credit ?? 0,
        functional_debit: value === null ? null : value.side === 'debit' ? value.amount : 0,
        functional_credit: value === null ? null : value.side === 'credit' ? value.amount : 0,
        customer_id: l.customerId ?? null,
        invoice_id: l.invoiceId ?? null,
        credit_note_id: l.creditNoteId ?? null,
      });
    }
    return id;
  });
  await insertEntries(ctx.tx, entries, rows);
  return ids;
}

/**
 * The posting's lines that count, balance asserted; null when nothing is left to post. A line of no
 * amount is dropped, unless it has a functional value of its own (an INR tax of a few paise on a
 * foreign amount too small to carry any, or a revaluation's `functionalOnly` lines).
 */
function checkedLines(posting: Posting): PostingLine[] | null {
  const lines = posting.lines.filter((l) => (l.debit ?? 0) !== 0 || (l.credit ?? 0) !== 0 || (l.functional ?? 0) !== 0);
  if (lines.length === 0 || (!posting.functionalOnly && lines.every((l) => (l.debit ?? 0) === 0 && (l.credit ?? 0) === 0))) return null;
  let debits = 0;
  let credits = 0;
  for (const l of lines) {
    const d = assertMinorUnits(l.debit ?? 0, 'debit');
    const c = assertMinorUnits(l.credit ?? 0, 'credit');
    if (d < 0 || c < 0 || (d !== 0 && c !== 0)) throw new Error(`invalid posting line ${JSON.stringify(l)}`);
    debits += d;
    credits += c;
  }
  if (debits !== credits) throw new Error(`unbalanced posting ${posting.kind} ${posting.referenceId}: debits ${debits} ≠ credits ${credits}`);
  return lines;
}

/** Accounts whose balances are carried per document at the rate they were booked at. */
const CARRIED: Record<number, { side: 'debit' | 'credit'; tag: 'invoiceId' | 'creditNoteId' }> = {
  [Account.RECEIVABLES]: { side: 'debit', tag: 'invoiceId' },
  [Account.CUSTOMER_CREDIT]: { side: 'credit', tag: 'creditNoteId' },
  [Account.DEFERRED_REVENUE]: { side: 'credit', tag: 'invoiceId' },
};

type LineValue = { amount: number; side: 'debit' | 'credit' };

/** A line's side: the one with an amount, or — a zero line kept for its functional value — the one named. */
const sideOf = (l: PostingLine): 'debit' | 'credit' => ((l.debit ?? 0) > 0 || ((l.credit ?? 0) === 0 && l.debit !== undefined) ? 'debit' : 'credit');

/**
 * Values the lines of foreign-currency postings in the functional currency (DESIGN §19, decision
 * 0290): a line the caller valued keeps its value; a line that reduces a document's carried balance
 * (a receivable, a note's credit, deferred revenue) takes the share of that balance's functional
 * value it removes — all of it when the balance reaches zero — so a settled document leaves
 * nothing behind in either currency; any other line is converted at the posting's rate. What is
 * left between functional debits and credits is one more line, with no transaction-currency
 * amount, on realized exchange gain/loss or on rounding. A posting that needs a rate nobody
 * knows is booked unvalued (null functional amounts).
 */
async function valuationOf(ctx: Ctx, postings: Posting[], functional: Map<string, string>, postedAt: Map<string, Date>) {
  const foreign = postings.filter((p) => p.currency !== (functional.get(p.entityId) ?? p.currency));
  const keys: CarriedKey[] = [];
  for (const p of foreign) {
    for (const l of p.lines) {
      const carried = CARRIED[l.account];
      const id = carried ? l[carried.tag] : null;
      if (carried && id) keys.push({ ledgerId: p.ledgerId, currency: p.currency, account: l.account, tag: carried.tag, id });
    }
  }
  const balances = await carriedBalances(ctx.tx, ctx.tenantId, keys);
  const rates = new Map<string, string | null>();
  for (const p of foreign) {
    const key = `${p.entityId}:${p.currency}`;
    if (p.rate || rates.has(key)) continue;
    rates.set(key, await entityRateAt(ctx, p.entityId, functional.get(p.entityId)!, p.currency, postedAt.get(p.entityId) ?? ctx.now));
  }
  return {
    value(posting: Posting, lines: PostingLine[], functionalCurrency: string): { lines: PostingLine[]; values: LineValue[] | null; rate: string | null } {
      if (posting.currency === functionalCurrency) return inFunctionalCurrency(lines);
      const rate = posting.rate ?? rates.get(`${posting.entityId}:${posting.currency}`) ?? null;
      const atRate = (amount: number) => (rate === null ? null : convertMinorUnits(amount, posting.currency, functionalCurrency, rate));
      const values: (LineValue | null)[] = [];
      for (const l of lines) values.push(foreignLineValue(posting, l, values, balances, atRate));
      if (values.some((v) => v === null)) return { lines, values: null, rate: null };
      return withExchangeDifference(posting, lines, values as LineValue[], rate);
    },
  };
}

/** A posting in the functional currency: each line is worth its amount (zero lines dropped). */
function inFunctionalCurrency(lines: PostingLine[]): { lines: PostingLine[]; values: LineValue[]; rate: null } {
  const kept = lines.filter((l) => (l.debit ?? 0) !== 0 || (l.credit ?? 0) !== 0);
  return { lines: kept, values: kept.map((l) => ({ amount: (l.debit ?? 0) + (l.credit ?? 0), side: sideOf(l) })), rate: null };
}

type CarriedBalances = Map<string, { amount: number; functional: number }>;

/**
 * One line of a foreign-currency posting, valued: as the caller valued it (or as the line it
 * mirrors); else, reducing a document's carried balance, its share of that balance's functional
 * value; else at the posting's rate (null when no rate is known). The carried balance is moved by
 * the line, so the next line on the same document (in this entry or a later one) sees it.
 */
function foreignLineValue(
  posting: Posting,
  l: PostingLine,
  values: (LineValue | null)[],
  balances: CarriedBalances,
  atRate: (amount: number) => number | null,
): LineValue | null {
  const side = sideOf(l);
  const amount = (l.debit ?? 0) + (l.credit ?? 0);
  const carried = CARRIED[l.account];
  const id = carried ? l[carried.tag] : null;
  const key = carried && id ? carriedKey({ ledgerId: posting.ledgerId, currency: posting.currency, account: l.account, tag: carried.tag, id }) : null;
  let value: number | null = l.functional ?? (l.mirror && values.length > 0 ? (values[values.length - 1]?.amount ?? null) : null);
  if (value === null && key && side !== carried!.side) value = shareOfCarried(balances.get(key) ?? { amount: 0, functional: 0 }, amount, atRate);
  if (value === null) value = atRate(amount);
  if (key && value !== null) {
    const sign = side === carried!.side ? 1 : -1;
    const b = balances.get(key) ?? { amount: 0, functional: 0 };
    balances.set(key, { amount: b.amount + sign * amount, functional: b.functional + sign * value });
  }
  return value === null ? null : { amount: value, side };
}

/** What a line reducing a document's balance is worth: its share of the balance's functional value (all of it, and the rest at the rate, when it clears it). */
function shareOfCarried(balance: { amount: number; functional: number }, amount: number, atRate: (amount: number) => number | null): number | null {
  if (balance.amount <= 0) return atRate(amount);
  if (amount >= balance.amount) {
    const rest = atRate(amount - balance.amount);
    return rest === null ? null : balance.functional + rest;
  }
  return mulDivRoundHalfUp(balance.functional, amount, balance.amount);
}

/** What is left between functional debits and credits: one more line on realized exchange gain/loss or on rounding. */
function withExchangeDifference(
  posting: Posting,
  lines: PostingLine[],
  valued: LineValue[],
  rate: string | null,
): { lines: PostingLine[]; values: LineValue[]; rate: string | null } {
  const difference = valued.reduce((sum, v) => sum + (v.side === 'debit' ? v.amount : -v.amount), 0);
  if (difference === 0) return { lines, values: valued, rate };
  const account = posting.exchangeDifference === 'realized' ? Account.EXCHANGE_GAIN_LOSS : Account.EXCHANGE_ROUNDING;
  // Debits worth more than credits: a gain (credit); less: a loss (debit).
  const side = difference > 0 ? 'credit' : 'debit';
  return { lines: [...lines, { account }], values: [...valued, { amount: Math.abs(difference), side }], rate };
}

function toJournalEntry(entry: EntryRow, lines: LineRow[]): JournalEntry {
  return {
    id: entry.id,
    tenant_id: entry.tenant_id,
    ledger_id: entry.ledger_id,
    entity_id: entry.entity_id,
    kind: entry.kind,
    reference_type: entry.reference_type,
    reference_id: entry.reference_id,
    currency: entry.currency,
    functional_currency: entry.functional_currency,
    exchange_rate: entry.exchange_rate,
    description: entry.description,
    posted_at: toIso(entry.posted_at),
    lines: lines.map((l) => ({
      id: l.id,
      account_code: l.account_code,
      account_name: ACCOUNT_NAMES[l.account_code as AccountCode] ?? `account ${l.account_code}`,
      debit: l.debit,
      credit: l.credit,
      functional_debit: l.functional_debit === null ? null : Number(l.functional_debit),
      functional_credit: l.functional_credit === null ? null : Number(l.functional_credit),
      customer_id: l.customer_id,
      invoice_id: l.invoice_id,
      credit_note_id: l.credit_note_id,
    })),
  };
}

/** Entries with their lines in the API shape (two statements for the lot). */
export async function toJournalEntries(ctx: ReadCtx, entries: EntryRow[]): Promise<JournalEntry[]> {
  return withLines(ctx, entries);
}

async function withLines(ctx: ReadCtx, entries: EntryRow[]): Promise<JournalEntry[]> {
  const lines = await linesOfEntries(
    ctx.tx,
    ctx.tenantId,
    entries.map((e) => e.id),
  );
  return entries.map((e) =>
    toJournalEntry(
      e,
      lines.filter((l) => l.entry_id === e.id),
    ),
  );
}

export async function getJournalEntry(ctx: ReadCtx, id: string): Promise<JournalEntry> {
  const entry = await findEntry(ctx.tx, ctx.tenantId, id);
  if (!entry) throw errors.notFound('journal entry');
  return (await withLines(ctx, [entry]))[0]!;
}

export async function listInvoiceJournalEntries(ctx: ReadCtx, invoiceId: string): Promise<JournalEntry[]> {
  return withLines(ctx, await entriesOfInvoice(ctx.tx, ctx.tenantId, invoiceId));
}

/**
 * Reads and writes of this module's own tables that flows and other modules call; the repository
 * itself is private to the module (index.ts exports operations and types only).
 */
export { trialBalanceRows } from './ledger.repository.js';

/** What one entry credited net to an account (its amount and functional value), e.g. the refunds payable a refund booked. */
export async function creditedBy(ctx: ReadCtx, entry: { kind: string; referenceType: string; referenceId: string; account: number }) {
  return creditedByEntry(ctx.tx, ctx.tenantId, entry);
}
export { accountTotals, functionalAccountTotals, listEntries, exportPage } from './ledger.reports.repository.js';
export { PostgresSecondaryLedger } from './secondary-ledger.repository.js';
