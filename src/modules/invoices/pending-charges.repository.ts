import type { Insertable, Selectable } from 'kysely';
import type { Tx, WriteTx } from '../../platform/db/schema.js';
import type { PendingChargesTable } from './invoices.tables.js';
import './invoices.tables.js';

export type PendingChargeRow = Selectable<PendingChargesTable>;

export async function insertPendingCharge(tx: Tx, row: Insertable<PendingChargesTable>): Promise<PendingChargeRow> {
  return tx.insertInto('pending_charges').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function findPendingCharge(tx: WriteTx, tenantId: string, customerId: string, id: string): Promise<PendingChargeRow | undefined> {
  return tx
    .selectFrom('pending_charges')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('customer_id', '=', customerId)
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirst();
}

export async function listPendingChargeRows(tx: Tx, tenantId: string, customerId: string, status?: 'pending' | 'invoiced'): Promise<PendingChargeRow[]> {
  let q = tx.selectFrom('pending_charges').selectAll().where('tenant_id', '=', tenantId).where('customer_id', '=', customerId);
  if (status) q = q.where('status', '=', status);
  return q.orderBy('created_at').orderBy('id').limit(1000).execute();
}

/** Deletes a charge only while it is pending: zero rows when an invoice took it meanwhile. */
export async function deletePendingChargeRow(tx: Tx, tenantId: string, id: string): Promise<PendingChargeRow | undefined> {
  return tx
    .deleteFrom('pending_charges')
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .returningAll()
    .executeTakeFirst();
}

/** The pending charges of these customers, locked until the transaction ends (a concurrent delete waits, then finds them invoiced). */
export async function lockPendingCharges(tx: WriteTx, tenantId: string, customerIds: string[]): Promise<PendingChargeRow[]> {
  if (customerIds.length === 0) return [];
  return tx
    .selectFrom('pending_charges')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('customer_id', 'in', customerIds)
    .where('status', '=', 'pending')
    .orderBy('created_at')
    .orderBy('id')
    .forUpdate()
    .execute();
}

export async function markChargesInvoiced(tx: Tx, tenantId: string, ids: string[], invoiceId: string, now: Date): Promise<number> {
  if (ids.length === 0) return 0;
  const result = await tx
    .updateTable('pending_charges')
    .set({ status: 'invoiced', invoice_id: invoiceId, invoiced_at: now })
    .where('tenant_id', '=', tenantId)
    .where('id', 'in', ids)
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}
