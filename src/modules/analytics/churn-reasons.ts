import { z } from 'zod';
import type { ReadCtx } from '../../platform/context.js';
import { toIso } from '../../platform/time.js';
import { rangeOf, reportZone } from '../finance/index.js';
import { CANCELLATION_REASONS } from '../subscriptions/index.js';

/** A date (YYYY-MM-DD) or an RFC 3339 date-time. */
const DATE_OR_TIME = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}))?$/;
const dateOrTime = z.string().regex(DATE_OR_TIME, 'must be a date like 2026-04-01 or an RFC 3339 date-time like 2026-04-01T09:30:00Z');

export const churnReasonsQuery = z.object({
  from: dateOrTime.describe("a date (inclusive, in the primary entity's time zone) or an RFC 3339 date-time"),
  to: dateOrTime.describe("a date (inclusive, in the primary entity's time zone) or an RFC 3339 date-time (exclusive)"),
});

const reasonKey = z.enum([...CANCELLATION_REASONS, 'unspecified']);

export const churnReasonsSchema = z
  .object({
    from: z.string(),
    to: z.string().describe('exclusive'),
    total: z.int().describe('cancellations requested in the range (scheduled or immediate; a reactivated one no longer counts)'),
    reasons: z
      .array(
        z.object({
          reason: reasonKey,
          count: z.int(),
          offers_accepted: z.int().describe('customers who started to cancel for this reason and accepted a retention offer instead (not counted in count)'),
        }),
      )
      .describe('every reason, most frequent first (ties in list order); unspecified: no reason given'),
    offers_accepted: z.int().describe('retention offers accepted in the range (decision 0560): subscriptions kept instead of cancelled'),
    feedback: z
      .array(
        z.object({
          subscription_id: z.uuid(),
          customer_id: z.uuid(),
          reason: reasonKey,
          feedback: z.string(),
          canceled_at: z.string(),
        }),
      )
      .describe('the newest 100 cancellations that came with feedback'),
  })
  .meta({ id: 'ChurnReasons' });

/**
 * GET /v1/analytics/churn-reasons: the cancellations requested in [from, to) by reason, and the
 * customers' own words. Counted on `canceled_at` (when the customer asked), so a cancellation at
 * period end counts when it was requested, once; a reactivation clears it.
 */
export async function getChurnReasons(ctx: ReadCtx, query: z.infer<typeof churnReasonsQuery>): Promise<z.infer<typeof churnReasonsSchema>> {
  const { from, to } = rangeOf(query, await reportZone(ctx, undefined));
  const rows = await ctx.tx
    .selectFrom('subscriptions')
    .select(['id', 'customer_id', 'cancellation_reason', 'cancellation_feedback', 'canceled_at'])
    .where('tenant_id', '=', ctx.tenantId)
    .where('canceled_at', '>=', from!)
    .where('canceled_at', '<', to!)
    .orderBy('canceled_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
  const accepted = await ctx.tx
    .selectFrom('retention_offer_acceptances')
    .select((eb) => ['reason', eb.fn.countAll<number>().as('n')])
    .where('tenant_id', '=', ctx.tenantId)
    .where('accepted_at', '>=', from!)
    .where('accepted_at', '<', to!)
    .groupBy('reason')
    .execute();
  const kept = new Map<string, number>(accepted.map((r) => [r.reason, Number(r.n)]));
  const counts = new Map<string, number>([...CANCELLATION_REASONS, 'unspecified'].map((r) => [r, 0]));
  for (const row of rows) {
    const key = row.cancellation_reason ?? 'unspecified';
    counts.set(key, counts.get(key)! + 1);
  }
  return {
    from: toIso(from!),
    to: toIso(to!),
    total: rows.length,
    reasons: [...counts.entries()]
      .map(([reason, count]) => ({ reason: reason as z.infer<typeof reasonKey>, count, offers_accepted: kept.get(reason) ?? 0 }))
      .sort((a, b) => b.count - a.count),
    offers_accepted: [...kept.values()].reduce((a, b) => a + b, 0),
    feedback: rows
      .filter((r) => r.cancellation_feedback)
      .slice(0, 100)
      .map((r) => ({
        subscription_id: r.id,
        customer_id: r.customer_id,
        reason: r.cancellation_reason ?? 'unspecified',
        feedback: r.cancellation_feedback!,
        canceled_at: toIso(r.canceled_at!),
      })),
  };
}
