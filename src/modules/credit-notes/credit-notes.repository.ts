import { sql, type Insertable, type RawBuilder, type Selectable } from 'kysely';
import { testClockScope } from '../../platform/test-clock-scope.js';
import { paginate } from '../../platform/db/paginate.js';
import type { Tx, WriteTx } from '../../platform/db/schema.js';
import type { Page } from '../../platform/http/envelope.js';
import type { CreditNoteApplicationsTable, CreditNoteLinesTable, CreditNotesTable, CreditNoteStatus } from './credit-notes.tables.js';
import './credit-notes.tables.js';
import { inMode, type Mode } from '../../platform/auth/tenant-mode.js';

export type CreditNoteRow = Selectable<CreditNotesTable>;
export type CreditNoteLineRow = Selectable<CreditNoteLinesTable>;

export async function insertCreditNote(tx: Tx, row: Insertable<CreditNotesTable>): Promise<void> {
  await tx.insertInto('credit_notes').values(row).execute();
}

export async function insertApplication(tx: Tx, row: Insertable<CreditNoteApplicationsTable>): Promise<void> {
  await tx.insertInto('credit_note_applications').values(row).execute();
}

export async function insertCreditNoteLines(tx: Tx, rows: CreditNoteLineRow[]): Promise<void> {
  if (rows.length > 0) await tx.insertInto('credit_note_lines').values(rows).execute();
}

export async function linesOfCreditNotes(tx: Tx, tenantId: string, noteIds: string[]): Promise<CreditNoteLineRow[]> {
  if (noteIds.length === 0) return [];
  return tx
    .selectFrom('credit_note_lines')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('credit_note_id', 'in', noteIds)
    .orderBy('credit_note_id')
    .orderBy('position')
    .execute();
}

export type CreditedComponents = { amount: number; subtotal: number; cgst_amount: number; sgst_amount: number; igst_amount: number };

/** What the invoice's live notes (all but void and rejected) have credited so far, per invoice line. */
export async function creditedPerInvoiceLine(tx: Tx, tenantId: string, invoiceId: string): Promise<Map<string, CreditedComponents>> {
  const rows = await tx
    .selectFrom('credit_note_lines as l')
    .innerJoin('credit_notes as n', (join) => join.onRef('n.tenant_id', '=', 'l.tenant_id').onRef('n.id', '=', 'l.credit_note_id'))
    .select((eb) => [
      'l.invoice_line_id',
      eb.fn.sum<number>('l.amount').as('amount'),
      eb.fn.sum<number>('l.subtotal').as('subtotal'),
      eb.fn.sum<number>('l.cgst_amount').as('cgst_amount'),
      eb.fn.sum<number>('l.sgst_amount').as('sgst_amount'),
      eb.fn.sum<number>('l.igst_amount').as('igst_amount'),
    ])
    .where('l.tenant_id', '=', tenantId)
    .where('l.invoice_id', '=', invoiceId)
    .where('n.status', 'not in', ['void', 'rejected'])
    .groupBy('l.invoice_line_id')
    .execute();
  return new Map(
    rows.map((r) => [
      r.invoice_line_id,
      {
        amount: Number(r.amount),
        subtotal: Number(r.subtotal),
        cgst_amount: Number(r.cgst_amount),
        sgst_amount: Number(r.sgst_amount),
        igst_amount: Number(r.igst_amount),
      },
    ]),
  );
}

/** What live notes (all but void and rejected) have credited of each line before GST: `subtotal` per invoice line (decision 0540). */
export async function creditedSubtotalsOfLines(tx: Tx, tenantId: string, lines: { id: string; invoice_id: string }[]): Promise<Map<string, number>> {
  if (lines.length === 0) return new Map();
  const rows = await tx
    .selectFrom('credit_note_lines as l')
    .innerJoin('credit_notes as n', (join) => join.onRef('n.tenant_id', '=', 'l.tenant_id').onRef('n.id', '=', 'l.credit_note_id'))
    .select((eb) => ['l.invoice_line_id', eb.fn.sum<number>('l.subtotal').as('subtotal')])
    .where('l.tenant_id', '=', tenantId)
    .where('l.invoice_id', 'in', [...new Set(lines.map((l) => l.invoice_id))])
    .where(
      'l.invoice_line_id',
      'in',
      lines.map((l) => l.id),
    )
    .where('n.status', 'not in', ['void', 'rejected'])
    .groupBy('l.invoice_line_id')
    .execute();
  return new Map(rows.map((r) => [r.invoice_line_id, Number(r.subtotal)]));
}

/** The invoice's notes that still stand (pending, issued, used or expired), oldest first. */
export async function liveNotesOfInvoice(tx: WriteTx, tenantId: string, invoiceId: string): Promise<CreditNoteRow[]> {
  return tx
    .selectFrom('credit_notes')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('invoice_id', '=', invoiceId)
    .where('status', 'not in', ['void', 'rejected'])
    .orderBy('created_at')
    .orderBy('id')
    .forUpdate()
    .execute();
}

export async function findCreditNote(tx: Tx, tenantId: string, id: string): Promise<CreditNoteRow | undefined> {
  return tx.selectFrom('credit_notes').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
}

/**
 * What the invoice's credit notes (all but void and rejected ones) have credited so far, as gross
 * amount and per component: the next note is split against what remains.
 */
export async function creditedAgainstInvoice(
  tx: Tx,
  tenantId: string,
  invoiceId: string,
): Promise<{ amount: number; subtotal: number; cgst_amount: number; sgst_amount: number; igst_amount: number; commercial: number }> {
  const row = await tx
    .selectFrom('credit_notes')
    .select((eb) => [
      eb.fn.coalesce(eb.fn.sum<number>('amount'), eb.lit(0)).as('amount'),
      // Commercial credits (no tax reversal) take from the invoice's total but from no line.
      sql<number>`coalesce(sum(amount) FILTER (WHERE NOT tax_reversal), 0)`.as('commercial'),
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
    commercial: Number(row.commercial),
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

/**
 * Whether a note in the test clock scope can ever expire (one with an expiry, issued or awaiting
 * approval): a test clock's advance skips the expiry sweep while none can.
 */
export function expirableCreditNotesInClockScope(): RawBuilder<boolean> {
  return sql<boolean>`EXISTS (SELECT 1 FROM credit_notes WHERE status IN ('issued', 'pending_approval') AND expires_at IS NOT NULL
    AND ${testClockScope('credit_notes.tenant_id', 'credit_notes.customer_id')})`;
}

/** Issued notes past their expiry, across tenants (the expiry job's work list). */
export async function dueForExpiry(tx: Tx, mode: Mode | null, now: Date, limit: number): Promise<{ tenant_id: string; id: string }[]> {
  return tx
    .selectFrom('credit_notes')
    .select(['tenant_id', 'id'])
    .where(inMode(mode))
    .where('status', '=', 'issued')
    .where('expires_at', '<=', now)
    .where(testClockScope('credit_notes.tenant_id', 'credit_notes.customer_id'))
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

/** A refund note's refund_status; a failed refund makes its whole amount spendable again. */
export async function updateRefundStatus(
  tx: Tx,
  tenantId: string,
  id: string,
  refundStatus: 'processed' | 'refund_failed',
  now: Date,
): Promise<CreditNoteRow | undefined> {
  return tx
    .updateTable('credit_notes')
    .set((eb) => ({
      refund_status: refundStatus,
      updated_at: now,
      ...(refundStatus === 'refund_failed' ? { status: 'issued' as const, balance: eb.ref('amount') } : {}),
    }))
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .where('type', '=', 'refund')
    .returningAll()
    .executeTakeFirst();
}
