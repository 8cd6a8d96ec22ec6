import type { Actor } from '../../platform/auth/actor.js';
import type { Ctx } from '../../platform/context.js';
import { KoshError } from '../../platform/errors.js';
import { draftInvoicesOfEntity } from '../../modules/invoices/index.js';
import { revalueMonth } from '../../modules/ledger/index.js';
import { closePeriod, periodBounds, resolveBegunPeriod, type Period } from '../../modules/periods/index.js';

/**
 * POST /v1/entities/{id}/periods/{period}/close: any month that has begun (the running one
 * too: later postings are then dated in the next month). Draft invoices made in the month are
 * listed in a 409: finalize or delete them first, or they would be issued into the next month.
 * Open foreign receivables are revalued at the month's closing rate before it closes (decision 0450).
 */
export async function closeEntityPeriod(ctx: Ctx, entityId: string, text: string, actor: Actor): Promise<Period> {
  const { entity, period } = await resolveBegunPeriod(ctx, entityId, text);
  const { from, to } = periodBounds(period, entity.time_zone);
  const drafts = await draftInvoicesOfEntity(ctx.tx, ctx.tenantId, entity.id, from, to);
  if (drafts.length > 0) {
    throw new KoshError('conflict', `${period} has ${drafts.length} draft invoice(s) not yet issued: ${drafts.map((d) => d.id).join(', ')}`, {
      reason: 'period_has_drafts',
      details: drafts.map((d) => ({ field: 'invoices', message: d.id })),
    });
  }
  await revalueMonth(ctx, entity, period);
  return closePeriod(ctx, entity, period, actor);
}
