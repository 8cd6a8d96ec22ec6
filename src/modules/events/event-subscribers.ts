import type { EventType } from './events.catalog.js';

/**
 * Who acts on each event type inside the emitting transaction, besides the outbox row every event
 * gets: the one declared table (issue #27). A listener is registered with `onEvent(listener,
 * subscription('<subscriber>'))` and the platform calls it only for the types listed for it here,
 * so this table is what runs, not a description of it. `Record<EventType, …>` makes a new catalog
 * type a compile error until it is given its row; `event-subscribers.test.ts` checks that every
 * emitted type is in it and that every subscriber named here is registered by the app.
 *
 * - `webhooks`: deliveries to the tenant's endpoints subscribed to the type (every type);
 * - `notifications`: the customer e-mails a tenant turned on (flows/notifications);
 * - `dunning`: starts, stops and learns from executions (flows/dunning);
 * - `referrals`: completes a referred customer's referral on payment (flows/referrals);
 * - `credits.top_up_grants`: a payment on a top-up gets its receipt voucher; a top-up invoice paid or
 *   voided activates or voids its grant;
 * - `credits.auto_top_up`: paid credit lowered below the threshold sells a top-up (flows/credits);
 * - `collections.credit_note_refunds`: a refund credit note decided refunds the payment;
 * - `einvoicing`: queues the IRP submission of an issued document;
 * - `finance.revenue`: the revenue recognition schedules (an analytics projection);
 * - `alerts`: re-evaluates the customer's spend and credit alerts;
 * - `entitlements`: moves the tenant's entitlement version on.
 */
export const SUBSCRIBERS = [
  'webhooks',
  'notifications',
  'dunning',
  'referrals',
  'credits.top_up_grants',
  'credits.auto_top_up',
  'collections.credit_note_refunds',
  'einvoicing',
  'finance.revenue',
  'alerts',
  'entitlements',
] as const;
export type Subscriber = (typeof SUBSCRIBERS)[number];

export const EVENT_SUBSCRIBERS = {
  'plan.created': ['webhooks'],
  'plan.updated': ['webhooks'],
  'price.created': ['webhooks'],
  'price.archived': ['webhooks'],
  'coupon.created': ['webhooks'],
  'coupon.updated': ['webhooks'],
  'retention_offer.created': ['webhooks'],
  'retention_offer.updated': ['webhooks'],
  'customer.created': ['webhooks'],
  'customer.updated': ['webhooks'],
  'entity.created': ['webhooks'],
  'dunning.payment_wall_activated': ['webhooks', 'entitlements'],
  'dunning.payment_wall_lifted': ['webhooks', 'entitlements'],
  'invoice.created': ['webhooks'],
  'invoice.finalized': ['webhooks', 'notifications', 'einvoicing', 'finance.revenue', 'alerts'],
  'invoice.sent': ['webhooks'],
  'invoice.paid': ['webhooks', 'dunning', 'referrals', 'credits.top_up_grants'],
  'invoice.payment_failed': ['webhooks', 'notifications', 'dunning'],
  'invoice.voided': ['webhooks', 'dunning', 'credits.top_up_grants', 'finance.revenue', 'alerts'],
  'invoice.marked_uncollectible': ['webhooks', 'dunning'],
  'payment.recorded': ['webhooks', 'notifications', 'credits.top_up_grants'],
  'payment.mismatch': ['webhooks'],
  'payment.tds_certified': ['webhooks'],
  'advance.received': ['webhooks'],
  'advance.applied': ['webhooks'],
  'advance.refunded': ['webhooks'],
  'refund.created': ['webhooks'],
  'refund.succeeded': ['webhooks'],
  'refund.failed': ['webhooks'],
  'credit_note.created': ['webhooks'],
  'credit_note.approved': ['webhooks', 'collections.credit_note_refunds'],
  'credit_note.rejected': ['webhooks', 'collections.credit_note_refunds'],
  'credit_note.issued': ['webhooks', 'notifications', 'einvoicing', 'finance.revenue'],
  'credit_note.applied': ['webhooks'],
  'credit_note.voided': ['webhooks', 'collections.credit_note_refunds'],
  'credit_note.expired': ['webhooks'],
  'credit_grant.created': ['webhooks'],
  'credit_grant.activated': ['webhooks', 'alerts'],
  'credit_grant.drawn': ['webhooks', 'credits.auto_top_up', 'alerts'],
  'credit_grant.expired': ['webhooks', 'credits.auto_top_up', 'alerts'],
  'credit_grant.voided': ['webhooks', 'credits.auto_top_up', 'alerts'],
  'feature.created': ['webhooks'],
  'entitlements.updated': ['webhooks'],
  'auto_top_up.failed': ['webhooks'],
  'test_clock.created': ['webhooks'],
  'test_clock.advancing': ['webhooks'],
  'test_clock.ready': ['webhooks'],
  'test_clock.internal_failure': ['webhooks'],
  'test_clock.deleted': ['webhooks'],
  'alert.triggered': ['webhooks', 'entitlements'],
  'alert.archived': ['webhooks', 'entitlements'],
  'pending_charge.created': ['webhooks'],
  'pending_charge.deleted': ['webhooks'],
  'einvoice.generated': ['webhooks'],
  'einvoice.failed': ['webhooks'],
  'einvoice.canceled': ['webhooks'],
  'einvoice.report_due': ['webhooks'],
  'period.closed': ['webhooks'],
  'period.reopened': ['webhooks'],
  'subscription.created': ['webhooks', 'entitlements'],
  'subscription.renewed': ['webhooks'],
  'subscription.plan_changed': ['webhooks', 'entitlements'],
  'subscription.updated': ['webhooks', 'entitlements'],
  'subscription.discount_applied': ['webhooks'],
  'subscription.retention_offer_accepted': ['webhooks'],
  'subscription.paused': ['webhooks', 'entitlements'],
  'subscription.resumed': ['webhooks', 'entitlements'],
  'subscription.canceled': ['webhooks', 'finance.revenue', 'entitlements'],
  'subscription.trial_ended': ['webhooks', 'entitlements'],
  'subscription.past_due': ['webhooks', 'entitlements'],
  'subscription.unpaid': ['webhooks', 'entitlements'],
  'subscription.recovered': ['webhooks', 'entitlements'],
  'subscription.cancel_scheduled': ['webhooks'],
  'subscription.reactivated': ['webhooks', 'entitlements'],
  'subscription_item.created': ['webhooks'],
  'subscription_item.updated': ['webhooks'],
  'subscription_item.deleted': ['webhooks'],
  'gift.purchased': ['webhooks'],
  'gift.redeemed': ['webhooks'],
  'gift.canceled': ['webhooks'],
  'referral.created': ['webhooks'],
  'referral.completed': ['webhooks'],
  'referral.expired': ['webhooks'],
  'referral.canceled': ['webhooks'],
  'quote.created': ['webhooks'],
  'quote.accepted': ['webhooks'],
  'quote.declined': ['webhooks'],
  'quote.expired': ['webhooks'],
  'accounting.connected': ['webhooks'],
  'accounting.disconnected': ['webhooks'],
  'accounting.connection_failed': ['webhooks'],
  'reconciliation.completed': ['webhooks'],
} as const satisfies Record<EventType, readonly Subscriber[]>;

/** The event types a subscriber acts on. */
export function typesOf(subscriber: Subscriber): EventType[] {
  return (Object.keys(EVENT_SUBSCRIBERS) as EventType[]).filter((type) => (EVENT_SUBSCRIBERS[type] as readonly Subscriber[]).includes(subscriber));
}

/** What `onEvent` takes: the subscriber's name and the types this table gives it. */
export function subscription(subscriber: Subscriber): { subscriber: Subscriber; types: EventType[] } {
  return { subscriber, types: typesOf(subscriber) };
}
