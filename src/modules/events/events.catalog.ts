/**
 * Every event type Kosh emits or has planned, in the order docs/events.md lists them. The doc is
 * the reference for humans (what emits each type, its payload); this list is what the API
 * validates against (webhook endpoint filters, `GET /v1/events?type=`). A test holds the two,
 * and every `emitEvent(ctx, '<type>', …)` in src/, to agreement.
 */
export const EVENT_TYPES = [
  'plan.created',
  'plan.updated',
  'price.created',
  'price.archived',
  'coupon.created',
  'coupon.updated',
  'retention_offer.created',
  'retention_offer.updated',
  'customer.created',
  'customer.updated',
  'entity.created',
  'dunning.payment_wall_activated',
  'dunning.payment_wall_lifted',
  'invoice.created',
  'invoice.finalized',
  'invoice.sent',
  'invoice.paid',
  'invoice.payment_failed',
  'invoice.voided',
  'invoice.marked_uncollectible',
  'payment.recorded',
  'payment.mismatch',
  'advance.received',
  'advance.applied',
  'advance.refunded',
  'refund.created',
  'refund.succeeded',
  'refund.failed',
  'credit_note.created',
  'credit_note.approved',
  'credit_note.rejected',
  'credit_note.issued',
  'credit_note.applied',
  'credit_note.voided',
  'credit_note.expired',
  'credit_grant.created',
  'credit_grant.activated',
  'credit_grant.drawn',
  'credit_grant.expired',
  'credit_grant.voided',
  'auto_top_up.failed',
  'feature.created',
  'entitlements.updated',
  'alert.triggered',
  'alert.archived',
  'pending_charge.created',
  'pending_charge.deleted',
  'einvoice.generated',
  'einvoice.failed',
  'einvoice.canceled',
  'einvoice.report_due',
  'period.closed',
  'period.reopened',
  'subscription.created',
  'subscription.renewed',
  'subscription.plan_changed',
  'subscription.updated',
  'subscription.discount_applied',
  'subscription.retention_offer_accepted',
  'subscription.paused',
  'subscription.resumed',
  'subscription.canceled',
  'subscription.trial_ended',
  'subscription.past_due',
  'subscription.unpaid',
  'subscription.recovered',
  'subscription.cancel_scheduled',
  'subscription.reactivated',
  'subscription_item.created',
  'subscription_item.updated',
  'subscription_item.deleted',
  'gift.purchased',
  'gift.redeemed',
  'gift.canceled',
  'referral.created',
  'referral.completed',
  'referral.expired',
  'referral.canceled',
  'quote.created',
  'quote.accepted',
  'quote.declined',
  'quote.expired',
  'accounting.connected',
  'accounting.disconnected',
  'accounting.connection_failed',
  'reconciliation.completed',
  'test_clock.created',
  'test_clock.advancing',
  'test_clock.ready',
  'test_clock.internal_failure',
  'test_clock.deleted',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

// `emitEvent(ctx, type, …)` accepts exactly these types (platform/events/events.ts).
declare module '../../platform/events/events.js' {
  interface EventCatalog {
    types: (typeof EVENT_TYPES)[number];
  }
}

const known: ReadonlySet<string> = new Set(EVENT_TYPES);

export function isEventType(value: string): value is EventType {
  return known.has(value);
}
