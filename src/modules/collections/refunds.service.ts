import type { ReadCtx } from '../../platform/context.js';
import { errors } from '../../platform/errors.js';
import type { Page } from '../../platform/http/envelope.js';
import { toIso } from '../../platform/time.js';
import type { Refund } from './collections.schemas.js';
import { findRefund, listRefundRows, sourcesOfRefunds, type RefundFilter, type RefundRow, type RefundSourceRow } from './collections.repository.js';

/** The API shape: the refund with the notes whose balance it paid out. */
export function toRefund(row: RefundRow, sources: RefundSourceRow[]): Refund {
  return {
    id: row.id,
    tenant_id: row.tenant_id,
    payment_id: row.payment_id,
    invoice_id: row.invoice_id,
    customer_id: row.customer_id,
    amount: row.amount,
    currency: row.currency,
    status: row.status,
    reason: row.reason,
    credit_note_id: row.credit_note_id,
    advance_id: row.advance_id,
    replaces_refund_id: row.replaces_refund_id ?? null,
    credit_note_issued: row.issued_credit_note,
    credit_notes: sources.filter((s) => s.refund_id === row.id).map((s) => ({ credit_note_id: s.credit_note_id, amount: Number(s.amount) })),
    gateway: row.gateway,
    failure_code: row.failure_code,
    failure_message: row.failure_message,
    paid_at: row.paid_at ? toIso(row.paid_at) : null,
    reference: row.reference,
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}

/** A refund as the API shows it (its sources read back). */
export async function renderRefund(ctx: ReadCtx, row: RefundRow): Promise<Refund> {
  return toRefund(row, await sourcesOfRefunds(ctx.tx, ctx.tenantId, [row.id]));
}

export async function getRefund(ctx: ReadCtx, id: string): Promise<Refund> {
  const row = await findRefund(ctx.tx, ctx.tenantId, id);
  if (!row) throw errors.notFound('refund');
  return renderRefund(ctx, row);
}

export async function listRefunds(ctx: ReadCtx, filter: RefundFilter, page: Page): Promise<{ refunds: Refund[]; total: number }> {
  const { rows, total } = await listRefundRows(ctx.tx, ctx.tenantId, filter, page);
  const sources = await sourcesOfRefunds(
    ctx.tx,
    ctx.tenantId,
    rows.map((r) => r.id),
  );
  return { refunds: rows.map((r) => toRefund(r, sources)), total };
}
