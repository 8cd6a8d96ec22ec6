/**
 * A webhook delivery's state is derived from its attempt record, never stored (SPEC §3):
 *
 *   delivered_at set                          → succeeded
 *   attempts >= MAX_ATTEMPTS, not delivered   → failed
 *   otherwise                                 → pending
 *
 * One attempt moves it:  pending × success → succeeded;  pending × failure → pending (next
 * attempt scheduled) or, on the 5th failure, failed. Finished deliveries never change again;
 * redelivery creates a new delivery. The repository's guarded UPDATE applies `recordAttempt`.
 */

export const MAX_ATTEMPTS = 5;

/** Nominal attempt times, measured from the delivery's creation (DESIGN §7). */
export const ATTEMPT_OFFSETS_MS = [0, 5_000, 5 * 60_000, 30 * 60_000, 2 * 60 * 60_000] as const;

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';
export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;

export function deliveryStatus(delivery: { delivered_at: Date | null; attempts: number }): DeliveryStatus {
  if (delivery.delivered_at !== null) return 'succeeded';
  return delivery.attempts >= MAX_ATTEMPTS ? 'failed' : 'pending';
}

export function isFinished(delivery: { delivered_at: Date | null; attempts: number }): boolean {
  return deliveryStatus(delivery) !== 'pending';
}

/**
 * The wait after the `attemptsMade`-th failed attempt: 5 s, 4 min 55 s, 25 min, 1 h 30 min — the
 * gaps between the nominal times. Counting each retry from the previous attempt (not from
 * creation) gives exactly the nominal times when the worker is on time, and never bunches retries
 * together when a delivery started late (a busy worker, or one held back by the ordering rule).
 * `null` after the last attempt.
 */
export function retryGapMs(attemptsMade: number): number | null {
  if (attemptsMade < 1 || attemptsMade >= MAX_ATTEMPTS) return null;
  return ATTEMPT_OFFSETS_MS[attemptsMade]! - ATTEMPT_OFFSETS_MS[attemptsMade - 1]!;
}

export type AttemptOutcome = { ok: true; statusCode: number } | { ok: false; statusCode: number | null; error: string };

/** The columns one attempt writes, given how many attempts came before it. */
export function recordAttempt(attemptsBefore: number, outcome: AttemptOutcome, at: Date) {
  const attempts = attemptsBefore + 1;
  if (outcome.ok) {
    return { attempts, last_status_code: outcome.statusCode, last_error: null, delivered_at: at, next_retry_at: null };
  }
  const gap = retryGapMs(attempts);
  return {
    attempts,
    last_status_code: outcome.statusCode,
    last_error: outcome.error.slice(0, 1000),
    delivered_at: null,
    next_retry_at: gap === null ? null : new Date(at.getTime() + gap),
  };
}
