import type { Ctx, ReadCtx } from '../../platform/context.js';
import { errors } from '../../platform/errors.js';
import type { Page } from '../../platform/http/envelope.js';
import { toIso } from '../../platform/time.js';
import type { Payment } from './payments.schemas.js';
import { findPayment, insertPayments, listPaymentRows, setTdsCertificate, type PaymentRow } from './payments.repository.js';

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
    tds_certificate: row.tds_certified_at
      ? {
          certificate_number: row.tds_certificate_number,
          section: row.tds_section,
          payment_code: row.tds_payment_code,
          certificate_form: row.tds_certificate_form ?? 'Form 16A',
          deducted_on: row.tds_deducted_on ?? '',
          recorded_at: toIso(row.tds_certified_at),
        }
      : null,
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}

type GatewayFields =
  | 'gateway'
  | 'gateway_payment_id'
  | 'attempt_id'
  | 'amount_refunded'
  | 'settled_at'
  | 'exchange_rate'
  | 'exchange_rate_source'
  | 'functional_amount'
  | CertificateFields;
type CertificateFields = 'tds_certificate_number' | 'tds_section' | 'tds_payment_code' | 'tds_certificate_form' | 'tds_deducted_on' | 'tds_certified_at';

/** The fields a new payment starts without: gateway ones for offline payments, and the TDS certificate (decision 0770). */
const NEW_PAYMENT_DEFAULTS: Pick<PaymentRow, GatewayFields> = {
  gateway: null,
  gateway_payment_id: null,
  attempt_id: null,
  amount_refunded: 0,
  settled_at: null,
  exchange_rate: null,
  exchange_rate_source: null,
  functional_amount: null,
  tds_certificate_number: null,
  tds_section: null,
  tds_payment_code: null,
  tds_certificate_form: null,
  tds_deducted_on: null,
  tds_certified_at: null,
};

/** savePayments for one payment; offline payments leave the gateway fields out. */
export async function savePayment(ctx: Ctx, input: Omit<PaymentRow, GatewayFields> & Partial<Pick<PaymentRow, GatewayFields>>): Promise<Payment> {
  const [payment] = await savePayments(ctx, [input]);
  return payment!;
}

/** Inserts payments in one statement (gateway payments recorded by a batch; one offline payment). */
export async function savePayments(ctx: Ctx, inputs: (Omit<PaymentRow, GatewayFields> & Partial<Pick<PaymentRow, GatewayFields>>)[]): Promise<Payment[]> {
  const rows: PaymentRow[] = inputs.map((input) => ({ ...NEW_PAYMENT_DEFAULTS, ...input }));
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

export type PaymentTdsCertificate = {
  certificate_number: string | null;
  section: string | null;
  payment_code: string | null;
  certificate_form: 'Form 16A' | 'Form 131';
  deducted_on: string;
};

/**
 * Records the certificate for the TDS a payment withheld (decision 0770). Guarded: only a payment
 * with TDS and no certificate yet; else 404, or 409 `payment_has_no_tds` / `tds_already_certified`.
 * No money moves: the TDS left the receivable when the payment was recorded.
 */
export async function certifyPaymentTds(ctx: Ctx, id: string, certificate: PaymentTdsCertificate): Promise<Payment> {
  const row = await setTdsCertificate(ctx.tx, ctx.tenantId, id, certificate, ctx.now);
  if (row) return toPayment(row);
  const current = await findPayment(ctx.tx, ctx.tenantId, id);
  if (!current) throw errors.notFound('payment');
  if (current.tds_amount === 0) throw errors.conflict('this payment withheld no TDS, so there is no certificate to record', 'payment_has_no_tds');
  throw errors.conflict(
    `the TDS of this payment is already certified (${current.tds_certificate_form ?? 'certificate'} ${current.tds_certificate_number ?? ''})`.trim(),
    'tds_already_certified',
  );
}

/**
 * Reads and writes of this module's own tables that flows and other modules call; the repository
 * itself is private to the module (index.ts exports operations and types only).
 */
export { findPayment, findPaymentForUpdate, addRefunded, unsettledGatewayPayments, markPaymentSettled } from './payments.repository.js';
