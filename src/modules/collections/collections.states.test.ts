import { describe, expect, it } from 'vitest';
import { statusesBefore } from '../../platform/db/transition.js';
import { attemptTransitions, checkoutSessionTransitions, finalStatuses, refundTransitions } from './collections.states.js';

describe('the collections state tables', () => {
  it('payment attempts: only pending moves; succeeded, failed and canceled are final', () => {
    expect(finalStatuses(attemptTransitions, ['pending', 'succeeded', 'failed', 'canceled'])).toEqual(['succeeded', 'failed', 'canceled']);
    expect(statusesBefore(attemptTransitions, 'succeeded')).toEqual(['pending']);
    expect(statusesBefore(attemptTransitions, 'pending')).toEqual(['pending']);
  });

  it('refunds: pending moves; a succeeded refund can only fail later (the gateway took it back); failed is final', () => {
    expect(finalStatuses(refundTransitions, ['pending', 'succeeded', 'failed'])).toEqual(['failed']);
    expect(statusesBefore(refundTransitions, 'failed')).toEqual(['pending', 'succeeded']);
    expect(statusesBefore(refundTransitions, 'succeeded')).toEqual(['pending']);
  });

  it('checkout sessions: an open session completes or expires, once', () => {
    expect(finalStatuses(checkoutSessionTransitions, ['open', 'complete', 'expired'])).toEqual(['complete', 'expired']);
    expect(statusesBefore(checkoutSessionTransitions, 'complete')).toEqual(['open']);
  });

  it('a status no event leads to is a programming error', () => {
    expect(() => statusesBefore(checkoutSessionTransitions, 'open')).toThrow(/no transition leads to status open/);
  });
});
