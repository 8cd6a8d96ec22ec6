import type { KoshModule } from '../../app-deps.js';
import { onEvent, type EventPayload } from '../../platform/events/events.js';
import type { Ctx } from '../../platform/context.js';
import { recordEntitlementChange } from './entitlements.repository.js';
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
]);

/** In the emitting transaction: the tenant's entitlement version moves on with the change (one deferred insert). */
async function recordChange(ctx: Ctx, event: EventPayload): Promise<void> {
  if (CHANGES.has(event.type)) await recordEntitlementChange(ctx.tx, [ctx.tenantId], ctx.now);
}
recordChange.batch = async (ctx: Ctx, events: EventPayload[]): Promise<void> => {
  if (events.some((e) => CHANGES.has(e.type))) await recordEntitlementChange(ctx.tx, [ctx.tenantId], ctx.now);
};

export const entitlementsModule: KoshModule = {
  name: 'entitlements',
  init: () => onEvent(recordChange, subscription('entitlements')),
};
