import { sql, type Insertable, type Selectable } from 'kysely';
import { paginate } from '../../platform/db/paginate.js';
import type { LockFlag, Tx, WriteTx } from '../../platform/db/schema.js';
import type { Page } from '../../platform/http/envelope.js';
import type { AdvanceMovementsTable, CustomerAdvancesTable } from './advances.tables.js';
import './advances.tables.js';
import type { AdvanceInrPart } from './advance-tax.js';

export type AdvanceRow = Selectable<CustomerAdvancesTable>;
export type MovementRow = Selectable<AdvanceMovementsTable>;

export async function insertAdvance(tx: Tx, row: Insertable<CustomerAdvancesTable>): Promise<void> {
  await tx.insertInto('customer_advances').values(row).execute();
}

export async function insertMovement(tx: Tx, row: Insertable<AdvanceMovementsTable>): Promise<void> {
  await tx.insertInto('advance_movements').values(row).execute();
}

export async function findAdvance<T extends Tx>(tx: T, tenantId: string, id: string, forUpdate?: LockFlag<T>): Promise<AdvanceRow | undefined> {
  const q = tx.selectFrom('customer_advances').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id);
  return (forUpdate ? q.forUpdate() : q).executeTakeFirst();
}

/** The advances an invoice may take (same customer, entity and currency, something left), oldest first, locked. */
export async function openAdvancesForUpdate(
  tx: WriteTx,
  tenantId: string,
  filter: { customerId: string; entityId: string; currency: string },
): Promise<AdvanceRow[]> {
  return (
    tx
      .selectFrom('customer_advances')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('customer_id', '=', filter.customerId)
      .where('entity_id', '=', filter.entityId)
      .where('currency', '=', filter.currency)
      .where('balance', '>', 0)
      // A top-up's voucher is spent by its credit grant's draw-downs only (decision 0700).
      .where('credit_grant_id', 'is', null)
      .orderBy('received_at')
      .orderBy('id')
      .forUpdate()
      .execute()
  );
}

/** Of these customers, the ones holding an advance with something left. */
export async function customersWithOpenAdvances(tx: Tx, tenantId: string, customerIds: string[]): Promise<Set<string>> {
  if (customerIds.length === 0) return new Set();
  const rows = await tx
    .selectFrom('customer_advances')
    .select('customer_id')
    .distinct()
    .where('tenant_id', '=', tenantId)
    .where('customer_id', 'in', [...new Set(customerIds)])
    .where('balance', '>', 0)
    .where('credit_grant_id', 'is', null)
    .execute();
  return new Set(rows.map((r) => r.customer_id));
}

/** Takes `amount` (and its share of value and tax) off an advance's balance; undefined when it no longer has that much. */
export async function takeFromAdvance(
  tx: Tx,
  tenantId: string,
  id: string,
  part: { amount: number; subtotal: number; cgst_amount: number; sgst_amount: number; igst_amount: number; inr?: AdvanceInrPart | null },
  now: Date,
): Promise<AdvanceRow | undefined> {
  return tx
    .updateTable('customer_advances')
    .set({
      balance: sql`balance - ${part.amount}`,
      open_subtotal: sql`open_subtotal - ${part.subtotal}`,
      open_cgst: sql`open_cgst - ${part.cgst_amount}`,
      open_sgst: sql`open_sgst - ${part.sgst_amount}`,
      open_igst: sql`open_igst - ${part.igst_amount}`,
      // NULL stays NULL: an advance without rupee values.
      open_inr_subtotal: sql`open_inr_subtotal - ${part.inr?.inr_subtotal ?? 0}`,
      open_inr_cgst: sql`open_inr_cgst - ${part.inr?.inr_cgst_amount ?? 0}`,
      open_inr_sgst: sql`open_inr_sgst - ${part.inr?.inr_sgst_amount ?? 0}`,
      open_inr_igst: sql`open_inr_igst - ${part.inr?.inr_igst_amount ?? 0}`,
      updated_at: now,
    })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .where('balance', '>=', part.amount)
    .returningAll()
    .executeTakeFirst();
}

export async function movementOfRefund(tx: Tx, tenantId: string, refundId: string): Promise<{ id: string; advance_id: string } | undefined> {
  return tx
    .selectFrom('advance_movements')
    .select(['id', 'advance_id'])
    .where('tenant_id', '=', tenantId)
    .where('refund_id', '=', refundId)
    .where('kind', '=', 'refunded')
    .executeTakeFirst();
}

export async function movementsOf(tx: Tx, tenantId: string, advanceIds: string[]): Promise<MovementRow[]> {
  if (advanceIds.length === 0) return [];
  return tx
    .selectFrom('advance_movements')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('advance_id', 'in', advanceIds)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

export async function listAdvanceRows(tx: Tx, tenantId: string, filter: { customer_id?: string }, page: Page) {
  let q = tx.selectFrom('customer_advances').where('tenant_id', '=', tenantId);
  if (filter.customer_id) q = q.where('customer_id', '=', filter.customer_id);
  return paginate<AdvanceRow>(tx, q, { tenantId, table: 'customer_advances', page });
}

/**
 * The receipt vouchers of a paid credit grant's top-up (decision 0700; one per payment received
 * against it, decision 0840), oldest first, locked when asked.
 */
export async function findAdvancesOfGrant<T extends Tx>(tx: T, tenantId: string, grantId: string, forUpdate?: LockFlag<T>): Promise<AdvanceRow[]> {
  const q = tx
    .selectFrom('customer_advances')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('credit_grant_id', '=', grantId)
    .orderBy('received_at')
    .orderBy('created_at')
    .orderBy('number');
  return (forUpdate ? q.forUpdate() : q).execute();
}
