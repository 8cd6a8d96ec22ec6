import type { ReadCtx } from '../../platform/context.js';
import { getCustomer } from '../../modules/customers/index.js';
import { getPrimaryEntity } from '../../modules/entities/index.js';
import { dailyUsage, type DailyUsage } from '../../modules/usage/index.js';

/**
 * GET /v1/usage/daily: a customer's usage of one metric per calendar day — of the given zone, else
 * the primary entity's (DESIGN §18: one set of day boundaries for every report). Another tenant's
 * customer is the same 404 as a missing one.
 */
export async function customerDailyUsage(
  ctx: ReadCtx,
  query: { customer_id: string; metric_code: string; from: string; to: string; time_zone?: string | undefined },
): Promise<DailyUsage> {
  await getCustomer(ctx, query.customer_id);
  const timeZone = query.time_zone ?? (await getPrimaryEntity(ctx)).time_zone;
  return dailyUsage(ctx, { customerId: query.customer_id, metricCode: query.metric_code, start: new Date(query.from), end: new Date(query.to), timeZone });
}
