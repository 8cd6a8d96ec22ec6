import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Tx, WriteTx } from '../../platform/db/schema.js';
import { deferWrite } from '../../platform/db/pipeline.js';
import type { Page } from '../../platform/http/envelope.js';
import { paginate, type ListResult } from '../../platform/db/paginate.js';
import type {
  AccountingConnectionsTable,
  AccountingOAuthStatesTable,
  AccountingSyncRecordsTable,
  AccountingSyncRunsTable,
  SyncRecordStatus,
  SyncRecordType,
} from './accounting.tables.js';
import './accounting.tables.js';

export type ConnectionRow = Selectable<AccountingConnectionsTable>;
export type OAuthStateRow = Selectable<AccountingOAuthStatesTable>;
export type SyncRecordRow = Selectable<AccountingSyncRecordsTable>;
export type SyncRunRow = Selectable<AccountingSyncRunsTable>;

export async function insertOAuthState(tx: WriteTx, row: Insertable<AccountingOAuthStatesTable>): Promise<void> {
  await deferWrite(tx, tx.insertInto('accounting_oauth_states').values(row));
}

/**
 * Consumes a state exactly once: the UPDATE matches only an unused, unexpired state of this
 * provider, so a replayed, late or foreign state finds nothing.
 */
export async function consumeOAuthState(tx: Tx, tenantId: string, stateHash: string, provider: string, now: Date): Promise<OAuthStateRow | undefined> {
  return tx
    .updateTable('accounting_oauth_states')
    .set({ used_at: now })
    .where('tenant_id', '=', tenantId)
    .where('state_hash', '=', stateHash)
    .where('provider', '=', provider as OAuthStateRow['provider'])
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .returningAll()
    .executeTakeFirst();
}

/** Housekeeping across tenants: connect flows that ended (used or expired) a day ago. */
export async function purgeOAuthStates(tx: Tx, before: Date): Promise<number> {
  const result = await tx.deleteFrom('accounting_oauth_states').where('expires_at', '<', before).executeTakeFirst();
  return Number(result.numDeletedRows);
}

export async function insertConnection(tx: Tx, row: Insertable<AccountingConnectionsTable>): Promise<void> {
  await tx.insertInto('accounting_connections').values(row).execute();
}

export async function findConnection(tx: Tx, tenantId: string, id: string): Promise<ConnectionRow | undefined> {
  return tx.selectFrom('accounting_connections').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
}

export async function findConnectionByCompany(tx: Tx, tenantId: string, provider: string, externalTenantId: string): Promise<ConnectionRow | undefined> {
  return tx
    .selectFrom('accounting_connections')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('provider', '=', provider as ConnectionRow['provider'])
    .where('external_tenant_id', '=', externalTenantId)
    .executeTakeFirst();
}

export async function listConnectionRows(tx: Tx, tenantId: string, page: Page): Promise<ListResult<ConnectionRow>> {
  const query = tx.selectFrom('accounting_connections').where('tenant_id', '=', tenantId);
  return paginate<ConnectionRow>(tx, query, { tenantId, table: 'accounting_connections', page });
}

export async function connectionsOf(tx: Tx, tenantId: string): Promise<ConnectionRow[]> {
  return tx.selectFrom('accounting_connections').selectAll().where('tenant_id', '=', tenantId).orderBy('created_at').execute();
}

export async function updateConnection(
  tx: Tx,
  tenantId: string,
  id: string,
  patch: Updateable<AccountingConnectionsTable>,
): Promise<ConnectionRow | undefined> {
  return tx.updateTable('accounting_connections').set(patch).where('tenant_id', '=', tenantId).where('id', '=', id).returningAll().executeTakeFirst();
}

export async function deleteConnection(tx: Tx, tenantId: string, id: string): Promise<ConnectionRow | undefined> {
  return tx.deleteFrom('accounting_connections').where('tenant_id', '=', tenantId).where('id', '=', id).returningAll().executeTakeFirst();
}

/**
 * The refresh lease (decision 0065): granted only when nobody holds a live lease and the tokens
 * are still the version the caller read, so two workers never spend one refresh token.
 */
export async function takeRefreshLease(tx: Tx, tenantId: string, id: string, tokenVersion: number, now: Date, until: Date): Promise<ConnectionRow | undefined> {
  return tx
    .updateTable('accounting_connections')
    .set({ refresh_lease_until: until, updated_at: now })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .where('status', '=', 'active')
    .where('token_version', '=', tokenVersion)
    .where((eb) => eb.or([eb('refresh_lease_until', 'is', null), eb('refresh_lease_until', '<', now)]))
    .returningAll()
    .executeTakeFirst();
}

/** The sync lease: one run at a time per connection (a create racing a create would duplicate). */
export async function takeSyncLease(tx: Tx, tenantId: string, id: string, now: Date, until: Date): Promise<boolean> {
  const row = await tx
    .updateTable('accounting_connections')
    .set({ sync_lease_until: until })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .where((eb) => eb.or([eb('sync_lease_until', 'is', null), eb('sync_lease_until', '<', now)]))
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

export async function releaseSyncLease(tx: Tx, tenantId: string, id: string): Promise<void> {
  await tx.updateTable('accounting_connections').set({ sync_lease_until: null }).where('tenant_id', '=', tenantId).where('id', '=', id).execute();
}

export async function insertSyncRun(tx: WriteTx, row: Insertable<AccountingSyncRunsTable>): Promise<void> {
  await deferWrite(tx, tx.insertInto('accounting_sync_runs').values(row));
}

export async function updateSyncRun(tx: Tx, tenantId: string, id: string, patch: Updateable<AccountingSyncRunsTable>): Promise<void> {
  await tx.updateTable('accounting_sync_runs').set(patch).where('tenant_id', '=', tenantId).where('id', '=', id).execute();
}

export async function findSyncRun(tx: Tx, tenantId: string, id: string): Promise<SyncRunRow | undefined> {
  return tx.selectFrom('accounting_sync_runs').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
}

export async function latestSyncRuns(tx: Tx, tenantId: string, connectionIds: string[]): Promise<SyncRunRow[]> {
  if (connectionIds.length === 0) return [];
  return tx
    .selectFrom('accounting_sync_runs')
    .selectAll()
    .distinctOn('connection_id')
    .where('tenant_id', '=', tenantId)
    .where('connection_id', 'in', connectionIds)
    .orderBy('connection_id')
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

export async function syncRecordsOf(tx: Tx, tenantId: string, connectionId: string, recordType: SyncRecordType, recordIds: string[]): Promise<SyncRecordRow[]> {
  if (recordIds.length === 0) return [];
  return tx
    .selectFrom('accounting_sync_records')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('connection_id', '=', connectionId)
    .where('record_type', '=', recordType)
    .where('record_id', 'in', recordIds)
    .execute();
}

/**
 * A connection's refund records that may hold a document at the provider (an id recorded, or a
 * create started whose outcome was never recorded), not voided yet: a page after `after` (record
 * id order). The sync voids those whose refund failed (decision 0860).
 */
export async function bookedRefundRecords(tx: Tx, tenantId: string, connectionId: string, after: string | null, limit: number): Promise<SyncRecordRow[]> {
  let query = tx
    .selectFrom('accounting_sync_records')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('connection_id', '=', connectionId)
    .where('record_type', '=', 'refund')
    .where('status', '!=', 'voided')
    .where((eb) => eb.or([eb('external_id', 'is not', null), eb('create_started_at', 'is not', null)]));
  if (after) query = query.where('record_id', '>', after);
  return query.orderBy('record_id').limit(limit).execute();
}

/** Writes a record's outcome (insert or update on the natural key). */
export async function saveSyncRecord(tx: Tx, row: Insertable<AccountingSyncRecordsTable>): Promise<void> {
  await tx
    .insertInto('accounting_sync_records')
    .values(row)
    .onConflict((oc) =>
      oc.columns(['tenant_id', 'connection_id', 'record_type', 'record_id']).doUpdateSet((eb) => ({
        external_id: eb.ref('excluded.external_id'),
        external_version: eb.ref('excluded.external_version'),
        payload_hash: eb.ref('excluded.payload_hash'),
        status: eb.ref('excluded.status'),
        last_error: eb.ref('excluded.last_error'),
        attempts: eb('accounting_sync_records.attempts', '+', 1),
        create_started_at: eb.ref('excluded.create_started_at'),
        synced_at: eb.ref('excluded.synced_at'),
        updated_at: eb.ref('excluded.updated_at'),
      })),
    )
    .execute();
}

/**
 * Commits, before a create is sent to a provider without idempotency keys, that it is about to be
 * sent: a crash before the outcome is recorded leaves the mark, and the next attempt looks first.
 */
export async function markCreateStarted(tx: Tx, row: Omit<Insertable<AccountingSyncRecordsTable>, 'attempts'>): Promise<void> {
  await tx
    .insertInto('accounting_sync_records')
    .values({ ...row, attempts: 0 })
    .onConflict((oc) =>
      oc.columns(['tenant_id', 'connection_id', 'record_type', 'record_id']).doUpdateSet((eb) => ({
        create_started_at: eb.ref('excluded.create_started_at'),
        updated_at: eb.ref('excluded.updated_at'),
      })),
    )
    .execute();
}

export type SyncRecordFilter = { connection_id?: string; status?: SyncRecordStatus; record_type?: SyncRecordType };

export async function listSyncRecordRows(tx: Tx, tenantId: string, filter: SyncRecordFilter, page: Page): Promise<ListResult<SyncRecordRow>> {
  let query = tx.selectFrom('accounting_sync_records').where('tenant_id', '=', tenantId);
  if (filter.connection_id) query = query.where('connection_id', '=', filter.connection_id);
  if (filter.status) query = query.where('status', '=', filter.status);
  if (filter.record_type) query = query.where('record_type', '=', filter.record_type);
  return paginate<SyncRecordRow>(tx, query, { tenantId, table: 'accounting_sync_records', page, orderBy: 'updated_at' });
}
