import { sql } from 'kysely';
import type { Tx } from '../../platform/db/schema.js';
import { paginate } from '../../platform/db/paginate.js';
import type { Page } from '../../platform/http/envelope.js';
import type { EntryRow, LineRow } from './ledger.repository.js';
import './ledger.tables.js';

/** Σ debits and Σ credits per account of one entity × currency, posted at or before asOf. */
export async function accountTotals(
  tx: Tx,
  tenantId: string,
  filter: { entityId: string; currency: string; asOf?: Date },
): Promise<{ account_code: number; debit: number; credit: number }[]> {
  let q = tx
    .selectFrom('journal_lines as l')
    .innerJoin('journal_entries as e', (join) => join.onRef('e.tenant_id', '=', 'l.tenant_id').onRef('e.id', '=', 'l.entry_id'))
    .select((eb) => ['l.account_code', eb.fn.sum<number>('l.debit').as('debit'), eb.fn.sum<number>('l.credit').as('credit')])
    .where('l.tenant_id', '=', tenantId)
    .where('e.entity_id', '=', filter.entityId)
    .where('e.currency', '=', filter.currency);
  if (filter.asOf) q = q.where('e.posted_at', '<=', filter.asOf);
  const rows = await q.groupBy('l.account_code').orderBy('l.account_code').execute();
  return rows.map((r) => ({ account_code: r.account_code, debit: Number(r.debit), credit: Number(r.credit) }));
}

/**
 * Functional-currency totals per account of one entity (every transaction currency), posted at or
 * before asOf, with each transaction currency's own net beside them, and the entries that carry
 * no functional amounts (foreign entries booked without a known rate).
 */
export async function functionalAccountTotals(
  tx: Tx,
  tenantId: string,
  filter: { entityId: string; asOf?: Date },
): Promise<{
  rows: { account_code: number; currency: string; debit: number; credit: number; functional_debit: number; functional_credit: number }[];
  unvalued: number;
}> {
  let q = tx
    .selectFrom('journal_lines as l')
    .innerJoin('journal_entries as e', (join) => join.onRef('e.tenant_id', '=', 'l.tenant_id').onRef('e.id', '=', 'l.entry_id'))
    .select((eb) => [
      'l.account_code',
      'e.currency',
      eb.fn.sum<number>('l.debit').as('debit'),
      eb.fn.sum<number>('l.credit').as('credit'),
      eb.fn.coalesce(eb.fn.sum<number>('l.functional_debit'), eb.lit(0)).as('functional_debit'),
      eb.fn.coalesce(eb.fn.sum<number>('l.functional_credit'), eb.lit(0)).as('functional_credit'),
    ])
    .where('l.tenant_id', '=', tenantId)
    .where('e.entity_id', '=', filter.entityId);
  if (filter.asOf) q = q.where('e.posted_at', '<=', filter.asOf);
  const rows = await q.groupBy(['l.account_code', 'e.currency']).orderBy('l.account_code').orderBy('e.currency').execute();
  let u = tx
    .selectFrom('journal_lines as l')
    .innerJoin('journal_entries as e', (join) => join.onRef('e.tenant_id', '=', 'l.tenant_id').onRef('e.id', '=', 'l.entry_id'))
    .select(sql<number>`count(DISTINCT e.id)`.as('n'))
    .where('l.tenant_id', '=', tenantId)
    .where('e.entity_id', '=', filter.entityId)
    .where('l.functional_debit', 'is', null);
  if (filter.asOf) u = u.where('e.posted_at', '<=', filter.asOf);
  const unvalued = await u.executeTakeFirstOrThrow();
  return {
    rows: rows.map((r) => ({
      account_code: r.account_code,
      currency: r.currency,
      debit: Number(r.debit),
      credit: Number(r.credit),
      functional_debit: Number(r.functional_debit),
      functional_credit: Number(r.functional_credit),
    })),
    unvalued: Number(unvalued.n),
  };
}

export type EntryFilter = {
  from?: Date;
  to?: Date;
  entityId?: string;
  currency?: string;
  kind?: string;
  accountCode?: number;
  invoiceId?: string;
};

function filtered(tx: Tx, tenantId: string, f: EntryFilter) {
  let q = tx.selectFrom('journal_entries').where('tenant_id', '=', tenantId);
  if (f.from) q = q.where('posted_at', '>=', f.from);
  if (f.to) q = q.where('posted_at', '<', f.to);
  if (f.entityId) q = q.where('entity_id', '=', f.entityId);
  if (f.currency) q = q.where('currency', '=', f.currency);
  if (f.kind) q = q.where('kind', '=', f.kind);
  if (f.accountCode !== undefined || f.invoiceId) {
    q = q.where('id', 'in', (eb) => {
      let s = eb.selectFrom('journal_lines').select('entry_id').where('tenant_id', '=', tenantId);
      if (f.accountCode !== undefined) s = s.where('account_code', '=', f.accountCode);
      if (f.invoiceId) s = s.where('invoice_id', '=', f.invoiceId);
      return s;
    });
  }
  return q;
}

/** A page of entries (oldest first) and the count of all that match. */
export async function listEntries(tx: Tx, tenantId: string, f: EntryFilter, page: Page): Promise<{ entries: EntryRow[]; total: number }> {
  const { rows, total } = await paginate<EntryRow>(tx, filtered(tx, tenantId, f), {
    tenantId,
    table: 'journal_entries',
    page,
    orderBy: 'posted_at',
    ascending: true,
  });
  return { entries: rows, total };
}

export type ExportRow = EntryRow & Omit<LineRow, 'id' | 'tenant_id' | 'entry_id'> & { line_id: string };

/**
 * One keyset page of the general-ledger export: lines of matching entries after the cursor
 * (posted_at, entry id, line id). The CSV export streams these pages, never the whole ledger.
 */
export async function exportPage(
  tx: Tx,
  tenantId: string,
  f: EntryFilter,
  after: { postedAt: Date; entryId: string; lineId: string } | null,
  limit: number,
): Promise<ExportRow[]> {
  let q = tx
    .selectFrom('journal_entries as e')
    .innerJoin('journal_lines as l', (join) => join.onRef('l.tenant_id', '=', 'e.tenant_id').onRef('l.entry_id', '=', 'e.id'))
    .selectAll('e')
    .select([
      'l.id as line_id',
      'l.account_code',
      'l.debit',
      'l.credit',
      'l.functional_debit',
      'l.functional_credit',
      'l.customer_id',
      'l.invoice_id',
      'l.credit_note_id',
    ])
    .where('e.tenant_id', '=', tenantId);
  if (f.from) q = q.where('e.posted_at', '>=', f.from);
  if (f.to) q = q.where('e.posted_at', '<', f.to);
  if (f.entityId) q = q.where('e.entity_id', '=', f.entityId);
  if (f.currency) q = q.where('e.currency', '=', f.currency);
  if (after) q = q.where(sql<boolean>`(e.posted_at, e.id, l.id) > (${after.postedAt}, ${after.entryId}, ${after.lineId})`);
  return (await q.orderBy('e.posted_at').orderBy('e.id').orderBy('l.id').limit(limit).execute()) as ExportRow[];
}
