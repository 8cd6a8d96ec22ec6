import type { Kysely } from 'kysely';
import type { Ctx } from '../../platform/context.js';
import type { DB } from '../../platform/db/schema.js';
import { errors } from '../../platform/errors.js';
import { emitEvent } from '../../platform/events/events.js';
import { toIso } from '../../platform/time.js';
import { getCreditNote } from '../../modules/credit-notes/index.js';
import { getCustomer } from '../../modules/customers/index.js';
import { renderInvoice, type InvoiceRow } from '../../modules/invoices/index.js';
import {
  assertChargeable,
  canTransition,
  lockForTransition,
  remainingDays,
  resolveSubscriptionPrice,
  toSubscription,
  transitionSubscription,
  type SubscriptionUpdate,
  type UpdateSubscriptionBody,
} from '../../modules/subscriptions/index.js';
import { creditUnusedSubscriptionTime } from './credit-unused-subscription-time.js';
import { invoiceSubscriptionPeriod, proratedFixedCharge, proratedItemCharges } from './invoice-subscription-period.js';
import { itemChargesOfSubscription } from './subscription-item-charges.js';
import { previewInRollback } from './preview.js';

/**
 * PATCH /v1/subscriptions/{id} `{ quantity }`: seats, changed now. With `create_prorations` (the
 * default) it is a plan change to the same plan at another quantity (change-subscription-plan):
 * the unused part of the current period is credited to the day on the invoice that paid for it
 * (creditUnusedSubscriptionTime: GST reversed pro rata there) and the rest of the period is charged
 * at the new quantity (unit price × remaining days ÷ period days, half-up, × quantity) on one
 * subscription_update invoice, discounted like any invoice of the subscription and finalized with
 * credit, so the credit is spent on it first. Fewer seats: the credit exceeds the charge and the
 * rest stays on the customer's balance. With `none`, or while trialing: only the quantity changes;
 * the next renewal bills it.
 */
export async function changeSubscriptionQuantity(
  ctx: Ctx,
  id: string,
  input: Omit<UpdateSubscriptionBody, 'preview'>,
  preview = false,
): Promise<SubscriptionUpdate> {
  const row = await lockForTransition(ctx, id, 'change_quantity', (r) => canTransition(r.status, 'change_quantity'));
  if (input.quantity === row.quantity) throw errors.invalidField('quantity', `the subscription already has quantity ${row.quantity}`);
  const { plan, price } = await resolveSubscriptionPrice(ctx, row);
  if (!price) throw errors.invalidField('quantity', `plan ${plan.code} has no fixed price: a pure usage subscription bills no quantity`);
  assertChargeable(price, input.quantity);
  const current = { start: row.current_period_start, end: row.current_period_end };
  const { remaining, total } = remainingDays(current, ctx.now);
  const prorated = input.proration_behavior === 'create_prorations' && row.status !== 'trialing';
  let invoice: InvoiceRow | null = null;
  let creditNoteId: string | null = null;
  let unusedCredit = 0;
  let unusedValue = 0;
  let creditCapped = false;
  let unitCharge = 0;
  let chargeTotal = 0;
  const patch: Parameters<typeof transitionSubscription>[4] = { quantity: input.quantity, updated_at: ctx.now };
  if (prorated) {
    const credit = await creditUnusedSubscriptionTime(ctx, row, `Unused time on ${row.quantity} × ${plan.name} (changed to ${input.quantity})`);
    creditNoteId = credit.note?.id ?? null;
    unusedCredit = credit.amount;
    unusedValue = credit.unusedValue;
    creditCapped = credit.capped;
    ({ unitAmount: unitCharge, amount: chargeTotal } = proratedFixedCharge(price, input.quantity, remaining, total));
    // The credit covered the add-ons on the invoice too (decision 0470): the rest of the period charges them again.
    const items = proratedItemCharges(await itemChargesOfSubscription(ctx, row.id), remaining, total);
    if (unitCharge > 0 || items.amount > 0) {
      invoice = await invoiceSubscriptionPeriod(ctx, {
        subscription: { ...row, quantity: input.quantity },
        plan,
        price,
        customer: await getCustomer(ctx, row.customer_id),
        period: { start: ctx.now, end: row.current_period_end },
        billingReason: 'subscription_update',
        unitAmount: unitCharge,
        items: items.items,
      });
      patch.latest_invoice_id = invoice.id;
    }
  }
  const updated = await transitionSubscription(ctx.tx, ctx.tenantId, id, 'change_quantity', patch);
  await emitEvent(ctx, 'subscription.updated', { ...toSubscription(updated), previous_attributes: { quantity: row.quantity } });
  return {
    ...toSubscription(updated),
    preview,
    invoice: invoice ? await renderInvoice(ctx, invoice) : null,
    credit_note: creditNoteId ? await getCreditNote(ctx, creditNoteId) : null,
    proration: {
      prorated,
      changed_at: toIso(ctx.now),
      period_start: toIso(prorated ? ctx.now : current.start),
      period_end: toIso(current.end),
      remaining_days: remaining,
      period_days: total,
      unused_value: unusedValue,
      unused_credit: unusedCredit,
      credit_capped: creditCapped,
      new_charge: chargeTotal,
      previous_quantity: row.quantity,
      quantity: input.quantity,
    },
  };
}

/** `preview: true`: the same change in a transaction that is rolled back. */
export async function previewSubscriptionQuantityChange(
  db: Kysely<DB>,
  tenantId: string,
  now: Date,
  id: string,
  input: Omit<UpdateSubscriptionBody, 'preview'>,
): Promise<SubscriptionUpdate> {
  return previewInRollback(db, tenantId, now, (ctx) => changeSubscriptionQuantity(ctx, id, input, true));
}
