import { sql, type Insertable, type Selectable } from 'kysely';
import { paginate } from '../../platform/db/paginate.js';
import type { Tx, WriteTx } from '../../platform/db/schema.js';
import type { Page } from '../../platform/http/envelope.js';
import type { PaymentsTable } from './payments.tables.js';
import './payments.tables.js';
import { inMode, type Mode } from '../../platform/auth/tenant-mode.js';

export type PaymentRow = Selectable<PaymentsTable>;

export async function findPayment(tx: Tx, tenantId: string, id: string): Promise<PaymentRow | undefined> {
  return tx.selectFrom('payments').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
}

export async function listPaymentRows(
  tx: Tx,
  tenantId: string,
  filter: { customer_id?: string; invoice_id?: string; channel?: string },
  page: Page,
): Promise<{ rows: PaymentRow[]; total: number }> {
  let q = tx.selectFrom('payments').where('tenant_id', '=', tenantId);
  if (filter.channel) q = q.where('channel', '=', filter.channel);
  if (filter.customer_id) q = q.where('customer_id', '=', filter.customer_id);
  if (filter.invoice_id) q = q.where('invoice_id', '=', filter.invoice_id);
  return paginate<PaymentRow>(tx, q, { tenantId, table: 'payments', page });
}

export async function findPaymentForUpdate(tx: WriteTx, tenantId: string, id: string): Promise<PaymentRow | undefined> {
  return tx.selectFrom('payments').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).forUpdate().executeTakeFirst();
}

/** Moves `amount_refunded` by `delta` (negative when a refund failed); never outside 0..amount. */
export async function addRefunded(tx: Tx, tenantId: string, id: string, delta: number, now: Date): Promise<PaymentRow | undefined> {
  return tx
    .updateTable('payments')
    .set({ amount_refunded: sql`amount_refunded + ${delta}`, updated_at: now })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .where(sql<boolean>`amount_refunded + ${delta} BETWEEN 0 AND amount`)
    .returningAll()
    .executeTakeFirst();
}

/** Sets the TDS certificate of a payment that withheld TDS and has none yet; undefined otherwise (decision 0770). */
export async function setTdsCertificate(
  tx: WriteTx,
  tenantId: string,
  id: string,
  c: { certificate_number: string | null; section: string | null; payment_code: string | null; certificate_form: 'Form 16A' | 'Form 131'; deducted_on: string },
  now: Date,
): Promise<PaymentRow | undefined> {
  return tx
    .updateTable('payments')
    .set({
      tds_certificate_number: c.certificate_number,
      tds_section: c.section,
      tds_payment_code: c.payment_code,
      tds_certificate_form: c.certificate_form,
      tds_deducted_on: c.deducted_on,
      tds_certified_at: now,
      updated_at: now,
    })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .where('tds_amount', '>', 0)
    .where('tds_certified_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
}

/** Gateway payments captured before `before` and not yet settled, across tenants (the settlement sweep). */
export async function unsettledGatewayPayments(tx: Tx, mode: Mode | null, before: Date, limit: number): Promise<PaymentRow[]> {
  return tx
    .selectFrom('payments')
    .selectAll()
    .where('gateway', 'is not', null)
    .where('settled_at', 'is', null)
    .where('created_at', '<=', before)
    .where(inMode(mode))
    .orderBy('created_at')
    .limit(limit)
    .execute();
}

/** Marks one payment settled; false when another sweep got there first. */
export async function markPaymentSettled(tx: Tx, tenantId: string, id: string, at: Date): Promise<boolean> {
  const r = await tx
    .updateTable('payments')
    .set({ settled_at: at, updated_at: at })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .where('settled_at', 'is', null)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

export async function insertPayments(tx: Tx, rows: Insertable<PaymentsTable>[]): Promise<void> {
  if (rows.length === 0) return;
  await tx.insertInto('payments').values(rows).execute();
}
