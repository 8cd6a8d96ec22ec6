import type { Kysely } from 'kysely';
import type { Ctx } from '../../platform/context.js';
import type { DB } from '../../platform/db/schema.js';
import { emitEvent } from '../../platform/events/events.js';
import { toIso } from '../../platform/time.js';
import { getCreditNote } from '../../modules/credit-notes/index.js';
import { getCustomer } from '../../modules/customers/index.js';
import { renderInvoice, type InvoiceRow } from '../../modules/invoices/index.js';
import {
  addSubscriptionItemRecord,
  canTransition,
  getSubscriptionItemRow,
  lockForTransition,
  remainingDays,
  removeSubscriptionItemRecord,
  resolveSubscriptionPrice,
  setSubscriptionItemQuantity,
  toSubscription,
  toSubscriptionItem,
  transitionSubscription,
  type AddSubscriptionItemBody,
  type SubscriptionItem,
  type SubscriptionItemChange,
  type SubscriptionItemRow,
  type SubscriptionRow,
  type UpdateSubscriptionItemBody,
} from '../../modules/subscriptions/index.js';
import { subscriptionNow } from '../test-clocks/clock-time.js';
import { creditUnusedSubscriptionTime } from './credit-unused-subscription-time.js';
import { invoiceSubscriptionPeriod, proratedFixedCharge, proratedItemCharges } from './invoice-subscription-period.js';
import { previewInRollback } from './preview.js';
import { itemChargesOfSubscription } from './subscription-item-charges.js';

type ProrationBehavior = 'create_prorations' | 'none';

/** What an item change does to the items, under the subscription's row lock; answers the item as it now is (or was). */
type ItemMutation = (
  ctx: Ctx,
  row: SubscriptionRow,
) => Promise<{ item: SubscriptionItem; event: 'created' | 'updated' | 'deleted'; previous?: { quantity: number } }>;

/**
 * Every item change (add, quantity, remove) takes effect now, with the proration rules of a seat
 * change (change-subscription-quantity): with `create_prorations` the unused part of the current
 * period is credited to the day on the invoice that paid for it (creditUnusedSubscriptionTime: its
 * plan fee and every item on it, GST reversed pro rata there) and the rest of the period is
 * charged with the items as they now are — the plan's fee and one line per item, each unit price ×
 * remaining days ÷ period days, half-up — on one subscription_update invoice finalized with credit
 * (so the credit is spent on it first). That invoice then pays for the rest of the period, as the
 * renewal invoice did: a later change or a prorated cancel credits it in turn. With `none`, or
 * while trialing: only the items change; the next renewal bills them. "Now" is the customer's test
 * clock's time when it lives on one.
 */
async function changeItems(actionCtx: Ctx, id: string, behavior: ProrationBehavior, mutate: ItemMutation, preview: boolean): Promise<SubscriptionItemChange> {
  const ctx = await subscriptionNow(actionCtx, id);
  const row = await lockForTransition(ctx, id, 'change_items', (r) => canTransition(r.status, 'change_items'));
  const change = await mutate(ctx, row);
  const { plan, price } = await resolveSubscriptionPrice(ctx, row);
  const current = { start: row.current_period_start, end: row.current_period_end };
  const { remaining, total } = remainingDays(current, ctx.now);
  const prorated = behavior === 'create_prorations' && row.status !== 'trialing';
  let invoice: InvoiceRow | null = null;
  let credit: Awaited<ReturnType<typeof creditUnusedSubscriptionTime>> | null = null;
  let newCharge = 0;
  const patch: Parameters<typeof transitionSubscription>[4] = { updated_at: ctx.now };
  if (prorated) {
    credit = await creditUnusedSubscriptionTime(ctx, row, `Unused time on ${plan.name} and its add-ons (items changed)`);
    const base = price ? proratedFixedCharge(price, row.quantity, remaining, total) : null;
    const items = proratedItemCharges(await itemChargesOfSubscription(ctx, row.id), remaining, total);
    newCharge = (base?.amount ?? 0) + items.amount;
    if (newCharge > 0) {
      invoice = await invoiceSubscriptionPeriod(ctx, {
        subscription: row,
        plan,
        price,
        unitAmount: base?.unitAmount,
        items: items.items,
        customer: await getCustomer(ctx, row.customer_id),
        period: { start: ctx.now, end: row.current_period_end },
        billingReason: 'subscription_update',
      });
      patch.latest_invoice_id = invoice.id;
    }
  }
  const updated = await transitionSubscription(ctx.tx, ctx.tenantId, id, 'change_items', patch);
  const object = { ...change.item, ...(change.previous ? { previous_attributes: change.previous } : {}) };
  if (change.event === 'created') await emitEvent(ctx, 'subscription_item.created', object);
  else if (change.event === 'updated') await emitEvent(ctx, 'subscription_item.updated', object);
  else await emitEvent(ctx, 'subscription_item.deleted', object);
  return {
    preview,
    item: change.item,
    subscription: toSubscription(updated),
    invoice: invoice ? await renderInvoice(ctx, invoice) : null,
    credit_note: credit?.note ? await getCreditNote(ctx, credit.note.id) : null,
    proration: {
      prorated,
      changed_at: toIso(ctx.now),
      period_start: toIso(prorated ? ctx.now : current.start),
      period_end: toIso(current.end),
      remaining_days: remaining,
      period_days: total,
      unused_value: credit?.unusedValue ?? 0,
      unused_credit: credit?.amount ?? 0,
      credit_capped: credit?.capped ?? false,
      new_charge: newCharge,
    },
  };
}

/** POST /v1/subscriptions/{id}/items. */
export async function addSubscriptionItem(
  ctx: Ctx,
  id: string,
  input: Omit<AddSubscriptionItemBody, 'preview'>,
  preview = false,
): Promise<SubscriptionItemChange> {
  return changeItems(
    ctx,
    id,
    input.proration_behavior,
    async (at, row) => ({
      item: toSubscriptionItem(await addSubscriptionItemRecord(at, row, { priceId: input.price_id, quantity: input.quantity })),
      event: 'created',
    }),
    preview,
  );
}

/** PATCH /v1/subscriptions/{id}/items/{item_id}: another quantity. */
export async function updateSubscriptionItem(
  ctx: Ctx,
  id: string,
  itemId: string,
  input: Omit<UpdateSubscriptionItemBody, 'preview'>,
  preview = false,
): Promise<SubscriptionItemChange> {
  return changeItems(
    ctx,
    id,
    input.proration_behavior,
    async (at) => {
      const item: SubscriptionItemRow = await getSubscriptionItemRow(at, id, itemId);
      const changed = await setSubscriptionItemQuantity(at, item, input.quantity);
      return { item: toSubscriptionItem(changed), event: 'updated', previous: { quantity: item.quantity } };
    },
    preview,
  );
}

/** DELETE /v1/subscriptions/{id}/items/{item_id}. */
export async function removeSubscriptionItem(
  ctx: Ctx,
  id: string,
  itemId: string,
  behavior: ProrationBehavior,
  preview = false,
): Promise<SubscriptionItemChange> {
  return changeItems(
    ctx,
    id,
    behavior,
    async (at) => {
      const item = await getSubscriptionItemRow(at, id, itemId);
      await removeSubscriptionItemRecord(at, item);
      return { item: toSubscriptionItem(item), event: 'deleted' };
    },
    preview,
  );
}

/** `preview: true`: the same change in a transaction that is rolled back (nothing written, no number taken, no event). */
export async function previewSubscriptionItemChange(
  db: Kysely<DB>,
  tenantId: string,
  now: Date,
  action: (ctx: Ctx) => Promise<SubscriptionItemChange>,
): Promise<SubscriptionItemChange> {
  return previewInRollback(db, tenantId, now, action);
}
