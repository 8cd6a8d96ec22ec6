import type { Insertable, Selectable } from 'kysely';
import type { Tx } from '../../platform/db/schema.js';
import type { Page } from '../../platform/http/envelope.js';
import { readTogether } from '../../platform/db/read-together.js';
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
  const [rows, [count]] = await readTogether(
    tx,
    q.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(page.limit).offset(page.offset),
    q.select((eb) => eb.fn.countAll<number>().as('n')),
  );
  return { rows, total: Number(count?.n ?? 0) };
}
