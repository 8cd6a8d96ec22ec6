import type { Insertable, Selectable } from 'kysely';
import type { Kysely } from 'kysely';
import { paginate, type ListResult } from '../../platform/db/paginate.js';
import type { DB, Tx } from '../../platform/db/schema.js';
import type { ReferralsTable, ReferralStatus } from './referrals.tables.js';
import './referrals.tables.js';
import { inMode, type Mode } from '../../platform/auth/tenant-mode.js';

export type ReferralRow = Selectable<ReferralsTable>;

export async function insertReferral(tx: Tx, row: Insertable<ReferralsTable>): Promise<void> {
  await tx.insertInto('referrals').values(row).execute();
}

export async function findReferral(tx: Tx, tenantId: string, id: string): Promise<ReferralRow | undefined> {
  return tx.selectFrom('referrals').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
}

export async function codeExists(tx: Tx, tenantId: string, code: string): Promise<boolean> {
  const row = await tx.selectFrom('referrals').select('id').where('tenant_id', '=', tenantId).where('code', '=', code).executeTakeFirst();
  return row !== undefined;
}

/** The live (pending or completed) referral of a referred customer; the partial unique index allows one. */
export async function findLiveReferralOf(tx: Tx, tenantId: string, referredId: string): Promise<ReferralRow | undefined> {
  return tx
    .selectFrom('referrals')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('referred_id', '=', referredId)
    .where('status', 'in', ['pending', 'completed'])
    .executeTakeFirst();
}

export async function findPendingReferralOf(tx: Tx, tenantId: string, referredId: string): Promise<ReferralRow | undefined> {
  return tx
    .selectFrom('referrals')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('referred_id', '=', referredId)
    .where('status', '=', 'pending')
    .executeTakeFirst();
}

export async function recordReward(tx: Tx, tenantId: string, id: string, creditNoteId: string): Promise<ReferralRow> {
  return tx
    .updateTable('referrals')
    .set({ credit_note_id: creditNoteId, reward_credited: true })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export type ReferralFilter = { status?: ReferralStatus; referrer_id?: string };

export async function listReferralRows(
  tx: Tx,
  tenantId: string,
  filter: ReferralFilter,
  window: { limit: number; offset: number; startingAfter?: string; endingBefore?: string },
): Promise<ListResult<ReferralRow>> {
  let q = tx.selectFrom('referrals').where('tenant_id', '=', tenantId);
  if (filter.status) q = q.where('status', '=', filter.status);
  if (filter.referrer_id) q = q.where('referrer_id', '=', filter.referrer_id);
  return paginate<ReferralRow>(tx, q, { tenantId, table: 'referrals', page: { ...window, page: 1 } });
}

/** Pending referrals whose window has closed, across tenants (the expiry job). */
export async function dueForExpiry(db: Kysely<DB>, mode: Mode | null, now: Date, limit: number): Promise<{ tenant_id: string; id: string }[]> {
  return db
    .selectFrom('referrals')
    .select(['tenant_id', 'id'])
    .where(inMode(mode))
    .where('status', '=', 'pending')
    .where('expires_at', '<=', now)
    .orderBy('expires_at')
    .limit(limit)
    .execute();
}

/** The customers among these that have a pending referral (one statement for a batch of payments). */
export async function referredWithPendingReferral(tx: Tx, tenantId: string, referredIds: string[]): Promise<Set<string>> {
  if (referredIds.length === 0) return new Set();
  const rows = await tx
    .selectFrom('referrals')
    .select('referred_id')
    .where('tenant_id', '=', tenantId)
    .where('referred_id', 'in', referredIds)
    .where('status', '=', 'pending')
    .execute();
  return new Set(rows.map((r) => r.referred_id));
}
