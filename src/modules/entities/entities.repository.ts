import type { Insertable, Selectable, Updateable } from 'kysely';
import { paginate } from '../../platform/db/paginate.js';
import type { Tx } from '../../platform/db/schema.js';
import type { Page } from '../../platform/http/envelope.js';
import type { LegalEntitiesTable } from './entities.tables.js';
import './entities.tables.js';

export type EntityRow = Selectable<LegalEntitiesTable>;

export async function insertEntity(tx: Tx, row: Insertable<LegalEntitiesTable>): Promise<void> {
  await tx.insertInto('legal_entities').values(row).execute();
}

export async function findEntity(tx: Tx, tenantId: string, id: string): Promise<EntityRow | undefined> {
  return tx.selectFrom('legal_entities').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
}

export async function findPrimaryEntity(tx: Tx, tenantId: string): Promise<EntityRow | undefined> {
  return tx.selectFrom('legal_entities').selectAll().where('tenant_id', '=', tenantId).where('is_primary', '=', true).executeTakeFirst();
}

export async function prefixTaken(tx: Tx, tenantId: string, prefix: string, exceptId?: string): Promise<boolean> {
  let q = tx.selectFrom('legal_entities').select('id').where('tenant_id', '=', tenantId).where('invoice_prefix', '=', prefix);
  if (exceptId) q = q.where('id', '!=', exceptId);
  return (await q.executeTakeFirst()) !== undefined;
}

/** The next ledger id; callers hold the tenant's settings row lock so two creations never race. */
export async function nextLedgerId(tx: Tx, tenantId: string): Promise<number> {
  const row = await tx
    .selectFrom('legal_entities')
    .select((eb) => eb.fn.max<number | null>('tb_ledger_id').as('max'))
    .where('tenant_id', '=', tenantId)
    .executeTakeFirstOrThrow();
  return (row.max ?? 0) + 1;
}

export async function updateEntityRow(tx: Tx, tenantId: string, id: string, patch: Updateable<LegalEntitiesTable>): Promise<EntityRow | undefined> {
  return tx
    .updateTable('legal_entities')
    .set(patch)
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

export async function listEntityRows(tx: Tx, tenantId: string, page: Page): Promise<{ rows: EntityRow[]; total: number }> {
  const base = tx.selectFrom('legal_entities').where('tenant_id', '=', tenantId);
  return paginate<EntityRow>(tx, base, { tenantId, table: 'legal_entities', page: page, orderBy: 'tb_ledger_id', ascending: true });
}
