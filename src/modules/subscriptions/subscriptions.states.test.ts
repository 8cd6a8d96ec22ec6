import { describe, expect, it } from 'vitest';
import { canTransition, subscriptionTransitions, type SubscriptionEvent } from './subscriptions.states.js';
import type { SubscriptionStatus } from './subscriptions.tables.js';

const statuses: SubscriptionStatus[] = ['active', 'trialing', 'paused', 'canceled', 'past_due', 'unpaid'];

// The whole table, written out once more by hand: which statuses each event may leave from.
const allowed: Record<SubscriptionEvent, SubscriptionStatus[]> = {
  renew: ['active', 'past_due', 'unpaid'],
  end_trial: ['trialing'],
  expire: ['active', 'trialing', 'past_due', 'unpaid'],
  mark_past_due: ['active', 'unpaid'],
  mark_unpaid: ['active', 'past_due'],
  recover: ['past_due', 'unpaid'],
  pause: ['active', 'past_due'],
  resume: ['paused'],
  cancel: ['active', 'trialing', 'past_due', 'paused', 'unpaid'],
  schedule_cancel: ['active', 'trialing', 'past_due', 'unpaid'],
  reactivate: ['active', 'trialing', 'past_due', 'unpaid'],
  change_plan: ['active', 'trialing', 'past_due'],
  change_quantity: ['active', 'trialing', 'past_due'],
  change_items: ['active', 'trialing', 'past_due'],
};

describe('subscription states', () => {
  describe('the transition table', () => {
    const cases = (Object.keys(allowed) as SubscriptionEvent[]).flatMap((event) =>
      statuses.map((status) => [event, status, allowed[event].includes(status)] as const),
    );
    it.each(cases)('%s from %s: %s', (event, status, expected) => {
      expect(canTransition(status, event)).toBe(expected);
    });

    it('never leaves canceled: it is final', () => {
      expect((Object.keys(subscriptionTransitions) as SubscriptionEvent[]).filter((e) => canTransition('canceled', e))).toEqual([]);
    });

    it('moves only to statuses of SPEC §3', () => {
      for (const t of Object.values(subscriptionTransitions) as { to?: string }[]) {
        if (t.to) expect(statuses).toContain(t.to);
      }
    });
  });
});
