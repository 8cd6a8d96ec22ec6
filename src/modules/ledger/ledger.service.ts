import type { Ctx } from '../../platform/context.js';
import { errors } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import { assertMinorUnits } from '../../platform/money.js';
import { toIso } from '../../platform/time.js';
import { postingDates } from '../periods/index.js';
import { ACCOUNT_NAMES, type AccountCode } from './accounts.js';
import type { JournalEntry } from './ledger.schemas.js';
import { entriesOfInvoice, findEntry, insertEntries, linesOfEntries, type EntryRow, type LineRow } from './ledger.repository.js';

export type PostingLine = {
  account: AccountCode;
  debit?: number;
  credit?: number;
  customerId?: string | null;
  invoiceId?: string | null;
  creditNoteId?: string | null;
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
  const postedAt = await postingDates(ctx, [...new Set(postings.map((p) => p.entityId))]);
  const entries: Parameters<typeof insertEntries>[1] = [];
  const rows: Parameters<typeof insertEntries>[2] = [];
  const ids = postings.map((posting) => {
    const lines = posting.lines.filter((l) => (l.debit ?? 0) !== 0 || (l.credit ?? 0) !== 0);
    if (lines.length === 0) return null;
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
    const id = newId();
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
      posted_at: postedAt.get(posting.entityId) ?? ctx.now,
    });
    for (const l of lines) {
      rows.push({
        tenant_id: ctx.tenantId,
        id: newId(),
        entry_id: id,
        account_code: l.account,
        debit: l.debit ?? 0,
        credit: l.credit ?? 0,
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
    description: entry.description,
    posted_at: toIso(entry.posted_at),
    lines: lines.map((l) => ({
      id: l.id,
      account_code: l.account_code,
      account_name: ACCOUNT_NAMES[l.account_code as AccountCode] ?? `account ${l.account_code}`,
      debit: l.debit,
      credit: l.credit,
      customer_id: l.customer_id,
      invoice_id: l.invoice_id,
      credit_note_id: l.credit_note_id,
    })),
  };
}

/** Entries with their lines in the API shape (two statements for the lot). */
export async function toJournalEntries(ctx: Ctx, entries: EntryRow[]): Promise<JournalEntry[]> {
  return withLines(ctx, entries);
}

async function withLines(ctx: Ctx, entries: EntryRow[]): Promise<JournalEntry[]> {
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

export async function getJournalEntry(ctx: Ctx, id: string): Promise<JournalEntry> {
  const entry = await findEntry(ctx.tx, ctx.tenantId, id);
  if (!entry) throw errors.notFound('journal entry');
  return (await withLines(ctx, [entry]))[0]!;
}

export async function listInvoiceJournalEntries(ctx: Ctx, invoiceId: string): Promise<JournalEntry[]> {
  return withLines(ctx, await entriesOfInvoice(ctx.tx, ctx.tenantId, invoiceId));
}

/**
 * Reads and writes of this module's own tables that flows and other modules call; the repository
 * itself is private to the module (index.ts exports operations and types only).
 */
export { trialBalanceRows } from './ledger.repository.js';
export { accountTotals, listEntries, exportPage } from './ledger.reports.repository.js';
export { PostgresSecondaryLedger } from './secondary-ledger.repository.js';
