import type { Ctx } from '../../platform/context.js';
import { addPrice, type CreatePriceBody, type Plan } from '../../modules/plans/index.js';
import { assertPlanMeteredOnce } from '../../modules/subscriptions/index.js';
import { assertDimensionKeysDeclared } from './price-dimensions.js';

/**
 * POST /v1/plans/{id}/prices: the plan's new price, refused (409 `metric_already_metered`) when a
 * metered price would make two running subscriptions of one customer bill the same events
 * (decision 0190), or when a dimension price matches on a key its metric does not declare (400,
 * decision 0560). All in the action's transaction: a refusal leaves the plan as it was.
 */
export async function addPlanPrice(ctx: Ctx, planId: string, input: CreatePriceBody): Promise<Plan> {
  await assertDimensionKeysDeclared(ctx, [{ at: '', price: input }]);
  const plan = await addPrice(ctx, planId, input);
  if (input.metric_code) await assertPlanMeteredOnce(ctx, planId, input.metric_code, input.currency);
  return plan;
}
