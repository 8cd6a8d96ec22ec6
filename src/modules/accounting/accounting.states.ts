import type { Updateable } from 'kysely';
import type { Tx } from '../../platform/db/schema.js';
import type { AccountingConnectionsTable, ConnectionStatus } from './accounting.tables.js';
import type { ConnectionRow } from './accounting.repository.js';

/**
 * A connection's status: `active` syncs; `reconnect_required` (the provider refused the refresh
 * token: invalid_grant) and `error` (the provider refused the access token or the company) pause
 * sync until the tenant connects again, which makes the connection `active` anew.
 */
export type ConnectionEvent = 'grant_invalid' | 'access_refused' | 'reconnected';

export const CONNECTION_TRANSITIONS: Record<ConnectionEvent, { from: ConnectionStatus[]; to: ConnectionStatus }> = {
  grant_invalid: { from: ['active', 'error'], to: 'reconnect_required' },
  access_refused: { from: ['active'], to: 'error' },
  reconnected: { from: ['active', 'reconnect_required', 'error'], to: 'active' },
};

/** The guarded UPDATE: applies only from an allowed status; undefined when it did not apply. */
export async function transitionConnection(
  tx: Tx,
  tenantId: string,
  id: string,
  event: ConnectionEvent,
  patch: Updateable<AccountingConnectionsTable>,
): Promise<ConnectionRow | undefined> {
  const t = CONNECTION_TRANSITIONS[event];
  return tx
    .updateTable('accounting_connections')
    .set({ ...patch, status: t.to })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .where('status', 'in', t.from)
    .returningAll()
    .executeTakeFirst();
}
