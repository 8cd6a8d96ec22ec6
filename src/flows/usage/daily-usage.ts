import { z } from 'zod';
import type { ReadCtx } from '../../platform/context.js';
import { fields } from '../../platform/http/envelope.js';
import { getCustomer } from '../../modules/customers/index.js';
import { getPrimaryEntity, timeZoneField } from '../../modules/entities/index.js';
import { dailyUsage, MAX_DAILY_USAGE_DAYS, type DailyUsage } from '../../modules/usage/index.js';

export const dailyUsageQuery = z
  .object({
    customer_id: z.uuid(),
    metric_code: z.string().min(1).max(100),
    from: fields.instant().describe('the first instant counted (a period start)').meta({ example: '2026-04-01T00:00:00+05:30' }),
    to: fields.instant().describe('the end, not counted (a period end)').meta({ example: '2026-05-01T00:00:00+05:30' }),
    time_zone: timeZoneField.optional().describe("the zone whose calendar days group the usage; default the primary entity's"),
  })
  .superRefine((q, ctx) => {
    const span = Date.parse(q.to) - Date.parse(q.from);
    if (!(span > 0)) ctx.addIssue({ code: 'custom', path: ['to'], message: 'must be after from' });
    else if (span > MAX_DAILY_USAGE_DAYS * 86_400_000)
      ctx.addIssue({ code: 'custom', path: ['to'], message: `at most ${MAX_DAILY_USAGE_DAYS} days after from` });
  });
export type DailyUsageQuery = z.infer<typeof dailyUsageQuery>;

/**
 * GET /v1/usage/daily: a customer's usage of one metric per calendar day — of the given zone, else
 * the primary entity's (DESIGN §18: one set of day boundaries for every report). Another tenant's
 * customer is the same 404 as a missing one.
 */
export async function customerDailyUsage(ctx: ReadCtx, query: DailyUsageQuery): Promise<DailyUsage> {
  await getCustomer(ctx, query.customer_id);
  const timeZone = query.time_zone ?? (await getPrimaryEntity(ctx)).time_zone;
  return dailyUsage(ctx, { customerId: query.customer_id, metricCode: query.metric_code, start: new Date(query.from), end: new Date(query.to), timeZone });
}
