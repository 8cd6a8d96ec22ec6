import type { Ctx } from '../../platform/context.js';
import type { EventPayload } from '../../platform/events/events.js';
import { newId } from '../../platform/ids.js';
import { emitEvent } from '../../platform/events/events.js';
import { findPaymentMethod, getCustomerPaymentMethod } from '../../modules/collections/index.js';
import {
  autoTopUpsDue,
  claimAutoTopUpRow,
  recordAutoTopUpInvoice,
  saveAutoTopUp,
  toAutoTopUp,
  type AutoTopUpRow,
  type CreateCreditGrantBody,
} from '../../modules/credits/index.js';
import { getInvoiceRow } from '../../modules/invoices/index.js';
import { scheduleAutomaticCharges } from '../collections/collect-invoice-payment.js';
import { createCreditGrant } from './create-credit-grant.js';

/** PUT /v1/customers/{id}/auto-top-up: a named payment method must be one of the customer's active ones (404 otherwise). */
export async function setAutoTopUp(ctx: Ctx, customerId: string, body: Parameters<typeof saveAutoTopUp>[2]) {
  if (body.payment_method_id) await getCustomerPaymentMethod(ctx, customerId, body.payment_method_id);
  return saveAutoTopUp(ctx, customerId, body);
}

const LOWERING = new Set(['credit_grant.drawn', 'credit_grant.expired', 'credit_grant.voided']);

/**
 * Inside the transaction that lowered a customer's paid credit (a draw-down at finalization, an
 * expiry, a void): when the balance is now below the customer's auto top-up threshold, a paid
 * grant of the set amount is sold — its top-up invoice finalized `charge_automatically` and its
 * charge job queued (after commit; a mandate debit is announced 24 h ahead, as every automatic
 * charge is). Never two in flight: the setting is claimed first (`in_flight_invoice_id`, a guarded
 * UPDATE under the row lock) and released when that top-up invoice is paid or voided.
 * A setting that names a payment method is charged to that method only (the grant keeps it, the
 * charge job reads it): when it is detached or revoked, no top-up is bought and
 * `auto_top_up.failed` says why — another of the customer's methods is never charged instead.
 */
export async function topUpWhenLow(ctx: Ctx, events: EventPayload[]): Promise<void> {
  const customers = new Set<string>();
  for (const e of events) {
    if (!LOWERING.has(e.type)) continue;
    const o = e.data.object as { customer_id?: unknown; category?: unknown };
    if (o.category === 'paid' && typeof o.customer_id === 'string') customers.add(o.customer_id);
  }
  if (customers.size === 0) return;
  for (const setting of await autoTopUpsDue(ctx, [...customers])) {
    if (!(await namedMethodUsable(ctx, setting))) continue;
    const placeholder = newId();
    if (!(await claimAutoTopUpRow(ctx, setting.customer_id, placeholder))) continue;
    const body: CreateCreditGrantBody = { category: 'paid', amount: setting.amount, currency: setting.currency, priority: 50, name: 'Auto top-up' };
    const grant = await createCreditGrant(ctx, setting.customer_id, body, {
      collectionMethod: 'charge_automatically',
      paymentMethodId: setting.payment_method_id,
    });
    await recordAutoTopUpInvoice(ctx, setting.customer_id, placeholder, grant.invoice_id!);
    await scheduleAutomaticCharges(ctx, [await getInvoiceRow(ctx, grant.invoice_id!)]);
  }
}

/** The setting names no method, or one still active on the customer; otherwise auto_top_up.failed (nothing is bought). */
async function namedMethodUsable(ctx: Ctx, setting: AutoTopUpRow): Promise<boolean> {
  if (!setting.payment_method_id) return true;
  const pm = await findPaymentMethod(ctx.tx, ctx.tenantId, setting.payment_method_id);
  if (pm && pm.customer_id === setting.customer_id && pm.status === 'active') return true;
  await emitEvent(ctx, 'auto_top_up.failed', {
    id: setting.customer_id,
    object: 'auto_top_up',
    ...toAutoTopUp(setting),
    failure_code: 'payment_method_unavailable',
    failure_message: `the auto top-up's payment method ${setting.payment_method_id} is ${pm?.status ?? 'gone'}; no other method is charged`,
  });
  return false;
}

export const autoTopUpListener = Object.assign((ctx: Ctx, event: EventPayload) => topUpWhenLow(ctx, [event]), { batch: topUpWhenLow });
