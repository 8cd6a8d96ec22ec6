import type { Insertable, Kysely, Selectable } from 'kysely';
import { paginate } from '../../platform/db/paginate.js';
import type { DB, LockFlag, Tx } from '../../platform/db/schema.js';
import type { Page } from '../../platform/http/envelope.js';
import type { QuotesTable, QuoteStatus } from './quotes.tables.js';
import './quotes.tables.js';
import { inMode, type Mode } from '../../platform/auth/tenant-mode.js';

export type QuoteRow = Selectable<QuotesTable>;

export async function insertQuote(tx: Tx, row: Insertable<QuotesTable>): Promise<void> {
  await tx.insertInto('quotes').values(row).execute();
}

export async function findQuote<T extends Tx>(tx: T, tenantId: string, id: string, forUpdate?: LockFlag<T>): Promise<QuoteRow | undefined> {
  let q = tx.selectFrom('quotes').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id);
  if (forUpdate) q = q.forUpdate();
  return q.executeTakeFirst();
}

export type QuoteFilter = { status?: QuoteStatus; customer_id?: string };

export async function listQuoteRows(tx: Tx, tenantId: string, filter: QuoteFilter, page: Page): Promise<{ rows: QuoteRow[]; total: number }> {
  let q = tx.selectFrom('quotes').where('tenant_id', '=', tenantId);
  if (filter.status) q = q.where('status', '=', filter.status);
  if (filter.customer_id) q = q.where('customer_id', '=', filter.customer_id);
  return paginate<QuoteRow>(tx, q, { tenantId, table: 'quotes', page });
}

/** Open quotes past their validity, across tenants (the expiry job). */
export async function dueForExpiry(db: Kysely<DB>, mode: Mode | null, now: Date, limit: number): Promise<{ tenant_id: string; id: string }[]> {
  return db
    .selectFrom('quotes')
    .select(['tenant_id', 'id'])
    .where(inMode(mode))
    .where('status', '=', 'draft')
    .where('valid_until', '<=', now)
    .orderBy('valid_until')
    .limit(limit)
    .execute();
}
