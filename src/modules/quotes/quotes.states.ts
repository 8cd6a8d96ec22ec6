import type { Updateable } from 'kysely';
import type { Tx } from '../../platform/db/schema.js';
import { errors } from '../../platform/errors.js';
import { transition } from '../../platform/db/transition.js';
import type { QuotesTable, QuoteStatus } from './quotes.tables.js';
import type { QuoteRow } from './quotes.repository.js';

/**
 *   draft ──accept (before valid_until; the invoice is created)──> accepted
 *     │────decline──> declined
 *     └────expire (valid_until passed; the job)──> expired
 * accepted, declined and expired are final.
 */
export const quoteTransitions = {
  accept: { from: ['draft'], to: 'accepted' },
  decline: { from: ['draft'], to: 'declined' },
  expire: { from: ['draft'], to: 'expired' },
} as const satisfies Record<string, { from: readonly QuoteStatus[]; to: QuoteStatus }>;

export type QuoteEvent = keyof typeof quoteTransitions;

/**
 * The guarded transition. `validAt` adds "still valid at this instant" to the guard (accept);
 * `lapsedAt` adds "valid_until has passed" (expire). Zero rows → 404 or 409.
 */
export async function transitionQuote(
  tx: Tx,
  tenantId: string,
  id: string,
  event: QuoteEvent,
  patch: Updateable<QuotesTable> = {},
  guard: { validAt?: Date; lapsedAt?: Date } = {},
): Promise<QuoteRow> {
  const { validAt, lapsedAt } = guard;
  return transition<QuoteRow>(tx, {
    table: 'quotes',
    noun: 'quote',
    tenantId,
    id,
    event,
    transition: quoteTransitions[event],
    patch,
    guard: (q) => {
      let guarded = q;
      if (validAt) guarded = guarded.where((eb) => eb.or([eb('valid_until', 'is', null), eb('valid_until', '>', validAt)]));
      if (lapsedAt) guarded = guarded.where('valid_until', '<=', lapsedAt);
      return guarded;
    },
    refuse: (current) => (current.status === 'draft' && validAt ? errors.conflict('the quote expired at its valid_until', 'quote_expired') : undefined),
  });
}
