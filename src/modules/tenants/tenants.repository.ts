import type { Insertable, Selectable, Updateable } from 'kysely';
import type { LockFlag, Tx } from '../../platform/db/schema.js';
import type { ApiKeysTable, TenantsTable } from '../../platform/auth/auth.tables.js';
import type { TenantSettingsTable } from './tenants.tables.js';
import './tenants.tables.js';

export type TenantRow = Selectable<TenantsTable>;
export type ApiKeyRow = Selectable<ApiKeysTable>;
export type SettingsRow = Selectable<TenantSettingsTable>;

export async function insertTenant(tx: Tx, row: Insertable<TenantsTable>, settings: Insertable<TenantSettingsTable>): Promise<void> {
  await tx.insertInto('tenants').values(row).execute();
  await tx.insertInto('tenant_settings').values(settings).execute();
}

export async function findTenant(tx: Tx, tenantId: string): Promise<TenantRow | undefined> {
  return tx.selectFrom('tenants').selectAll().where('id', '=', tenantId).executeTakeFirst();
}

export async function insertApiKey(tx: Tx, row: Insertable<ApiKeysTable>): Promise<void> {
  await tx.insertInto('api_keys').values(row).execute();
}

export async function listApiKeyRows(tx: Tx, tenantId: string): Promise<ApiKeyRow[]> {
  return tx.selectFrom('api_keys').selectAll().where('tenant_id', '=', tenantId).orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
}

export async function findApiKeyRow(tx: Tx, tenantId: string, id: string): Promise<ApiKeyRow | undefined> {
  return tx.selectFrom('api_keys').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
}

export async function revokeApiKeyRow(tx: Tx, tenantId: string, id: string, now: Date): Promise<ApiKeyRow | undefined> {
  // Revoking twice keeps the first revocation time.
  await tx.updateTable('api_keys').set({ revoked_at: now }).where('tenant_id', '=', tenantId).where('id', '=', id).where('revoked_at', 'is', null).execute();
  return tx.selectFrom('api_keys').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
}

export async function findSettings<T extends Tx>(tx: T, tenantId: string, forUpdate?: LockFlag<T>): Promise<SettingsRow | undefined> {
  let q = tx.selectFrom('tenant_settings').selectAll().where('tenant_id', '=', tenantId);
  if (forUpdate) q = q.forUpdate();
  return q.executeTakeFirst();
}

export async function updateSettingsRow(tx: Tx, tenantId: string, patch: Updateable<TenantSettingsTable>): Promise<SettingsRow> {
  return tx.updateTable('tenant_settings').set(patch).where('tenant_id', '=', tenantId).returningAll().executeTakeFirstOrThrow();
}

/** How many tenants a deployment of `mode` serves: a worker says so at start (a cross-tenant count, nothing else read). */
export async function countTenantsInMode(db: Tx, mode: 'test' | 'live'): Promise<number> {
  const row = await db
    .selectFrom('tenants')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('mode', '=', mode)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
