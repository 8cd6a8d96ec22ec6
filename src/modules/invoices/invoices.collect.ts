import type { Ctx } from '../../platform/context.js';
import { findInvoices, linesOfInvoices, updateLastPaymentErrors, type InvoiceLineRow, type InvoiceRow } from './invoices.repository.js';
import type { Invoice } from './invoices.schemas.js';
import { toInvoice } from './invoices.service.js';
import { settleInvoicePayments } from './invoices.states.js';

/**
 * What collections does to many invoices at once — the automatic-charging job records a billing
 * run's batch of gateway outcomes in one transaction — with the same effect row for row as
 * getInvoiceRow / applyToInvoice / setLastPaymentError / renderInvoice one at a time, in a
 * statement per step instead of one per invoice.
 */

/** Many invoice rows; `forUpdate` locks them, in id order. Missing ids are simply absent. */
export async function getInvoiceRows(ctx: Ctx, ids: string[], forUpdate = false): Promise<InvoiceRow[]> {
  return findInvoices(ctx.tx, ctx.tenantId, [...new Set(ids)], forUpdate);
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

/** setLastPaymentError for many invoices in one statement; answers the updated rows. */
export async function setLastPaymentErrors(ctx: Ctx, items: { id: string; error: { code: string; message: string } }[]): Promise<InvoiceRow[]> {
  return updateLastPaymentErrors(ctx.tx, ctx.tenantId, items, ctx.now);
}
