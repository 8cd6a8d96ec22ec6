import type { Page } from '../../platform/http/envelope.js';
import { Readable } from 'node:stream';
import type { ReadCtx } from '../../platform/context.js';
import { errors } from '../../platform/errors.js';
import { toIso } from '../../platform/time.js';
import { findEntity, findPrimaryEntity } from '../entities/index.js';
import { startOfLocalDay } from '../tax/index.js';
import {
  ACCOUNT_NAMES,
  accountTotals,
  exportPage,
  functionalAccountTotals,
  listEntries,
  toJournalEntries,
  type AccountCode,
  type EntryFilter,
  type JournalEntry,
} from '../ledger/index.js';
import { getTenant } from '../tenants/index.js';

/**
 * Parses a query bound: a date is a calendar day in `timeZone` (the entity's, DESIGN §18) and
 * means the start of that day (`start`) or the start of the next (`end`, exclusive); a date-time
 * is that instant.
 */
export function parseBound(value: string | undefined, field: string, side: 'start' | 'end', timeZone = 'UTC'): Date | null {
  if (value === undefined) return null;
  const dateOnly = /^\d{4}-\d{2}-\d{2}$/.test(value);
  const d = new Date(dateOnly ? `${value}T00:00:00Z` : value);
  if (Number.isNaN(d.getTime()) || (dateOnly && d.toISOString().slice(0, 10) !== value))
    throw errors.invalidField(field, 'must be a date (YYYY-MM-DD) or an RFC 3339 date-time');
  if (!dateOnly) return d;
  return startOfLocalDay(d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate() + (side === 'end' ? 1 : 0), timeZone);
}

export function rangeOf(query: { from?: string | undefined; to?: string | undefined }, timeZone = 'UTC'): { from: Date | null; to: Date | null } {
  const from = parseBound(query.from, 'from', 'start', timeZone);
  const to = parseBound(query.to, 'to', 'end', timeZone);
  if (from && to && from > to) throw errors.invalidField('to', 'must not be before from');
  return { from, to };
}

/** The time zone a report's dates are read in: the entity's named, else the primary entity's (DESIGN §18). */
export async function reportZone(ctx: ReadCtx, entityId: string | undefined): Promise<string> {
  const entity = entityId ? await findEntity(ctx.tx, ctx.tenantId, entityId) : await findPrimaryEntity(ctx.tx, ctx.tenantId);
  return entity?.time_zone ?? 'UTC';
}

type AccountType = 'asset' | 'liability' | 'revenue' | 'contra_revenue';

function accountType(code: number): { type: AccountType; normal_balance: 'debit' | 'credit' } {
  if (code < 2000) return { type: 'asset', normal_balance: 'debit' };
  if (code < 4000) return { type: 'liability', normal_balance: 'credit' };
  if (code === 4900) return { type: 'contra_revenue', normal_balance: 'debit' };
  return { type: 'revenue', normal_balance: 'credit' };
}

function accountName(code: number): string {
  return ACCOUNT_NAMES[code as AccountCode] ?? `account ${code}`;
}

/** The chart of accounts (docs/ledger.md). */
export function chartOfAccounts() {
  return Object.keys(ACCOUNT_NAMES)
    .map(Number)
    .sort((a, b) => a - b)
    .map((code) => ({ code, name: accountName(code), ...accountType(code) }));
}

async function resolveEntity(ctx: ReadCtx, entityId: string | undefined) {
  const entity = entityId ? await findEntity(ctx.tx, ctx.tenantId, entityId) : await findPrimaryEntity(ctx.tx, ctx.tenantId);
  if (!entity) throw errors.notFound('entity');
  return entity;
}

/**
 * Trial balance of one entity × currency as of an instant: each account's net balance in the
 * debit or the credit column, and the two totals (equal when the books balance).
 */
export async function trialBalance(
  ctx: ReadCtx,
  query: { entity_id?: string | undefined; currency?: string | undefined; as_of?: string | undefined; basis?: 'transaction' | 'functional' | undefined },
) {
  const entity = await resolveEntity(ctx, query.entity_id);
  const end = parseBound(query.as_of, 'as_of', 'end', entity.time_zone);
  // A date means the whole day: up to its last millisecond.
  const asOf = end ? (query.as_of && /^\d{4}-\d{2}-\d{2}$/.test(query.as_of) ? new Date(end.getTime() - 1) : end) : ctx.now;
  if (query.basis === 'functional') return functionalTrialBalance(ctx, entity, query.currency, asOf);
  const currency = query.currency ?? (await getTenant(ctx)).base_currency;
  const rows = await accountTotals(ctx.tx, ctx.tenantId, { entityId: entity.id, currency, asOf });
  const accounts = rows.map((r) => {
    const balance = r.debit - r.credit;
    return { code: r.account_code, name: accountName(r.account_code), debit: Math.max(balance, 0), credit: Math.max(-balance, 0), balance };
  });
  const total_debit = accounts.reduce((a, r) => a + r.debit, 0);
  const total_credit = accounts.reduce((a, r) => a + r.credit, 0);
  return {
    entity_id: entity.id,
    currency,
    as_of: toIso(asOf),
    basis: 'transaction' as const,
    accounts,
    total_debit,
    total_credit,
    balanced: total_debit === total_credit,
  };
}

/**
 * The trial balance in the entity's functional currency (DESIGN §19): every entry, whatever its
 * currency, at its functional amounts — each account with its transaction-currency nets beside.
 */
async function functionalTrialBalance(ctx: ReadCtx, entity: { id: string; functional_currency: string }, currency: string | undefined, asOf: Date) {
  if (currency !== undefined && currency !== entity.functional_currency) {
    throw errors.invalidField('currency', `the functional basis is in the entity's functional currency ${entity.functional_currency}`);
  }
  const { rows, unvalued } = await functionalAccountTotals(ctx.tx, ctx.tenantId, { entityId: entity.id, asOf });
  const byAccount = new Map<number, { balance: number; transaction_balances: { currency: string; balance: number }[] }>();
  for (const r of rows) {
    const a = byAccount.get(r.account_code) ?? { balance: 0, transaction_balances: [] };
    a.balance += r.functional_debit - r.functional_credit;
    if (r.debit !== 0 || r.credit !== 0) a.transaction_balances.push({ currency: r.currency, balance: r.debit - r.credit });
    byAccount.set(r.account_code, a);
  }
  const accounts = [...byAccount.entries()].map(([code, a]) => ({
    code,
    name: accountName(code),
    debit: Math.max(a.balance, 0),
    credit: Math.max(-a.balance, 0),
    balance: a.balance,
    transaction_balances: a.transaction_balances,
  }));
  const total_debit = accounts.reduce((a, r) => a + r.debit, 0);
  const total_credit = accounts.reduce((a, r) => a + r.credit, 0);
  return {
    entity_id: entity.id,
    currency: entity.functional_currency,
    as_of: toIso(asOf),
    basis: 'functional' as const,
    accounts,
    total_debit,
    total_credit,
    balanced: total_debit === total_credit,
    unvalued_entries: unvalued,
  };
}

export type JournalQuery = {
  from?: string | undefined;
  to?: string | undefined;
  entity_id?: string | undefined;
  currency?: string | undefined;
  kind?: string | undefined;
  account_code?: number | undefined;
  invoice_id?: string | undefined;
};

function filterOf(query: JournalQuery, timeZone: string): EntryFilter {
  const { from, to } = rangeOf(query, timeZone);
  return {
    ...(from ? { from } : {}),
    ...(to ? { to } : {}),
    ...(query.entity_id ? { entityId: query.entity_id } : {}),
    ...(query.currency ? { currency: query.currency } : {}),
    ...(query.kind ? { kind: query.kind } : {}),
    ...(query.account_code !== undefined ? { accountCode: query.account_code } : {}),
    ...(query.invoice_id ? { invoiceId: query.invoice_id } : {}),
  };
}

export async function listJournalEntries(ctx: ReadCtx, query: JournalQuery, page: Page): Promise<{ entries: JournalEntry[]; total: number }> {
  const { entries, total } = await listEntries(ctx.tx, ctx.tenantId, filterOf(query, await reportZone(ctx, query.entity_id)), page);
  return { entries: await toJournalEntries(ctx, entries), total };
}

// The functional columns come last, so readers of the older columns keep their positions.
const CSV_HEADER =
  'posted_at,entry_id,entity_id,ledger_id,currency,kind,reference_type,reference_id,description,line_id,account_code,account_name,debit,credit,customer_id,invoice_id,credit_note_id,functional_currency,exchange_rate,functional_debit,functional_credit\n';

function csvField(value: unknown): string {
  const s = value === null || value === undefined ? '' : value instanceof Date ? value.toISOString() : String(value);
  // Quote when needed; a leading formula character is neutralized for spreadsheets.
  const safe = /^[=+\-@\t\r]/.test(s) && !/^-?\d+$/.test(s) ? `'${s}` : s;
  return /[",\n\r]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

export const EXPORT_PAGE = 2_000;

/**
 * The general-ledger export: a CSV row per journal line of the entries posted in [from, to),
 * read in keyset pages as the client consumes the stream. Validation happens before the first
 * byte, so a bad query is still a 400.
 */
export function exportGeneralLedger(ctx: ReadCtx, query: Omit<JournalQuery, 'kind' | 'account_code' | 'invoice_id'>, timeZone = 'UTC'): Readable {
  const filter = filterOf(query, timeZone);
  async function* rows(): AsyncGenerator<string> {
    yield CSV_HEADER;
    let after: { postedAt: Date; entryId: string; lineId: string } | null = null;
    for (;;) {
      const page = await exportPage(ctx.tx, ctx.tenantId, filter, after, EXPORT_PAGE);
      if (page.length === 0) return;
      let chunk = '';
      for (const r of page) {
        chunk += [
          r.posted_at,
          r.id,
          r.entity_id,
          r.ledger_id,
          r.currency,
          r.kind,
          r.reference_type,
          r.reference_id,
          r.description,
          r.line_id,
          r.account_code,
          accountName(r.account_code),
          r.debit,
          r.credit,
          r.customer_id,
          r.invoice_id,
          r.credit_note_id,
          r.functional_currency,
          r.exchange_rate,
          r.functional_debit,
          r.functional_credit,
        ]
          .map(csvField)
          .join(',');
        chunk += '\n';
      }
      yield chunk;
      if (page.length < EXPORT_PAGE) return;
      const last = page[page.length - 1]!;
      after = { postedAt: last.posted_at, entryId: last.id, lineId: last.line_id };
    }
  }
  return Readable.from(rows());
}
