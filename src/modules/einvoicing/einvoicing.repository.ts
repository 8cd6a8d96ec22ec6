import type { Insertable, Selectable, Updateable } from 'kysely';
import { deferWrite } from '../../platform/db/pipeline.js';
import type { LockFlag, Tx, WriteTx } from '../../platform/db/schema.js';
import { inMode, type Mode } from '../../platform/auth/tenant-mode.js';
import type { EinvoiceDocumentType, EinvoicesTable } from './einvoicing.tables.js';
import './einvoicing.tables.js';

export type EinvoiceRow = Selectable<EinvoicesTable>;

/** A second finalization event for the same document (a retried action) inserts nothing. */
export async function insertPendingEinvoice(tx: WriteTx, row: Insertable<EinvoicesTable>): Promise<void> {
  await deferWrite(
    tx,
    tx
      .insertInto('einvoices')
      .values(row)
      .onConflict((oc) => oc.columns(['tenant_id', 'document_type', 'document_id']).doNothing()),
  );
}

export async function findEinvoice<T extends Tx>(tx: T, tenantId: string, id: string, forUpdate?: LockFlag<T>): Promise<EinvoiceRow | undefined> {
  let q = tx.selectFrom('einvoices').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id);
  if (forUpdate) q = q.forUpdate();
  return q.executeTakeFirst();
}

export async function findEinvoiceOfDocument<T extends Tx>(
  tx: T,
  tenantId: string,
  type: EinvoiceDocumentType,
  documentId: string,
  forUpdate?: LockFlag<T>,
): Promise<EinvoiceRow | undefined> {
  let q = tx.selectFrom('einvoices').selectAll().where('tenant_id', '=', tenantId).where('document_type', '=', type).where('document_id', '=', documentId);
  if (forUpdate) q = q.forUpdate();
  return q.executeTakeFirst();
}

export async function einvoicesOfDocuments(tx: Tx, tenantId: string, type: EinvoiceDocumentType, documentIds: string[]): Promise<EinvoiceRow[]> {
  if (documentIds.length === 0) return [];
  return tx
    .selectFrom('einvoices')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('document_type', '=', type)
    .where('document_id', 'in', documentIds)
    .execute();
}

export async function updateEinvoiceRow(tx: Tx, tenantId: string, id: string, patch: Updateable<EinvoicesTable>): Promise<EinvoiceRow> {
  return tx.updateTable('einvoices').set(patch).where('tenant_id', '=', tenantId).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

export async function entitiesWithEinvoicing(tx: Tx, tenantId: string, entityIds: string[]): Promise<Set<string>> {
  if (entityIds.length === 0) return new Set();
  const rows = await tx
    .selectFrom('legal_entities')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where('id', 'in', entityIds)
    .where('einvoicing_enabled', '=', true)
    .execute();
  return new Set(rows.map((r) => r.id));
}

/**
 * Records still unreported (pending or failed) whose IRP limit is near: the next alert of
 * `days` is due once `now` is within days + 1 of the deadline (the last day minus `days`).
 */
export async function einvoicesDueForReportAlert(tx: Tx, mode: Mode | null, now: Date, days: number, limit: number): Promise<EinvoiceRow[]> {
  return tx
    .selectFrom('einvoices')
    .selectAll()
    .where(inMode(mode))
    .where('status', 'in', ['pending', 'failed'])
    .where('report_deadline', 'is not', null)
    .where('report_deadline', '>', now)
    .where('report_deadline', '<=', new Date(now.getTime() + (days + 1) * 86_400_000))
    .where((eb) => eb.or([eb('report_alerted_days', 'is', null), eb('report_alerted_days', '>', days)]))
    .orderBy('report_deadline')
    .limit(limit)
    .execute();
}

/** One tenant's unreported (pending or failed) documents whose IRP limit ends before `until`, soonest first. */
export async function einvoicesNearReportLimit(tx: Tx, tenantId: string, now: Date, until: Date, limit: number): Promise<EinvoiceRow[]> {
  return tx
    .selectFrom('einvoices')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('status', 'in', ['pending', 'failed'])
    .where('report_deadline', 'is not', null)
    .where('report_deadline', '>', now)
    .where('report_deadline', '<=', until)
    .orderBy('report_deadline')
    .orderBy('id')
    .limit(limit)
    .execute();
}
