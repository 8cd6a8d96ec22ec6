import type { Ctx, ReadCtx } from '../../platform/context.js';
import { errors } from '../../platform/errors.js';
import type { Page } from '../../platform/http/envelope.js';
import { toIso } from '../../platform/time.js';
import type { Payment } from './payments.schemas.js';
import { findPayment, insertPayments, listPaymentRows, type PaymentRow } from './payments.repository.js';

export function toPayment(row: PaymentRow): Payment {
  return {
    id: row.id,
    tenant_id: row.tenant_id,
    customer_id: row.customer_id,
    invoice_id: row.invoice_id,
    payment_type: row.payment_type,
    amount: row.amount,
    tds_amount: row.tds_amount,
    currency: row.currency,
    reference_number: row.reference_number,
    notes: row.notes,
    recorded_by: row.recorded_by,
    recorded_at: toIso(row.recorded_at),
    status: row.status,
    channel: row.channel,
    gateway: row.gateway ?? null,
    gateway_payment_id: row.gateway_payment_id ?? null,
    amount_refunded: row.amount_refunded ?? 0,
    exchange_rate: row.exchange_rate ?? null,
    exchange_rate_source: row.exchange_rate_source ?? null,
    functional_amount: row.functional_amount ?? null,
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}

type GatewayFields =
  'gateway' | 'gateway_payment_id' | 'attempt_id' | 'amount_refunded' | 'settled_at' | 'exchange_rate' | 'exchange_rate_source' | 'functional_amount';

/** savePayments for one payment; offline payments leave the gateway fields out. */
export async function savePayment(ctx: Ctx, input: Omit<PaymentRow, GatewayFields> & Partial<Pick<PaymentRow, GatewayFields>>): Promise<Payment> {
  const [payment] = await savePayments(ctx, [input]);
  return payment!;
}

/** Inserts payments in one statement (gateway payments recorded by a batch; one offline payment). */
export async function savePayments(ctx: Ctx, inputs: (Omit<PaymentRow, GatewayFields> & Partial<Pick<PaymentRow, GatewayFields>>)[]): Promise<Payment[]> {
  const rows: PaymentRow[] = inputs.map((input) => ({
    gateway: null,
    gateway_payment_id: null,
    attempt_id: null,
    amount_refunded: 0,
    settled_at: null,
    exchange_rate: null,
    exchange_rate_source: null,
    functional_amount: null,
    ...input,
  }));
  await insertPayments(ctx.tx, rows);
  return rows.map(toPayment);
}

export async function getPayment(ctx: ReadCtx, id: string): Promise<Payment> {
  const row = await findPayment(ctx.tx, ctx.tenantId, id);
  if (!row) throw errors.notFound('payment');
  return toPayment(row);
}

export async function listPayments(
  ctx: ReadCtx,
  filter: { customer_id?: string; invoice_id?: string; channel?: 'offline' },
  page: Page,
): Promise<{ payments: Payment[]; total: number }> {
  const { rows, total } = await listPaymentRows(ctx.tx, ctx.tenantId, filter, page);
  return { payments: rows.map(toPayment), total };
}

/**
 * Reads and writes of this module's own tables that flows and other modules call; the repository
 * itself is private to the module (index.ts exports operations and types only).
 */
export { findPayment, findPaymentForUpdate, addRefunded, unsettledGatewayPayments, markPaymentSettled } from './payments.repository.js';
