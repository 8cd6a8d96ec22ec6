import type { Insertable, Selectable } from 'kysely';
import { paginate } from '../../platform/db/paginate.js';
import type { Tx } from '../../platform/db/schema.js';
import type { Page } from '../../platform/http/envelope.js';
import type { PaymentsTable } from './payments.tables.js';
import './payments.tables.js';

export type PaymentRow = Selectable<PaymentsTable>;

export async function insertPayment(tx: Tx, row: Insertable<PaymentsTable>): Promise<void> {
  await tx.insertInto('payments').values(row).execute();
}

export async function findPayment(tx: Tx, tenantId: string, id: string): Promise<PaymentRow | undefined> {
  return tx.selectFrom('payments').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
}

export async function listPaymentRows(
  tx: Tx,
  tenantId: string,
  filter: { customer_id?: string; invoice_id?: string },
  page: Page,
): Promise<{ rows: PaymentRow[]; total: number }> {
  let q = tx.selectFrom('payments').where('tenant_id', '=', tenantId);
  if (filter.customer_id) q = q.where('customer_id', '=', filter.customer_id);
  if (filter.invoice_id) q = q.where('invoice_id', '=', filter.invoice_id);
  return paginate<PaymentRow>(tx, q, { tenantId, table: 'payments', page });
}
