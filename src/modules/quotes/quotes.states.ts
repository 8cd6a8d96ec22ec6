import type { Updateable } from 'kysely';
import type { Tx } from '../../platform/db/schema.js';
import { errors } from '../../platform/errors.js';
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
  const t = quoteTransitions[event];
  let q = tx
    .updateTable('quotes')
    .set({ ...patch, status: t.to })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .where('status', 'in', [...t.from]);
  const { validAt, lapsedAt } = guard;
  if (validAt) q = q.where((eb) => eb.or([eb('valid_until', 'is', null), eb('valid_until', '>', validAt)]));
  if (lapsedAt) q = q.where('valid_until', '<=', lapsedAt);
  const row = await q.returningAll().executeTakeFirst();
  if (row) return row;
  const current = await tx.selectFrom('quotes').select(['status', 'valid_until']).where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
  if (!current) throw errors.notFound('quote');
  if (current.status === 'draft' && validAt) throw errors.conflict('the quote expired at its valid_until', 'quote_expired');
  throw errors.conflict(`cannot ${event} a quote whose status is ${current.status}`, `quote_${current.status}`);
}
