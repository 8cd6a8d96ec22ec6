import type { Insertable, Selectable } from 'kysely';
import { paginate } from '../../platform/db/paginate.js';
import type { LockFlag, Tx } from '../../platform/db/schema.js';
import type { Page } from '../../platform/http/envelope.js';
import type { GiftsTable, GiftStatus } from './gifts.tables.js';
import './gifts.tables.js';

export type GiftRow = Selectable<GiftsTable>;

export async function insertGift(tx: Tx, row: Insertable<GiftsTable>): Promise<void> {
  await tx.insertInto('gifts').values(row).execute();
}

export async function codeExists(tx: Tx, tenantId: string, code: string): Promise<boolean> {
  const row = await tx.selectFrom('gifts').select('id').where('tenant_id', '=', tenantId).where('code', '=', code).executeTakeFirst();
  return row !== undefined;
}

export async function findGift(tx: Tx, tenantId: string, id: string): Promise<GiftRow | undefined> {
  return tx.selectFrom('gifts').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
}

export async function findGiftByCode<T extends Tx>(tx: T, tenantId: string, code: string, forUpdate?: LockFlag<T>): Promise<GiftRow | undefined> {
  let q = tx.selectFrom('gifts').selectAll().where('tenant_id', '=', tenantId).where('code', '=', code);
  if (forUpdate) q = q.forUpdate();
  return q.executeTakeFirst();
}

export type GiftFilter = { status?: GiftStatus; buyer_customer_id?: string };

export async function listGiftRows(tx: Tx, tenantId: string, filter: GiftFilter, page: Page): Promise<{ rows: GiftRow[]; total: number }> {
  let q = tx.selectFrom('gifts').where('tenant_id', '=', tenantId);
  if (filter.status) q = q.where('status', '=', filter.status);
  if (filter.buyer_customer_id) q = q.where('buyer_customer_id', '=', filter.buyer_customer_id);
  return paginate<GiftRow>(tx, q, { tenantId, table: 'gifts', page });
}
