import type { Ctx } from '../../platform/context.js';
import { errors } from '../../platform/errors.js';
import { voidCreditNotesOfInvoice } from '../../modules/credit-notes/index.js';
import { cancelEinvoice, irnOfInvoiceForVoid } from '../../modules/einvoicing/index.js';
import { findEntity } from '../../modules/entities/index.js';
import { getInvoiceRow, voidInvoice, type InvoiceRow } from '../../modules/invoices/index.js';
import { isPeriodOpenAt, postingDate } from '../../modules/periods/index.js';

/** How the IRN is canceled with the void (NIC's CnlRsn and CnlRem). */
export type IrnCancellation = { reasonCode: number; remarks: string };

/** A void that names no reason cancels the IRN as "4 others". */
const VOID_CANCELLATION: IrnCancellation = { reasonCode: 4, remarks: 'Invoice voided' };

const voidNotAllowed = (why: string) => errors.conflict(`${why}; issue a credit note instead`, 'void_not_allowed');

/**
 * Voids an invoice together with the credit notes tied to it (docs/decisions/0020): the void
 * reverses the whole invoice, so a note that reversed part of it must not stand beside it. Every
 * path that voids an invoice (the API, the IRN cancellation, gift cancellation) comes through here.
 *
 * An issued invoice is voided only while its tax period is open (nothing closed or filed changes)
 * and, when it has an IRN, only while the IRP still cancels it (24 hours): the IRN is canceled in
 * the same transaction, so an invoice and its IRN are never one void and one live (DESIGN §18,
 * docs/decisions/0260). Otherwise 409 `void_not_allowed`: a credit note corrects it.
 *
 * The invoice row is locked first, so a note being created or approved for it waits and then
 * sees it void. An invoice with payments or credit applied is refused (voidInvoice); so is one
 * whose notes have moved money (spent elsewhere, or expired) — see voidCreditNotesOfInvoice.
 *
 * `irn.required` (the IRN cancel route): the IRN must be generated and cancelable, with the
 * e-invoice's own refusals (`einvoice_not_generated`, `einvoice_cancel_window_closed`).
 */
export async function voidInvoiceWithCreditNotes(ctx: Ctx, id: string, irn: Partial<IrnCancellation> & { required?: boolean } = {}): Promise<InvoiceRow> {
  const invoice = await getInvoiceRow(ctx, id, true);
  let voidedAt = ctx.now;
  if (invoice.status !== 'draft') {
    const entity = await findEntity(ctx.tx, ctx.tenantId, invoice.entity_id);
    if (!entity) throw errors.notFound('entity');
    const { open, period } = await isPeriodOpenAt(ctx, entity, invoice.issued_at ?? invoice.created_at);
    if (!open) throw voidNotAllowed(`invoice ${invoice.number} is of ${period}, a closed tax period`);
    await cancelIrnWithVoid(ctx, invoice, irn);
    voidedAt = await postingDate(ctx, entity.id);
  } else if (irn.required) {
    await cancelEinvoice(ctx, 'invoice', id, irn.reasonCode ?? VOID_CANCELLATION.reasonCode, irn.remarks ?? ''); // its 409
  }
  if (invoice.status !== 'draft' && invoice.amount_paid === 0 && invoice.amount_credited === 0) await voidCreditNotesOfInvoice(ctx, id);
  return voidInvoice(ctx, id, voidedAt);
}

async function cancelIrnWithVoid(ctx: Ctx, invoice: InvoiceRow, irn: Partial<IrnCancellation> & { required?: boolean }): Promise<void> {
  const registration = await irnOfInvoiceForVoid(ctx, invoice.id);
  const reasonCode = irn.reasonCode ?? VOID_CANCELLATION.reasonCode;
  const remarks = irn.remarks ?? VOID_CANCELLATION.remarks;
  if (irn.required || registration?.status === 'generated') {
    if (!irn.required && !registration?.cancelable) {
      throw voidNotAllowed(`invoice ${invoice.number} has an IRN generated more than 24 hours ago, which the IRP no longer cancels`);
    }
    await cancelEinvoice(ctx, 'invoice', invoice.id, reasonCode, remarks);
    return;
  }
  if (registration?.status === 'pending') {
    // The IRP may be registering it right now: a void now could leave a live IRN behind.
    throw errors.conflict(
      `invoice ${invoice.number} is being registered with the IRP; void it once its IRN is generated (within 24 hours)`,
      'void_not_allowed',
    );
  }
}
