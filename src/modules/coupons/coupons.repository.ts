import { sql, type Insertable, type Selectable, type Updateable } from 'kysely';
import { paginate } from '../../platform/db/paginate.js';
import type { Tx } from '../../platform/db/schema.js';
import type { Page } from '../../platform/http/envelope.js';
import type { CouponsTable, DiscountsTable, InvoiceDiscountsTable } from './coupons.tables.js';
import './coupons.tables.js';

export type CouponRow = Selectable<CouponsTable>;
export type DiscountRow = Selectable<DiscountsTable>;

export async function insertCoupon(tx: Tx, row: Insertable<CouponsTable>): Promise<CouponRow> {
  return tx.insertInto('coupons').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function findCoupon(tx: Tx, tenantId: string, id: string): Promise<CouponRow | undefined> {
  return tx.selectFrom('coupons').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
}

export async function findCouponByCode(tx: Tx, tenantId: string, code: string): Promise<CouponRow | undefined> {
  return tx.selectFrom('coupons').selectAll().where('tenant_id', '=', tenantId).where('code', '=', code).executeTakeFirst();
}

export async function findCouponsByIds(tx: Tx, tenantId: string, ids: string[]): Promise<CouponRow[]> {
  if (ids.length === 0) return [];
  return tx.selectFrom('coupons').selectAll().where('tenant_id', '=', tenantId).where('id', 'in', ids).execute();
}

export async function updateCouponRow(tx: Tx, tenantId: string, id: string, patch: Updateable<CouponsTable>): Promise<CouponRow | undefined> {
  return tx.updateTable('coupons').set(patch).where('tenant_id', '=', tenantId).where('id', '=', id).returningAll().executeTakeFirst();
}

/**
 * Counts one redemption, checking the limits in the same statement: concurrent redemptions queue on
 * the row lock and each re-checks `times_redeemed < max_redemptions` against the committed count
 * (READ COMMITTED re-evaluates the WHERE on the updated row), so the limit is never overshot.
 * Undefined: inactive, past redeem_by or at max_redemptions (the caller reads why).
 */
export async function claimRedemption(tx: Tx, tenantId: string, id: string, now: Date): Promise<CouponRow | undefined> {
  return tx
    .updateTable('coupons')
    .set({ times_redeemed: sql`times_redeemed + 1`, updated_at: now })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .where('active', '=', true)
    .where((eb) => eb.or([eb('redeem_by', 'is', null), eb('redeem_by', '>', now)]))
    .where((eb) => eb.or([eb('max_redemptions', 'is', null), eb('times_redeemed', '<', eb.ref('max_redemptions'))]))
    .returningAll()
    .executeTakeFirst();
}

export async function listCouponRows(tx: Tx, tenantId: string, filter: { active?: boolean }, page: Page): Promise<{ rows: CouponRow[]; total: number }> {
  let query = tx.selectFrom('coupons').where('tenant_id', '=', tenantId);
  if (filter.active !== undefined) query = query.where('active', '=', filter.active);
  return paginate<CouponRow>(tx, query, { tenantId, table: 'coupons', page });
}

export async function insertDiscount(tx: Tx, row: Insertable<DiscountsTable>): Promise<DiscountRow> {
  return tx.insertInto('discounts').values(row).returningAll().executeTakeFirstOrThrow();
}

/** The discounts in force on these subscriptions (at most one each), locked against a concurrent use. */
export async function openSubscriptionDiscounts(tx: Tx, tenantId: string, subscriptionIds: string[]): Promise<DiscountRow[]> {
  if (subscriptionIds.length === 0) return [];
  return tx
    .selectFrom('discounts')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('subscription_id', 'in', subscriptionIds)
    .where('ended_at', 'is', null)
    .forNoKeyUpdate()
    .execute();
}

export async function endDiscounts(tx: Tx, tenantId: string, ids: string[], now: Date): Promise<void> {
  if (ids.length === 0) return;
  await tx.updateTable('discounts').set({ ended_at: now }).where('tenant_id', '=', tenantId).where('id', 'in', ids).where('ended_at', 'is', null).execute();
}

export async function countDiscountUses(tx: Tx, tenantId: string, uses: { discountId: string; end: boolean }[], now: Date): Promise<void> {
  for (const use of uses) {
    await tx
      .updateTable('discounts')
      .set({ invoices_discounted: sql`invoices_discounted + 1`, ...(use.end ? { ended_at: now } : {}) })
      .where('tenant_id', '=', tenantId)
      .where('id', '=', use.discountId)
      .execute();
  }
}

export async function insertInvoiceDiscounts(tx: Tx, rows: Insertable<InvoiceDiscountsTable>[]): Promise<void> {
  if (rows.length) await tx.insertInto('invoice_discounts').values(rows).execute();
}

export async function findDiscount(tx: Tx, tenantId: string, id: string): Promise<DiscountRow | undefined> {
  return tx.selectFrom('discounts').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
}

export async function setDiscountInvoice(tx: Tx, tenantId: string, ids: string[], invoiceId: string): Promise<void> {
  if (ids.length === 0) return;
  await tx.updateTable('discounts').set({ invoice_id: invoiceId }).where('tenant_id', '=', tenantId).where('id', 'in', ids).execute();
}

export async function endSubscriptionDiscount(tx: Tx, tenantId: string, subscriptionId: string, now: Date): Promise<DiscountRow | undefined> {
  return tx
    .updateTable('discounts')
    .set({ ended_at: now })
    .where('tenant_id', '=', tenantId)
    .where('subscription_id', '=', subscriptionId)
    .where('ended_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
}
