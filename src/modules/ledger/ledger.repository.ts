import { sql, type Insertable, type Selectable } from 'kysely';
import type { Tx, WriteTx } from '../../platform/db/schema.js';
import { deferWrite } from '../../platform/db/pipeline.js';
import type { JournalEntriesTable, JournalLinesTable } from './ledger.tables.js';
import './ledger.tables.js';

export type EntryRow = Selectable<JournalEntriesTable>;
export type LineRow = Selectable<JournalLinesTable>;

export async function findEntry(tx: Tx, tenantId: string, id: string): Promise<EntryRow | undefined> {
  return tx.selectFrom('journal_entries').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
}

export async function linesOfEntries(tx: Tx, tenantId: string, entryIds: string[]): Promise<LineRow[]> {
  if (entryIds.length === 0) return [];
  return tx
    .selectFrom('journal_lines')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('entry_id', 'in', entryIds)
    .orderBy('entry_id')
    .orderBy('id')
    .execute();
}

/**
 * What one entry (by kind and reference) credited net to an account, in its currency and in the
 * functional currency (null when its lines carry no functional value); undefined when no such entry.
 */
export async function creditedByEntry(
  tx: Tx,
  tenantId: string,
  entry: { kind: string; referenceType: string; referenceId: string; account: number },
): Promise<{ amount: number; functional: number | null } | undefined> {
  const row = await tx
    .selectFrom('journal_lines as l')
    .innerJoin('journal_entries as e', (join) => join.onRef('e.tenant_id', '=', 'l.tenant_id').onRef('e.id', '=', 'l.entry_id'))
    .select((eb) => [
      eb.fn.count<number>('l.id').as('lines'),
      sql<number>`coalesce(sum(l.credit - l.debit), 0)`.as('amount'),
      sql<number | null>`sum(l.functional_credit - l.functional_debit)`.as('functional'),
    ])
    .where('e.tenant_id', '=', tenantId)
    .where('e.kind', '=', entry.kind)
    .where('e.reference_type', '=', entry.referenceType)
    .where('e.reference_id', '=', entry.referenceId)
    .where('l.account_code', '=', entry.account)
    .executeTakeFirst();
  if (!row || Number(row.lines) === 0) return undefined;
  return { amount: Number(row.amount), functional: row.functional === null ? null : Number(row.functional) };
}

/** Every entry with at least one line tagged with the invoice, oldest first. */
export async function entriesOfInvoice(tx: Tx, tenantId: string, invoiceId: string): Promise<EntryRow[]> {
  return tx
    .selectFrom('journal_entries')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('id', 'in', (eb) => eb.selectFrom('journal_lines').select('entry_id').where('tenant_id', '=', tenantId).where('invoice_id', '=', invoiceId))
    .orderBy('posted_at')
    .orderBy('id')
    .execute();
}

/**
 * Σ debit − Σ credit of one account in one currency, optionally for one invoice or credit note.
 * A balance is always of one currency: amounts of two currencies are never added.
 */
export async function accountBalance(
  tx: Tx,
  tenantId: string,
  accountCode: number,
  currency: string,
  filter: { invoiceId?: string; creditNoteId?: string; ledgerId?: number } = {},
): Promise<number> {
  let q = tx
    .selectFrom('journal_lines')
    .innerJoin('journal_entries', (join) =>
      join.onRef('journal_entries.tenant_id', '=', 'journal_lines.tenant_id').onRef('journal_entries.id', '=', 'journal_lines.entry_id'),
    )
    .select((eb) => [
      eb.fn.coalesce(eb.fn.sum<number>('journal_lines.debit'), eb.lit(0)).as('debit'),
      eb.fn.coalesce(eb.fn.sum<number>('journal_lines.credit'), eb.lit(0)).as('credit'),
    ])
    .where('journal_lines.tenant_id', '=', tenantId)
    .where('journal_lines.account_code', '=', accountCode)
    .where('journal_entries.currency', '=', currency);
  if (filter.invoiceId) q = q.where('journal_lines.invoice_id', '=', filter.invoiceId);
  if (filter.creditNoteId) q = q.where('journal_lines.credit_note_id', '=', filter.creditNoteId);
  if (filter.ledgerId !== undefined) q = q.where('journal_entries.ledger_id', '=', filter.ledgerId);
  const row = await q.executeTakeFirstOrThrow();
  return Number(row.debit) - Number(row.credit);
}

/** A document's balance on an account carried at its booking rate (receivable, note credit, deferred revenue). */
export type CarriedKey = { ledgerId: number; currency: string; account: number; tag: 'invoiceId' | 'creditNoteId'; id: string };
export const carriedKey = (k: CarriedKey) => `${k.ledgerId}:${k.currency}:${k.account}:${k.tag}:${k.id}`;

/**
 * Each key's balance on its normal side, in the transaction currency and in functional amounts,
 * over the lines that carry functional amounts (one statement for the lot).
 */
export async function carriedBalances(tx: Tx, tenantId: string, keys: CarriedKey[]): Promise<Map<string, { amount: number; functional: number }>> {
  const out = new Map<string, { amount: number; functional: number }>();
  if (keys.length === 0) return out;
  const invoiceIds = [...new Set(keys.filter((k) => k.tag === 'invoiceId').map((k) => k.id))];
  const noteIds = [...new Set(keys.filter((k) => k.tag === 'creditNoteId').map((k) => k.id))];
  const rows = await tx
    .selectFrom('journal_lines')
    .innerJoin('journal_entries', (join) =>
      join.onRef('journal_entries.tenant_id', '=', 'journal_lines.tenant_id').onRef('journal_entries.id', '=', 'journal_lines.entry_id'),
    )
    .select((eb) => [
      'journal_entries.ledger_id',
      'journal_entries.currency',
      'journal_lines.account_code',
      'journal_lines.invoice_id',
      'journal_lines.credit_note_id',
      eb.fn.sum<number>('journal_lines.debit').as('debit'),
      eb.fn.sum<number>('journal_lines.credit').as('credit'),
      eb.fn.sum<number>('journal_lines.functional_debit').as('functional_debit'),
      eb.fn.sum<number>('journal_lines.functional_credit').as('functional_credit'),
    ])
    .where('journal_lines.tenant_id', '=', tenantId)
    .where('journal_lines.functional_debit', 'is not', null)
    .where((eb) =>
      eb.or([
        ...(invoiceIds.length ? [eb('journal_lines.invoice_id', 'in', invoiceIds)] : []),
        ...(noteIds.length ? [eb('journal_lines.credit_note_id', 'in', noteIds)] : []),
      ]),
    )
    .where('journal_lines.account_code', 'in', [...new Set(keys.map((k) => k.account))])
    .groupBy([
      'journal_entries.ledger_id',
      'journal_entries.currency',
      'journal_lines.account_code',
      'journal_lines.invoice_id',
      'journal_lines.credit_note_id',
    ])
    .execute();
  for (const k of keys) {
    const key = carriedKey(k);
    if (out.has(key)) continue;
    let amount = 0;
    let functional = 0;
    for (const r of rows) {
      if (r.ledger_id !== k.ledgerId || r.currency !== k.currency || r.account_code !== k.account) continue;
      if ((k.tag === 'invoiceId' ? r.invoice_id : r.credit_note_id) !== k.id) continue;
      amount += Number(r.debit) - Number(r.credit);
      functional += Number(r.functional_debit) - Number(r.functional_credit);
    }
    // Debit-normal (receivables) positive as is; credit-normal balances turned positive.
    const sign = k.account === 1100 ? 1 : -1;
    out.set(key, { amount: sign * amount, functional: sign * functional });
  }
  return out;
}

/** One row per ledger (entity) × currency × account: one ledger per entity and currency. */
export type TrialBalanceRow = { ledger_id: number; currency: string; account_code: number; debit: number; credit: number };

export async function trialBalanceRows(tx: Tx, tenantId: string): Promise<TrialBalanceRow[]> {
  const rows = await tx
    .selectFrom('journal_lines')
    .innerJoin('journal_entries', (join) =>
      join.onRef('journal_entries.tenant_id', '=', 'journal_lines.tenant_id').onRef('journal_entries.id', '=', 'journal_lines.entry_id'),
    )
    .select((eb) => [
      'journal_entries.ledger_id',
      'journal_entries.currency',
      'journal_lines.account_code',
      eb.fn.sum<number>('journal_lines.debit').as('debit'),
      eb.fn.sum<number>('journal_lines.credit').as('credit'),
    ])
    .where('journal_lines.tenant_id', '=', tenantId)
    .groupBy(['journal_entries.ledger_id', 'journal_entries.currency', 'journal_lines.account_code'])
    .orderBy('journal_entries.ledger_id')
    .orderBy('journal_entries.currency')
    .orderBy('journal_lines.account_code')
    .execute();
  return rows.map((r) => ({ ledger_id: r.ledger_id, currency: r.currency, account_code: r.account_code, debit: Number(r.debit), credit: Number(r.credit) }));
}

/**
 * Many entries and their lines in two statements (postEntries), deferred (platform/db/pipeline):
 * nothing in the posting action reads them back, and the balance check runs at COMMIT anyway.
 */
export async function insertEntries(tx: WriteTx, entries: Insertable<JournalEntriesTable>[], lines: Insertable<JournalLinesTable>[]): Promise<void> {
  if (entries.length === 0) return;
  await deferWrite(tx, tx.insertInto('journal_entries').values(entries));
  await deferWrite(tx, tx.insertInto('journal_lines').values(lines));
  // The secondary ledger's feed (ledger.jobs.ts) picks committed entries up from here.
  await deferWrite(tx, tx.insertInto('tb_outbox').values(entries.map((e) => ({ tenant_id: e.tenant_id, entry_id: e.id }))));
}
