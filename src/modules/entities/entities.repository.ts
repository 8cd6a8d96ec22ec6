import type { Insertable, Selectable, Updateable } from 'kysely';
import { paginate } from '../../platform/db/paginate.js';
import type { Tx } from '../../platform/db/schema.js';
import type { Page } from '../../platform/http/envelope.js';
import type { EntityExchangeRatesTable, LegalEntitiesTable } from './entities.tables.js';
import './entities.tables.js';

export type EntityRow = Selectable<LegalEntitiesTable>;

export async function insertEntity(tx: Tx, row: Insertable<LegalEntitiesTable>): Promise<void> {
  await tx.insertInto('legal_entities').values(row).execute();
}

/** The tenant's base currency: the functional currency of its entities outside India. */
export async function tenantBaseCurrency(tx: Tx, tenantId: string): Promise<string> {
  const row = await tx.selectFrom('tenants').select('base_currency').where('id', '=', tenantId).executeTakeFirst();
  return row?.base_currency ?? 'INR';
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
  return tx.updateTable('legal_entities').set(patch).where('tenant_id', '=', tenantId).where('id', '=', id).returningAll().executeTakeFirst();
}

export async function listEntityRows(tx: Tx, tenantId: string, page: Page): Promise<{ rows: EntityRow[]; total: number }> {
  const base = tx.selectFrom('legal_entities').where('tenant_id', '=', tenantId);
  return paginate<EntityRow>(tx, base, { tenantId, table: 'legal_entities', page: page, orderBy: 'tb_ledger_id', ascending: true });
}

export type ExchangeRateRow = Selectable<EntityExchangeRatesTable>;

/** Sets the rate of (entity, currency) from `effective_from`; the same moment again replaces it. */
export async function upsertExchangeRate(tx: Tx, row: Insertable<EntityExchangeRatesTable>): Promise<ExchangeRateRow> {
  return tx
    .insertInto('entity_exchange_rates')
    .values(row)
    .onConflict((oc) => oc.columns(['tenant_id', 'entity_id', 'currency', 'effective_from']).doUpdateSet({ rate: row.rate, updated_at: row.updated_at }))
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** The rate in force at `at`: the latest whose effective_from is not after it. */
export async function findExchangeRate(tx: Tx, tenantId: string, entityId: string, currency: string, at: Date): Promise<ExchangeRateRow | undefined> {
  return tx
    .selectFrom('entity_exchange_rates')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('entity_id', '=', entityId)
    .where('currency', '=', currency)
    .where('effective_from', '<=', at)
    .orderBy('effective_from', 'desc')
    .limit(1)
    .executeTakeFirst();
}

export async function listExchangeRateRows(tx: Tx, tenantId: string, entityId: string): Promise<ExchangeRateRow[]> {
  return tx
    .selectFrom('entity_exchange_rates')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('entity_id', '=', entityId)
    .orderBy('currency')
    .orderBy('effective_from', 'desc')
    .limit(1000)
    .execute();
}
