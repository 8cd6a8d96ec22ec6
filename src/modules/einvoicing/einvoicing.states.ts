import { errors } from '../../platform/errors.js';
import type { Tx } from '../../platform/db/schema.js';
import type { Updateable } from 'kysely';
import type { EinvoiceStatus, EinvoicesTable } from './einvoicing.tables.js';
import type { EinvoiceRow } from './einvoicing.repository.js';

/**
 * pending ─generate→ generated ─cancel→ canceled
 *    └─────fail────→ failed ─retry→ pending
 * A pending record is retried by the job while the IRP is unreachable (status unchanged); a
 * failed one is resubmitted on request (POST …/einvoice/retry) once its data is fixed.
 */
export type EinvoiceEvent = 'generate' | 'fail' | 'cancel' | 'retry';

const transitions: Record<EinvoiceEvent, { from: EinvoiceStatus[]; to: EinvoiceStatus }> = {
  generate: { from: ['pending'], to: 'generated' },
  fail: { from: ['pending'], to: 'failed' },
  cancel: { from: ['generated'], to: 'canceled' },
  retry: { from: ['failed'], to: 'pending' },
};

export async function transitionEinvoice(tx: Tx, tenantId: string, id: string, event: EinvoiceEvent, patch: Updateable<EinvoicesTable>): Promise<EinvoiceRow> {
  const { from, to } = transitions[event];
  const row = await tx
    .updateTable('einvoices')
    .set({ ...patch, status: to })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .where('status', 'in', from)
    .returningAll()
    .executeTakeFirst();
  if (row) return row;
  const current = await tx.selectFrom('einvoices').select('status').where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
  if (!current) throw errors.notFound('einvoice');
  throw errors.conflict(`cannot ${event} an e-invoice whose status is ${current.status}`, 'invalid_einvoice_state');
}
