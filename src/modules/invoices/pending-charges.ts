import type { Ctx, ReadCtx } from '../../platform/context.js';
import { errors } from '../../platform/errors.js';
import { emitEvent } from '../../platform/events/events.js';
import { newId } from '../../platform/ids.js';
import { toIso, toIsoOrNull } from '../../platform/time.js';
import { getCustomer } from '../customers/index.js';
import { gstRateBasisPoints } from '../tax/index.js';
import type { DraftLine } from './invoices.service.js';
import {
  deletePendingChargeRow,
  findPendingCharge,
  insertPendingCharge,
  listPendingChargeRows,
  lockPendingCharges,
  markChargesInvoiced,
  type PendingChargeRow,
} from './pending-charges.repository.js';

export type { PendingChargeRow };

export function toPendingCharge(row: PendingChargeRow) {
  return {
    id: row.id,
    object: 'pending_charge' as const,
    customer_id: row.customer_id,
    subscription_id: row.subscription_id,
    description: row.description,
    currency: row.currency,
    unit_amount: row.unit_amount,
    quantity: row.quantity,
    amount: row.unit_amount * row.quantity,
    hsn_code: row.hsn_code,
    tax_rate_bp: row.tax_rate_bp,
    status: row.status,
    invoice_id: row.invoice_id,
    created_at: toIso(row.created_at),
    invoiced_at: toIsoOrNull(row.invoiced_at),
  };
}

export type NewPendingCharge = {
  customerId: string;
  /** Only that subscription's invoice takes it; its currency (checked by the caller). */
  subscriptionId: string | null;
  description: string;
  currency: string;
  unitAmount: number;
  quantity: number;
  hsnCode: string;
  taxRateBp: number | null;
};

/**
 * Records a one-off charge for the next invoice. Its HSN/SAC must give a GST rate now (or the
 * charge name one): a code that cannot be taxed is refused here with a 400, not in a billing run
 * later, where it would stop the customer's renewal.
 */
export async function addPendingCharge(ctx: Ctx, input: NewPendingCharge): Promise<PendingChargeRow> {
  await getCustomer(ctx, input.customerId);
  gstRateBasisPoints(input.hsnCode, input.taxRateBp);
  if (!Number.isSafeInteger(input.unitAmount * input.quantity)) throw errors.invalidField('quantity', 'unit_amount × quantity is too large');
  const row = await insertPendingCharge(ctx.tx, {
    tenant_id: ctx.tenantId,
    id: newId(),
    customer_id: input.customerId,
    subscription_id: input.subscriptionId,
    description: input.description,
    currency: input.currency,
    unit_amount: input.unitAmount,
    quantity: input.quantity,
    hsn_code: input.hsnCode,
    tax_rate_bp: input.taxRateBp,
    status: 'pending',
    invoice_id: null,
    created_at: ctx.now,
    invoiced_at: null,
  });
  await emitEvent(ctx, 'pending_charge.created', toPendingCharge(row));
  return row;
}

export async function listPendingCharges(ctx: ReadCtx, customerId: string, status?: 'pending' | 'invoiced'): Promise<PendingChargeRow[]> {
  await getCustomer(ctx, customerId);
  return listPendingChargeRows(ctx.tx, ctx.tenantId, customerId, status);
}

/** Deletes a pending charge; one an invoice took is part of that invoice: 409 (credit the invoice instead). */
export async function deletePendingCharge(ctx: Ctx, customerId: string, id: string): Promise<PendingChargeRow> {
  const current = await findPendingCharge(ctx.tx, ctx.tenantId, customerId, id);
  if (!current) throw errors.notFound('pending charge');
  const deleted = current.status === 'pending' ? await deletePendingChargeRow(ctx.tx, ctx.tenantId, id) : undefined;
  if (!deleted) {
    throw errors.conflict(`the charge is on invoice ${current.invoice_id} already; issue a credit note on that invoice instead`, 'pending_charge_invoiced');
  }
  await emitEvent(ctx, 'pending_charge.deleted', toPendingCharge(deleted));
  return deleted;
}

/** One invoice about to be issued: whose charges it may take. */
export type ChargeTaker = { customerId: string; currency: string; subscriptionId: string | null };

/**
 * Which pending charges each invoice takes, in the callers' order, the charges locked until the
 * transaction ends: a subscription's charges go to that subscription's invoice; a customer's
 * (no subscription) to the first invoice of that customer in the charge's currency. A charge in
 * another currency waits for an invoice in its own.
 */
export async function takePendingCharges(ctx: Ctx, takers: ChargeTaker[]): Promise<PendingChargeRow[][]> {
  const taken: PendingChargeRow[][] = takers.map(() => []);
  const pending = await lockPendingCharges(ctx.tx, ctx.tenantId, [...new Set(takers.map((t) => t.customerId))]);
  for (const charge of pending) {
    const i = takers.findIndex(
      (t) =>
        t.customerId === charge.customer_id &&
        t.currency === charge.currency &&
        (charge.subscription_id === null || charge.subscription_id === t.subscriptionId),
    );
    if (i >= 0) taken[i]!.push(charge);
  }
  return taken;
}

/** A charge as its own invoice line, taxed by its own HSN/SAC (and rate, when it gave one). */
export function pendingChargeLine(charge: PendingChargeRow): DraftLine {
  return {
    description: charge.description,
    quantity: charge.quantity,
    unit_amount: charge.unit_amount,
    hsn_code: charge.hsn_code,
    tax_rate_bp: charge.tax_rate_bp,
  };
}

/** Marks the charges an invoice took as invoiced, in the invoice's transaction. */
export async function markPendingChargesInvoiced(ctx: Ctx, taken: { invoiceId: string; charges: PendingChargeRow[] }[]): Promise<void> {
  for (const { invoiceId, charges } of taken) {
    const ids = charges.map((c) => c.id);
    const marked = await markChargesInvoiced(ctx.tx, ctx.tenantId, ids, invoiceId, ctx.now);
    // The rows are locked since takePendingCharges: anything else is a bug, and rolls the invoice back.
    if (marked !== ids.length) throw new Error(`pending charges of invoice ${invoiceId}: ${marked} of ${ids.length} were still pending`);
  }
}
