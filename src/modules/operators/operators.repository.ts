import type { Selectable } from 'kysely';
import { paginate, type ListResult } from '../../platform/db/paginate.js';
import type { Tx } from '../../platform/db/schema.js';
import type { Page } from '../../platform/http/envelope.js';
import type { UsersTable } from '../../platform/auth/auth.tables.js';
import type { UserInvitationsTable } from './operators.tables.js';

export type UserRow = Selectable<UsersTable>;
export type InvitationRow = Selectable<UserInvitationsTable>;

/** The tenant's operators, oldest first (the owner leads), through paginate (decision 0035). */
export async function usersPage(tx: Tx, tenantId: string, page: Page): Promise<ListResult<UserRow>> {
  const query = tx.selectFrom('users').where('tenant_id', '=', tenantId);
  return paginate<UserRow>(tx, query, { tenantId, table: 'users', page, ascending: true });
}

/** The tenant's invitations (pending, accepted, revoked, expired), newest first. */
export async function invitationsPage(tx: Tx, tenantId: string, page: Page): Promise<ListResult<InvitationRow>> {
  const query = tx.selectFrom('user_invitations').where('tenant_id', '=', tenantId);
  return paginate<InvitationRow>(tx, query, { tenantId, table: 'user_invitations', page });
}
