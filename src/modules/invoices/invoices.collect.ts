import type { Ctx, ReadCtx } from '../../platform/context.js';
import type { LockFlag } from '../../platform/db/schema.js';
import { errors } from '../../platform/errors.js';
import { findInvoices, linesOfInvoices, updateLastPaymentErrors, type InvoiceLineRow, type InvoiceRow } from './invoices.repository.js';
import type { Invoice } from './invoices.schemas.js';
import { toInvoice } from './invoices.service.js';
import { settleInvoicePayments } from './invoices.states.js';

/**
 * What collections reads and writes of invoices, for many at once — the automatic-charging job
 * records a billing run's batch of gateway outcomes in one transaction, a statement per step — and
 * for one: the single operations are the batch ones called with one item.
 */

/** Many invoice rows; `forUpdate` locks them, in id order. Missing ids are simply absent. */
export async function getInvoiceRows<C extends ReadCtx>(ctx: C, ids: string[], forUpdate?: LockFlag<C['tx']>): Promise<InvoiceRow[]> {
  return findInvoices<C['tx']>(ctx.tx, ctx.tenantId, [...new Set(ids)], forUpdate);
}

/** One invoice row (locked with `forUpdate`); 404 when missing. */
export async function getInvoiceRow<C extends ReadCtx>(ctx: C, id: string, forUpdate?: LockFlag<C['tx']>): Promise<InvoiceRow> {
  const [row] = await getInvoiceRows(ctx, [id], forUpdate);
  if (!row) throw errors.notFound('invoice');
  return row;
}

/** Invoices in the API shape, their lines read in one statement. */
export async function renderInvoices(ctx: Ctx, rows: InvoiceRow[]): Promise<Invoice[]> {
  if (rows.length === 0) return [];
  const lines = await linesOfInvoices(
    ctx.tx,
    ctx.tenantId,
    rows.map((r) => r.id),
  );
  const byInvoice = new Map<string, InvoiceLineRow[]>();
  for (const l of lines) {
    const list = byInvoice.get(l.invoice_id);
    if (list) list.push(l);
    else byInvoice.set(l.invoice_id, [l]);
  }
  return rows.map((r) => toInvoice(r, byInvoice.get(r.id) ?? []));
}

/**
 * applyToInvoice({ paid }) for many payments (one per invoice), clearing each invoice's
 * last_payment_error. Answers the updated rows and, rendered, the invoices the payments closed:
 * the CALLER emits `invoice.paid` for those (so they go out with its own events in one statement)
 * and books the journal entries. The caller must hold the invoices' locks.
 */
export async function applyPaymentsToInvoices(ctx: Ctx, items: { id: string; paid: number }[]): Promise<{ rows: InvoiceRow[]; closed: Invoice[] }> {
  const rows = await settleInvoicePayments(ctx.tx, ctx.tenantId, items, ctx.now);
  return {
    rows,
    closed: await renderInvoices(
      ctx,
      rows.filter((r) => r.status === 'paid'),
    ),
  };
}

/** One invoice in the API shape. */
export async function renderInvoice(ctx: Ctx, row: InvoiceRow): Promise<Invoice> {
  const [invoice] = await renderInvoices(ctx, [row]);
  return invoice!;
}

/** Records (or clears, with null) the last failed collection attempt of many invoices in one statement (DESIGN §11); answers the updated rows. */
export async function setLastPaymentErrors(ctx: Ctx, items: { id: string; error: { code: string; message: string } | null }[]): Promise<InvoiceRow[]> {
  return updateLastPaymentErrors(ctx.tx, ctx.tenantId, items, ctx.now);
}

/** setLastPaymentErrors for one invoice; 404 when missing. */
export async function setLastPaymentError(ctx: Ctx, id: string, error: { code: string; message: string } | null): Promise<InvoiceRow> {
  const [row] = await setLastPaymentErrors(ctx, [{ id, error }]);
  if (!row) throw errors.notFound('invoice');
  return row;
}
