import { sql, type Insertable, type Selectable } from 'kysely';
import type { Tx } from '../../platform/db/schema.js';
import type { Page } from '../../platform/http/envelope.js';
import { paginate } from '../../platform/db/paginate.js';
import type { CancellationReason } from '../subscriptions/index.js';
import type { RetentionOfferAcceptancesTable, RetentionOffersTable } from './coupons.tables.js';
import './coupons.tables.js';

export type RetentionOfferRow = Selectable<RetentionOffersTable>;
export type RetentionOfferAcceptanceRow = Selectable<RetentionOfferAcceptancesTable>;

export async function insertRetentionOffer(tx: Tx, row: Insertable<RetentionOffersTable>): Promise<RetentionOfferRow> {
  return tx.insertInto('retention_offers').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function findRetentionOffer(tx: Tx, tenantId: string, id: string): Promise<RetentionOfferRow | undefined> {
  return tx.selectFrom('retention_offers').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
}

export async function updateRetentionOfferRow(
  tx: Tx,
  tenantId: string,
  id: string,
  patch: Partial<Pick<Insertable<RetentionOffersTable>, 'reasons' | 'message' | 'active' | 'updated_at'>>,
): Promise<RetentionOfferRow | undefined> {
  return tx.updateTable('retention_offers').set(patch).where('tenant_id', '=', tenantId).where('id', '=', id).returningAll().executeTakeFirst();
}

export async function listRetentionOfferRows(
  tx: Tx,
  tenantId: string,
  filter: { active?: boolean },
  page: Page,
): Promise<{ rows: RetentionOfferRow[]; total: number }> {
  let query = tx.selectFrom('retention_offers').where('tenant_id', '=', tenantId);
  if (filter.active !== undefined) query = query.where('active', '=', filter.active);
  return paginate<RetentionOfferRow>(tx, query, { tenantId, table: 'retention_offers', page });
}

/** The tenant's active offers, after taking the tenant's offer lock: two writes that could give one reason two offers queue. */
export async function lockActiveRetentionOffers(tx: Tx, tenantId: string): Promise<RetentionOfferRow[]> {
  await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`retention_offers:${tenantId}`}, 0))`.execute(tx);
  return tx.selectFrom('retention_offers').selectAll().where('tenant_id', '=', tenantId).where('active', '=', true).execute();
}

/** The active offer answering `reason`, if any (at most one: the service keeps it so). */
export async function findActiveOfferForReason(tx: Tx, tenantId: string, reason: CancellationReason): Promise<RetentionOfferRow | undefined> {
  return tx
    .selectFrom('retention_offers')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('active', '=', true)
    .where(sql<boolean>`reasons @> ${JSON.stringify([reason])}::jsonb`)
    .orderBy('created_at', 'desc')
    .executeTakeFirst();
}

export async function countAcceptances(tx: Tx, tenantId: string, offerIds: string[]): Promise<Map<string, number>> {
  if (offerIds.length === 0) return new Map();
  const rows = await tx
    .selectFrom('retention_offer_acceptances')
    .select((eb) => ['offer_id', eb.fn.countAll<number>().as('n')])
    .where('tenant_id', '=', tenantId)
    .where('offer_id', 'in', offerIds)
    .groupBy('offer_id')
    .execute();
  return new Map(rows.map((r) => [r.offer_id, Number(r.n)]));
}

export async function findAcceptanceOfSubscription(tx: Tx, tenantId: string, subscriptionId: string): Promise<RetentionOfferAcceptanceRow | undefined> {
  return tx
    .selectFrom('retention_offer_acceptances')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('subscription_id', '=', subscriptionId)
    .executeTakeFirst();
}

export async function insertAcceptance(tx: Tx, row: Insertable<RetentionOfferAcceptancesTable>): Promise<RetentionOfferAcceptanceRow> {
  return tx.insertInto('retention_offer_acceptances').values(row).returningAll().executeTakeFirstOrThrow();
}
