import type { Insertable, Selectable } from 'kysely';
import { paginate } from '../../platform/db/paginate.js';
import type { Tx } from '../../platform/db/schema.js';
import type { Page } from '../../platform/http/envelope.js';
import type { CreditNoteApplicationsTable, CreditNotesTable, CreditNoteStatus } from './credit-notes.tables.js';
import './credit-notes.tables.js';

export type CreditNoteRow = Selectable<CreditNotesTable>;

export async function insertCreditNote(tx: Tx, row: Insertable<CreditNotesTable>): Promise<void> {
  await tx.insertInto('credit_notes').values(row).execute();
}

export async function insertApplication(tx: Tx, row: Insertable<CreditNoteApplicationsTable>): Promise<void> {
  await tx.insertInto('credit_note_applications').values(row).execute();
}

export async function findCreditNote(tx: Tx, tenantId: string, id: string): Promise<CreditNoteRow | undefined> {
  return tx.selectFrom('credit_notes').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
}

/** Gross already credited against an invoice by notes that still stand (not void or rejected). */
/**
 * What the invoice's credit notes (all but void and rejected ones) have credited so far, as gross
 * amount and per component: the next note is split against what remains.
 */
export async function creditedAgainstInvoice(
  tx: Tx,
  tenantId: string,
  invoiceId: string,
): Promise<{ amount: number; subtotal: number; cgst_amount: number; sgst_amount: number; igst_amount: number }> {
  const row = await tx
    .selectFrom('credit_notes')
    .select((eb) => [
      eb.fn.coalesce(eb.fn.sum<number>('amount'), eb.lit(0)).as('amount'),
      eb.fn.coalesce(eb.fn.sum<number>('subtotal'), eb.lit(0)).as('subtotal'),
      eb.fn.coalesce(eb.fn.sum<number>('cgst_amount'), eb.lit(0)).as('cgst_amount'),
      eb.fn.coalesce(eb.fn.sum<number>('sgst_amount'), eb.lit(0)).as('sgst_amount'),
      eb.fn.coalesce(eb.fn.sum<number>('igst_amount'), eb.lit(0)).as('igst_amount'),
    ])
    .where('tenant_id', '=', tenantId)
    .where('invoice_id', '=', invoiceId)
    .where('status', 'not in', ['void', 'rejected'])
    .executeTakeFirstOrThrow();
  return {
    amount: Number(row.amount),
    subtotal: Number(row.subtotal),
    cgst_amount: Number(row.cgst_amount),
    sgst_amount: Number(row.sgst_amount),
    igst_amount: Number(row.igst_amount),
  };
}

/** Credit the customer can spend now, soonest-expiring first, then oldest. */
export async function spendableCreditNotes(
  tx: Tx,
  tenantId: string,
  filter: { customerId: string; currency: string; entityId: string; now: Date },
): Promise<CreditNoteRow[]> {
  return tx
    .selectFrom('credit_notes')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('customer_id', '=', filter.customerId)
    .where('currency', '=', filter.currency)
    .where('entity_id', '=', filter.entityId)
    .where('status', '=', 'issued')
    .where('balance', '>', 0)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', filter.now)]))
    .orderBy((eb) => eb.fn.coalesce('expires_at', eb.val(new Date('9999-12-31T00:00:00Z'))))
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

/** Issued notes past their expiry, across tenants (the expiry job's work list). */
export async function dueForExpiry(tx: Tx, now: Date, limit: number): Promise<{ tenant_id: string; id: string }[]> {
  return tx
    .selectFrom('credit_notes')
    .select(['tenant_id', 'id'])
    .where('status', '=', 'issued')
    .where('expires_at', '<=', now)
    .orderBy('expires_at')
    .limit(limit)
    .execute();
}

export async function listCreditNoteRows(
  tx: Tx,
  tenantId: string,
  filter: { customer_id?: string; invoice_id?: string; status?: CreditNoteStatus },
  page: Page,
): Promise<{ rows: CreditNoteRow[]; total: number }> {
  let q = tx.selectFrom('credit_notes').where('tenant_id', '=', tenantId);
  if (filter.customer_id) q = q.where('customer_id', '=', filter.customer_id);
  if (filter.invoice_id) q = q.where('invoice_id', '=', filter.invoice_id);
  if (filter.status) q = q.where('status', '=', filter.status);
  return paginate<CreditNoteRow>(tx, q, { tenantId, table: 'credit_notes', page });
}

/** Which of these customers hold credit they can spend now (so a batch checks once, not per invoice). */
export async function customersWithSpendableCredit(tx: Tx, tenantId: string, customerIds: string[], now: Date): Promise<Set<string>> {
  if (customerIds.length === 0) return new Set();
  const rows = await tx
    .selectFrom('credit_notes')
    .select('customer_id')
    .distinct()
    .where('tenant_id', '=', tenantId)
    .where('customer_id', 'in', [...new Set(customerIds)])
    .where('status', '=', 'issued')
    .where('balance', '>', 0)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .execute();
  return new Set(rows.map((r) => r.customer_id));
}
