import { sql, type Insertable, type Kysely, type Selectable } from 'kysely';
import type { DB, Tx } from '../../platform/db/schema.js';
import type { PortalLoginTokensTable, PortalSessionsTable } from './portal.tables.js';
import './portal.tables.js';

export type PortalSessionRow = Selectable<PortalSessionsTable>;

export async function insertLoginToken(tx: Tx, row: Insertable<PortalLoginTokensTable>): Promise<void> {
  await tx.insertInto('portal_login_tokens').values(row).execute();
}

/**
 * Spends a sign-in link: the guarded UPDATE (unused, unexpired) makes it one-time however many
 * times it is opened at once. Undefined when it is unknown, used or expired.
 */
export async function useLoginToken(tx: Tx, tenantId: string, tokenHash: string, now: Date): Promise<{ customer_id: string } | undefined> {
  return tx
    .updateTable('portal_login_tokens')
    .set({ used_at: now })
    .where('tenant_id', '=', tenantId)
    .where('token_hash', '=', tokenHash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .returning('customer_id')
    .executeTakeFirst();
}

export async function insertSession(tx: Tx, row: Insertable<PortalSessionsTable>): Promise<void> {
  await tx.insertInto('portal_sessions').values(row).execute();
}

export async function findLiveSession(tx: Tx, tenantId: string, tokenHash: string, now: Date): Promise<PortalSessionRow | undefined> {
  return tx
    .selectFrom('portal_sessions')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('token_hash', '=', tokenHash)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
}

export async function revokeSession(tx: Tx, tenantId: string, id: string, now: Date): Promise<void> {
  await tx
    .updateTable('portal_sessions')
    .set({ revoked_at: now })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .execute();
}

/**
 * Serializes the e-mailed sign-in links of one customer until the transaction ends, so that
 * concurrent jobs count each other's links (the cap holds under a parallel worker).
 */
export async function lockEmailedLinks(tx: Tx, tenantId: string, customerId: string): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`portal-login:${tenantId}:${customerId}`}, 0))`.execute(tx);
}

/** Sign-in links e-mailed to the customer (not API-made ones) at `requester`'s request since `since`. */
export async function countEmailedLinksSince(tx: Tx, tenantId: string, customerId: string, requester: string, since: Date): Promise<number> {
  const row = await tx
    .selectFrom('portal_login_tokens')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('tenant_id', '=', tenantId)
    .where('customer_id', '=', customerId)
    .where('source', '=', 'email')
    .where('requester', '=', requester)
    .where('created_at', '>', since)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Housekeeping: credentials a day past expiry are of no use to anyone. */
export async function deleteExpiredCredentials(db: Kysely<DB>, before: Date): Promise<void> {
  await db.deleteFrom('portal_login_tokens').where('expires_at', '<', before).execute();
  await db.deleteFrom('portal_sessions').where('expires_at', '<', before).execute();
}
