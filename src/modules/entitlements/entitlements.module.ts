import type { KoshModule } from '../../app-deps.js';
import { onEvent, type EventPayload } from '../../platform/events/events.js';
import type { Ctx } from '../../platform/context.js';
import { recordEntitlementChange } from './entitlements.repository.js';
import { announcePauseChange } from './entitlements.service.js';
import { subscription } from '../events/index.js';

/** Events after which some customer's entitlements or its payment wall may differ (renewals do not change them). */
const CHANGES = new Set([
  'subscription.created',
  'subscription.plan_changed',
  'subscription.updated',
  'subscription.paused',
  'subscription.resumed',
  'subscription.canceled',
  'subscription.trial_ended',
  'subscription.past_due',
  'subscription.unpaid',
  'subscription.recovered',
  'subscription.reactivated',
  'dunning.payment_wall_activated',
  'dunning.payment_wall_lifted',
  'alert.triggered',
  // An archived block alert lifts its block at once (decision 0570), not when a cached answer expires.
  'alert.archived',
]);

/** Changes announced with `entitlements.updated` (what the customer may use now): a pause takes the plan's features away, a resume gives them back. */
const ANNOUNCED = new Set(['subscription.paused', 'subscription.resumed']);

async function announce(ctx: Ctx, event: EventPayload): Promise<void> {
  if (!ANNOUNCED.has(event.type)) return;
  const sub = event.data.object as { id?: unknown; customer_id?: unknown };
  if (typeof sub.id !== 'string' || typeof sub.customer_id !== 'string') return;
  await announcePauseChange(ctx, event.type as 'subscription.paused' | 'subscription.resumed', { id: sub.id, customer_id: sub.customer_id });
}

/** In the emitting transaction: the tenant's entitlement version moves on with the change (one deferred insert). */
async function recordChange(ctx: Ctx, event: EventPayload): Promise<void> {
  if (CHANGES.has(event.type)) await recordEntitlementChange(ctx.tx, [ctx.tenantId], ctx.now);
  await announce(ctx, event);
}
recordChange.batch = async (ctx: Ctx, events: EventPayload[]): Promise<void> => {
  if (events.some((e) => CHANGES.has(e.type))) await recordEntitlementChange(ctx.tx, [ctx.tenantId], ctx.now);
  for (const e of events) await announce(ctx, e);
};

export const entitlementsModule: KoshModule = {
  name: 'entitlements',
  init: () => onEvent(recordChange, subscription('entitlements')),
};
