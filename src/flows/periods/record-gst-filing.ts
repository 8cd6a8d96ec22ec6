import type { Actor } from '../../platform/auth/actor.js';
import type { Ctx } from '../../platform/context.js';
import { getGstr1, getGstr3b } from '../../modules/gst-returns/index.js';
import { revalueMonth } from '../../modules/ledger/index.js';
import {
  isPeriodOpenAt,
  periodBounds,
  recordGstFiling,
  resolveBegunPeriod,
  type GstReturnKind,
  type Period,
  type RecordFilingBody,
} from '../../modules/periods/index.js';

/**
 * POST /v1/gst/returns/{gstr1|gstr3b}/{period}/filed: the return as generated now is what was
 * filed; it is stored with the filing and answered from then on, and the month closes.
 */
export async function recordReturnFiled(ctx: Ctx, kind: GstReturnKind, text: string, body: RecordFilingBody, actor: Actor): Promise<Period> {
  const { entity, period } = await resolveBegunPeriod(ctx, body.entity_id, text);
  const gstPeriod = `${period.slice(5)}${period.slice(0, 4)}`;
  const figures = kind === 'gstr1' ? await getGstr1(ctx, entity.id, gstPeriod) : await getGstr3b(ctx, entity.id, gstPeriod);
  // Filing closes an open month: its foreign receivables are revalued first, as a close does (decision 0450).
  const { to } = periodBounds(period, entity.time_zone);
  if ((await isPeriodOpenAt(ctx, entity, new Date(to.getTime() - 1))).open) await revalueMonth(ctx, entity, period);
  return recordGstFiling(ctx, entity, period, kind, body, figures, actor);
}
